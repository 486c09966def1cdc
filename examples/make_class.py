"""Generate a synthetic class of submissions, laid out the way nbgrader collects them.

    python examples/make_class.py OUTDIR [--assignments ps1 ps2 ps3] [--students 30] [--seed 0]

writes ``OUTDIR/submitted/<student>/<assignment>/<assignment>.ipynb`` for every student and
assignment, and ``OUTDIR/roster.json`` mapping each student to ``{assignment: archetype}``.

Every notebook starts as the released notebook (``assignments/<a>/<a>.ipynb``, cell ids and
nbgrader metadata untouched, as a student's saved copy would be) with each solution cell
filled with the reference answer: the matching cell of ``source/<a>/<a>.ipynb`` minus its
``### BEGIN/END SOLUTION`` lines. Then the student's archetype edits those answers:

- ``correct``, ``correct_<style>``: full marks, in different styles (log-sum-exp, einsum, ...);
- ``partial:<ex>[+<ex>]``: those exercises left as the released stub;
- ``<misconception id>:<ex>``: one realistic edit of the right answer in that exercise
  (ids as in CONTRACTS.md); an exercise that calls it (ps1's functions call ``softmax``,
  ps2's ``attention_with_biases`` calls ``scaled_dot_product_attention``) inherits the mistake;
- ``timeout:<ex>``, ``crashed:<ex>``: a loop that never ends (and swallows Ctrl-C), a crash;
- ``runtime_warning:<ex>``, ``prints_a_lot:<ex>``: right answers that warn or print a lot;
- ``malformed``: right answers in a notebook file cut off mid-JSON.

The mix is chosen per assignment from ``--seed``: one student per misconception and per
special archetype (a few common misconceptions twice), then about two correct students for
every partly-right one. Import it as ``from make_class import make_class`` with
``examples/`` on ``sys.path``.
"""
from __future__ import annotations

import argparse
import ast
import copy
import itertools
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
MISCONCEPTIONS = {  # CONTRACTS.md's ids that a one-line edit of a right answer can make
    "scale_by_dk", "missing_scale", "softmax_wrong_axis", "unstable_softmax", "values_not_projected",
    "qkv_split_order", "weights_transposed", "mask_wrong_direction", "missing_mask",
    "shape_tq_tk_swapped", "attends_to_self"}


# ---------------------------------------------------------------- the course's notebooks

def read_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source_of(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def solution_cells(nb: dict) -> dict[str, dict]:
    """Exercise name -> its solution cell (nbgrader grade_id ``<exercise>_code``)."""
    cells = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id", "").endswith("_code"):
            cells[meta["grade_id"][: -len("_code")]] = cell
    return cells


def reference_answers(assignment: str) -> dict[str, str]:
    """Exercise name -> the instructor's solution cell without the two marker lines."""
    nb = read_notebook(ROOT / "source" / assignment / f"{assignment}.ipynb")
    return {ex: "\n".join(line for line in source_of(cell).splitlines()
                          if line.strip() not in MARKERS)
            for ex, cell in solution_cells(nb).items()}


# ---------------------------------------------------------------- editing answers

@dataclass
class Work:
    """What one student hands in for one assignment, before it is written to disk."""
    answers: dict[str, str]  # exercise -> the code in its solution cell
    stubs: dict[str, str]  # exercise -> the released, untouched stub
    truncated: bool = False  # the file was saved only part-way (broken JSON)


Edit = Callable[[Work], None]


def _replace(work: Work, exercise: str, old: str, new: str) -> None:
    code = work.answers[exercise]
    assert code.count(old) == 1, f"{exercise}: expected {old!r} exactly once in\n{code}"
    work.answers[exercise] = code.replace(old, new)


def swap(exercise: str, *pairs: str) -> Edit:
    """Replace text in an exercise's answer: swap(ex, old1, new1, old2, new2, ...)."""
    assert len(pairs) % 2 == 0

    def edit(work: Work) -> None:
        for old, new in zip(pairs[::2], pairs[1::2]):
            _replace(work, exercise, old, new)
    return edit


def rewrite_line(exercise: str, contains: str, new: str) -> Edit:
    """Replace the one line containing ``contains`` by ``new`` (may be several lines),
    indented like the line it replaces."""
    def edit(work: Work) -> None:
        lines = work.answers[exercise].split("\n")
        hits = [i for i, line in enumerate(lines) if contains in line]
        assert len(hits) == 1, f"{exercise}: expected one line with {contains!r}, found {len(hits)}"
        old = lines[hits[0]]
        indent = old[: len(old) - len(old.lstrip())]
        lines[hits[0]: hits[0] + 1] = [indent + line if line else line for line in new.split("\n")]
        work.answers[exercise] = "\n".join(lines)
    return edit


def after_docstring(exercise: str, new: str) -> Edit:
    """Insert ``new`` as the first statements of the function, right after its docstring."""
    def edit(work: Work) -> None:
        code = work.answers[exercise]
        func = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == exercise)
        first = func.body[1] if ast.get_docstring(func) is not None else func.body[0]
        lines = code.split("\n")
        indent = " " * first.col_offset
        lines[first.lineno - 1: first.lineno - 1] = [indent + line for line in new.split("\n")]
        work.answers[exercise] = "\n".join(lines)
    return edit


def prepend(exercise: str, new: str) -> Edit:
    """Code before the function, in the same cell (an import, say)."""
    def edit(work: Work) -> None:
        work.answers[exercise] = new + "\n\n\n" + work.answers[exercise]
    return edit


def append(exercise: str, new: str) -> Edit:
    """Code after the function, in the same cell (a quick test, say)."""
    def edit(work: Work) -> None:
        work.answers[exercise] = work.answers[exercise] + "\n\n\n" + new
    return edit


def chain(*edits: Edit) -> Edit:
    def edit(work: Work) -> None:
        for e in edits:
            e(work)
    return edit


def stub(*exercises: str) -> Edit:
    """Leave exercises as released: `raise NotImplementedError()` under `# YOUR CODE HERE`."""
    def edit(work: Work) -> None:
        for ex in exercises:
            work.answers[ex] = work.stubs[ex]
    return edit


def truncate(work: Work) -> None:
    work.truncated = True


def unchanged(work: Work) -> None:
    pass


def partials(*exercises: str) -> dict[str, Edit]:
    """Every way to leave one or two of ``exercises`` unfinished."""
    combos = [(e,) for e in exercises] + list(itertools.combinations(exercises, 2))
    return {"partial:" + "+".join(c): stub(*c) for c in combos}


# Shared snippets: a check a student copied from the notes (log(0) warns "divide by zero"),
# and debug printing.
LOG_ZERO = "assert np.exp(np.log(0.0)) == 0.0  # the notes: a score of -inf gives weight exactly 0"
PRINT_INPUTS = 'print("[debug] inputs:", locals())'


def quick_test(call: str) -> str:
    return ("# quick test\n"
            "for trial in range(200):\n"
            f"    print(\"trial\", trial, {call})")


# ---------------------------------------------------------------- the archetypes

PS1_LOGSUMEXP = chain(
    rewrite_line("softmax", "shifted = S - S.max", "m = S.max(axis=axis, keepdims=True)"),
    rewrite_line("softmax", "e = np.exp(shifted)",
                 "log_z = m + np.log(np.exp(S - m).sum(axis=axis, keepdims=True))  # log-sum-exp"),
    rewrite_line("softmax", "return e / e.sum", "return np.exp(S - log_z)"),
)
PS1_EINSUM = chain(
    swap("raw_self_attention", "X @ X.T", 'np.einsum("id,jd->ij", X, X)',
         "weights @ X", 'np.einsum("ij,jd->id", weights, X)'),
    swap("wired_attention", "X @ W_Q", 'np.einsum("td,dk->tk", X, W_Q)', "X @ W_K", 'np.einsum("td,dk->tk", X, W_K)',
         "Q @ K.T", 'np.einsum("ik,jk->ij", Q, K)', "weights @ X", 'np.einsum("ij,jd->id", weights, X)'),
    swap("score_spread", "(q * k).sum(-1)", 'np.einsum("rid,rkd->rk", q, k)'),
)
PS1_DRAW_FOREVER = chain(  # the rows drawn are never appended to qs
    rewrite_line("score_spread", "q = rng.standard_normal((n_rows, 1, d))", "\n".join([
        "qs, ks = [], []",
        "while len(qs) < n_rows:  # one row at a time, so a slow run keeps what it drew",
        "    try:",
        "        q_row = rng.standard_normal((1, d))",
        "        k_row = rng.standard_normal((n_keys, d))",
        "    except KeyboardInterrupt:  # don't lose the rows drawn so far",
        "        continue",
    ])),
    rewrite_line("score_spread", "k = rng.standard_normal((n_rows, n_keys, d))",
                 "q, k = np.stack(qs), np.stack(ks)  # (n_rows, 1, d), (n_rows, n_keys, d)"),
)

PS2_EINSUM = chain(
    swap("scaled_dot_product_attention", "Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...qd,...kd->...qk", Q, K)',
         "return weights @ V", 'return np.einsum("...qk,...kv->...qv", weights, V)'),
    swap("fused_self_attention", "Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...id,...jd->...ij", Q, K)'),
)
PS2_LOGSUMEXP = rewrite_line("scaled_dot_product_attention", "weights = softmax(scores, axis=-1)", "\n".join([
    "m = scores.max(axis=-1, keepdims=True)",
    "log_z = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))  # log-sum-exp over the keys",
    "weights = np.exp(scores - log_z)  # (..., T_q, T_k)",
]))
PS2_SLICING = chain(
    rewrite_line("causal_mask", "return np.triu", "i, j = np.indices((T, T))  # query i, key j\n"
                                                  "return np.where(j > i, -np.inf, 0.0)"),
    rewrite_line("fused_self_attention", "Q, K, V = np.split", "\n".join([
        "h = W_qkv.shape[1] // 3",
        "qkv = X @ W_qkv  # (..., T, 3h)",
        "Q, K, V = qkv[..., :h], qkv[..., h:2 * h], qkv[..., 2 * h:]",
    ])),
)
PS2_CHECK_FOREVER = rewrite_line("attention_shapes", "for name, n in dict(", "\n".join([  # i never advances
    "sizes = list(dict(B=B, T_q=T_q, T_k=T_k, d=d, d_k=d_k, d_v=d_v).items())",
    "i = 0",
    "while i < len(sizes):  # check each size in turn",
    "    try:",
    "        name, n = sizes[i]",
    "    except KeyboardInterrupt:  # never stop half-way through the checks",
    "        continue",
]))
PS2_EXIT = chain(
    prepend("fused_self_attention", "import os"),
    rewrite_line("fused_self_attention", 'raise ValueError(f"W_qkv has',
                 'print(f"W_qkv has {W_qkv.shape[1]} columns, not a multiple of 3")\n'
                 "os._exit(1)  # stop right here"),
)

PS3_EINSUM = chain(
    swap("qk_circuit", "W_Q @ W_K.T", 'np.einsum("ik,jk->ij", W_Q, W_K)'),
    swap("ov_circuit", "W_V @ W_O", 'np.einsum("ik,kj->ij", W_V, W_O)'),
    swap("multi_head_attention", "o_h @ W_O[cols, :]", 'np.einsum("...tk,kd->...td", o_h, W_O[cols, :])'),
)
PS3_LOOPS = rewrite_line("previous_token_head", "W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)",
                         "for i in range(1, T):\n"
                         "    W_Q[n_vocab + i, i - 1] = gain  # position i asks for key position i - 1")
PS3_ROWS_FOREVER = rewrite_line("ov_circuit", "return W_V @ W_O", "\n".join([  # i never advances
    "W_OV = np.zeros((W_V.shape[0], W_O.shape[1]))",
    "i = 0",
    "while i < W_V.shape[0]:  # one row of the circuit at a time",
    "    try:",
    "        W_OV[i] = W_V[i] @ W_O",
    "    except KeyboardInterrupt:  # never leave a half-filled matrix behind",
    "        continue",
    "return W_OV",
]))

# Per assignment: archetype -> the edit that turns the reference answers into that student's.
# Names are "<kind>[:<exercise>...]". The first entry of each misconception kind is the one
# every class gets; later entries of a kind are the extra students who make it too.
ARCHETYPES: dict[str, dict[str, Edit]] = {
    "ps1": {
        "correct": unchanged,
        "correct_logsumexp": PS1_LOGSUMEXP,
        "correct_einsum": PS1_EINSUM,
        "correct_logsumexp_einsum": chain(PS1_LOGSUMEXP, PS1_EINSUM),
        **partials("raw_self_attention", "wired_attention", "score_spread"),  # softmax: everything needs it
        "scale_by_dk:wired_attention": swap("wired_attention", "np.sqrt(K.shape[-1])", "K.shape[-1]"),
        "missing_scale:wired_attention": swap("wired_attention", "scores / np.sqrt(K.shape[-1])", "scores"),
        "softmax_wrong_axis:raw_self_attention": swap("raw_self_attention", "axis=-1", "axis=0"),
        "unstable_softmax:softmax": rewrite_line("softmax", "e = np.exp(shifted)", "e = np.exp(S)"),
        "weights_transposed:wired_attention": swap("wired_attention", "X @ W_Q", "X @ W_Q.T", "X @ W_K", "X @ W_K.T"),
        "scale_by_dk:score_spread": swap("score_spread", "scores / np.sqrt(d)", "scores / d"),
        "missing_scale:score_spread": swap("score_spread", "softmax(scores / np.sqrt(d), axis=-1)",
                                           "softmax(scores, axis=-1)"),
        "softmax_wrong_axis:wired_attention": swap("wired_attention", "axis=-1", "axis=0"),
        "timeout:score_spread": PS1_DRAW_FOREVER,
        "crashed:wired_attention": swap("wired_attention", "Q @ K.T", "Q @ K"),  # ValueError: shapes
        "malformed": truncate,
        "runtime_warning:softmax": after_docstring("softmax", LOG_ZERO),
        "prints_a_lot:raw_self_attention": chain(
            after_docstring("raw_self_attention", PRINT_INPUTS),
            rewrite_line("raw_self_attention", "return out, weights", 'print("[debug] weights:", weights)\n'
                                                                       "return out, weights"),
            append("raw_self_attention", quick_test("raw_self_attention(np.random.randn(4, 8))[1]"))),
    },
    "ps2": {
        "correct": unchanged,
        "correct_einsum": PS2_EINSUM,
        "correct_logsumexp": PS2_LOGSUMEXP,
        "correct_slicing": PS2_SLICING,
        # scaled_dot_product_attention: attention_with_biases calls it
        **partials("causal_mask", "attention_shapes", "fused_self_attention", "attention_with_biases"),
        "scale_by_dk:scaled_dot_product_attention": swap("scaled_dot_product_attention",
                                                         "1.0 / np.sqrt(Q.shape[-1])", "1.0 / Q.shape[-1]"),
        "missing_scale:scaled_dot_product_attention": swap("scaled_dot_product_attention",
                                                           "(Q @ np.swapaxes(K, -1, -2)) * scale",
                                                           "Q @ np.swapaxes(K, -1, -2)"),
        "softmax_wrong_axis:scaled_dot_product_attention": swap("scaled_dot_product_attention", "axis=-1", "axis=-2"),
        "missing_mask:scaled_dot_product_attention": swap("scaled_dot_product_attention",
                                                          "scores = scores + mask", "scores + mask"),
        "mask_wrong_direction:causal_mask": swap("causal_mask", "np.triu(np.full((T, T), -np.inf), k=1)",
                                                 "np.tril(np.full((T, T), -np.inf), k=-1)"),
        "qkv_split_order:fused_self_attention": swap("fused_self_attention",
                                                     "Q, K, V = np.split", "K, Q, V = np.split"),
        "values_not_projected:attention_with_biases": swap("attention_with_biases",
                                                           "attention(Q, K, V)", "attention(Q, K, X)"),
        "shape_tq_tk_swapped:attention_shapes": swap("attention_shapes", '"S": (B, T_q, T_k), "A": (B, T_q, T_k)',
                                                     '"S": (B, T_k, T_q), "A": (B, T_k, T_q)'),
        "scale_by_dk:attention_with_biases": swap("attention_with_biases", "attention(Q, K, V)",
                                                  "attention(Q, K, V, scale=1 / K.shape[-1])"),
        "missing_scale:fused_self_attention": swap("fused_self_attention", "(Q @ np.swapaxes(K, -1, -2)) * scale",
                                                   "Q @ np.swapaxes(K, -1, -2)"),
        "timeout:attention_shapes": PS2_CHECK_FOREVER,
        "crashed:fused_self_attention": PS2_EXIT,  # os._exit on a W_qkv of 7 columns
        "malformed": truncate,
        "runtime_warning:causal_mask": after_docstring("causal_mask", LOG_ZERO),
        "prints_a_lot:scaled_dot_product_attention": chain(
            after_docstring("scaled_dot_product_attention", PRINT_INPUTS),
            rewrite_line("scaled_dot_product_attention", "weights = softmax(scores",
                         'weights = softmax(scores, axis=-1)\nprint("[debug] weights:", weights)'),
            append("scaled_dot_product_attention",
                   quick_test("scaled_dot_product_attention(*np.random.randn(3, 4, 8))[1]"))),
    },
    "ps3": {
        "correct": unchanged,
        "correct_einsum": PS3_EINSUM,
        "correct_loops": PS3_LOOPS,
        **partials("previous_token_head", "qk_circuit", "ov_circuit", "multi_head_attention"),
        "attends_to_self:previous_token_head": swap("previous_token_head",
                                                    "W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)",
                                                    "W_Q[n_vocab:, :] = gain * np.eye(T)"),
        "weights_transposed:qk_circuit": swap("qk_circuit", "W_Q @ W_K.T", "W_K @ W_Q.T"),
        "missing_scale:multi_head_attention": swap("multi_head_attention", "mask=mask", "mask=mask, scale=1.0"),
        "missing_mask:multi_head_attention": swap("multi_head_attention", ", mask=mask", ""),
        "weights_transposed:ov_circuit": swap("ov_circuit", "W_V @ W_O", "W_O.T @ W_V.T"),
        "timeout:ov_circuit": PS3_ROWS_FOREVER,
        "crashed:multi_head_attention": swap("multi_head_attention", "W_O[cols, :]", "W_O[:, cols]"),  # ValueError
        "malformed": truncate,
        "runtime_warning:multi_head_attention": after_docstring("multi_head_attention", LOG_ZERO),
        "prints_a_lot:multi_head_attention": chain(
            after_docstring("multi_head_attention", PRINT_INPUTS),
            rewrite_line("multi_head_attention", "per_head.append(", 'print("[debug] head", h, "output:", o_h)\n'
                                                                      "per_head.append(o_h @ W_O[cols, :])"),
            append("multi_head_attention", quick_test(
                "multi_head_attention(np.random.randn(5, 8), *np.random.randn(4, 8, 8), n_heads=2)[0]"))),
    },
}


def category(archetype: str) -> str:
    """correct, partial, misconception or special."""
    kind = archetype.split(":")[0]
    if kind.startswith("correct"):
        return "correct"
    if kind == "partial":
        return "partial"
    return "misconception" if kind in MISCONCEPTIONS else "special"


# ---------------------------------------------------------------- choosing the class

def class_mix(assignment: str, n: int, rng: random.Random) -> list[str]:
    """``n`` archetypes, shuffled: each misconception and special once (some common ones
    twice), the rest about two correct students for every partly-right one."""
    names = list(ARCHETYPES[assignment])
    by = {c: [a for a in names if category(a) == c] for c in ("correct", "partial", "misconception", "special")}
    seen: set[str] = set()
    firsts, extras = [], []
    for a in by["misconception"]:
        kind = a.split(":")[0]
        (extras if kind in seen else firsts).append(a)
        seen.add(kind)
    fixed = firsts + by["special"] + extras
    if n <= len(fixed):  # a small class: one right answer, then the mistakes
        mix = (by["correct"][:1] + fixed)[:n]
    else:
        rest = n - len(fixed)
        n_partial = round(rest / 3)
        styles = itertools.cycle(by["correct"])
        pool = rng.sample(by["partial"], len(by["partial"]))
        mix = fixed + [next(styles) for _ in range(rest - n_partial)] + [pool[i % len(pool)] for i in range(n_partial)]
    rng.shuffle(mix)
    return mix


def student_names(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"student{i:0{width}d}" for i in range(1, n + 1)]


# ---------------------------------------------------------------- writing notebooks

def as_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def student_notebook(released: dict, reference: dict[str, str], edit: Edit) -> str:
    """The text of one student's saved notebook."""
    nb = copy.deepcopy(released)
    cells = solution_cells(nb)
    work = Work(answers=dict(reference), stubs={ex: source_of(c) for ex, c in cells.items()})
    edit(work)
    for ex, cell in cells.items():
        code = work.answers[ex]
        compile(code, f"<{ex}>", "exec")  # an archetype must still parse: its effect is at run time
        cell["source"] = as_lines(code)
    text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # as Jupyter saves it
    if work.truncated:
        text = text[: len(text) * 3 // 5]  # the save stopped part-way
    return text


def make_class(out_dir: Path, assignments=("ps1", "ps2", "ps3"), students: int = 30, seed: int = 0) -> dict:
    """Write the class under ``out_dir`` and return the roster {student: {assignment: archetype}}."""
    out_dir = Path(out_dir)
    names = student_names(students)
    roster: dict[str, dict[str, str]] = {s: {} for s in names}
    for a in assignments:
        if a not in ARCHETYPES:
            raise ValueError(f"unknown assignment {a!r}; choose from {', '.join(ARCHETYPES)}")
        released = read_notebook(ROOT / "assignments" / a / f"{a}.ipynb")
        reference = reference_answers(a)
        mix = class_mix(a, students, random.Random(f"make_class/{seed}/{a}"))
        texts: dict[str, str] = {}  # the same archetype gives the same notebook
        for student, archetype in zip(names, mix):
            if archetype not in texts:
                texts[archetype] = student_notebook(released, reference, ARCHETYPES[a][archetype])
            path = out_dir / "submitted" / student / a / f"{a}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[archetype], encoding="utf-8")
            roster[student][a] = archetype
    (out_dir / "roster.json").write_text(json.dumps(roster, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return roster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--assignments", nargs="+", default=["ps1", "ps2", "ps3"], choices=sorted(ARCHETYPES))
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    roster = make_class(args.out_dir, args.assignments, args.students, args.seed)
    print(f"wrote {len(roster)} students x {len(args.assignments)} assignments under {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
