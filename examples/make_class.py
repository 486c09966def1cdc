"""Generate a synthetic class of submissions, laid out the way nbgrader collects them.

    python examples/make_class.py OUTDIR [--assignments ps1 ps2 ps3 ps4] [--students 30] [--seed 0]

writes ``OUTDIR/submitted/<student>/<assignment>/<assignment>.ipynb`` for every student and
assignment, and ``OUTDIR/roster.json`` mapping each student to ``{assignment: archetype}``.

Every notebook starts as the released notebook (``assignments/<a>/<a>.ipynb``, cell ids and
nbgrader metadata untouched, as a student's saved copy would be) with each solution cell
filled with the reference answer: the matching cell of ``source/<a>/<a>.ipynb`` minus its
``### BEGIN/END SOLUTION`` lines. Then the student's archetype edits those answers:

- ``correct``, ``correct_<style>``: full marks, in different styles (log-sum-exp, einsum, ...);
- ``partial:<ex>[+<ex>]``: those exercises left as the released stub;
- ``<misconception id>:<ex>[:<label>]``: one entry of the catalogue of mistakes
  (solutions/mistakes.py: the right answer with one edit); an exercise that calls it (ps1's
  functions call ``softmax``, ps2's ``attention_with_biases`` calls
  ``scaled_dot_product_attention``) inherits the mistake;
- ``timeout:<ex>``, ``crashed:<ex>``: a loop that never ends (and swallows Ctrl-C), a crash;
- ``runtime_warning:<ex>``, ``prints_a_lot:<ex>``: right answers that warn or print a lot;
- ``malformed``: right answers in a notebook file cut off mid-JSON.

``expected(assignment, archetype)`` says what grading each archetype may give, so the test
corpus grades every archetype against it. The mix is chosen per assignment from ``--seed``:
one student per misconception id and per special archetype, then about two correct students
for every partly-right one. Import it as ``from make_class import make_class`` with
``examples/`` on ``sys.path``.
"""
from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from autograder.assignments import ASSIGNMENTS
from autograder.catalogue import Edit, EditError, after_docstring, append, callers, prepend, rewrite_line, swap
from autograder.reference import load as load_reference

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


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


WorkEdit = Callable[[Work], None]


def on(exercise: str, *edits: Edit) -> WorkEdit:
    """Apply text edits (autograder/catalogue.py) to one exercise's answer."""
    def edit(work: Work) -> None:
        try:
            for e in edits:
                work.answers[exercise] = e(work.answers[exercise])
        except EditError as err:
            raise EditError(f"{exercise}: {err}") from None
    return edit


def every(*edits: WorkEdit) -> WorkEdit:
    def edit(work: Work) -> None:
        for e in edits:
            e(work)
    return edit


def stub(*exercises: str) -> WorkEdit:
    """Leave exercises as released: `raise NotImplementedError()` under `# YOUR CODE HERE`."""
    def edit(work: Work) -> None:
        for ex in exercises:
            work.answers[ex] = work.stubs[ex]
    return edit


def truncate(work: Work) -> None:
    work.truncated = True


def unchanged(work: Work) -> None:
    pass


def partials(*exercises: str) -> dict[str, WorkEdit]:
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

def catalogue(assignment: str) -> list:
    """The catalogue's mistakes (solutions/mistakes.py) in this assignment's exercises."""
    return [m for m in load_reference().catalogue if m.func in ASSIGNMENTS[assignment]]


def mistakes(assignment: str) -> dict[str, WorkEdit]:
    """One archetype per catalogued mistake, named ``<id>:<exercise>[:<label>]``."""
    return {m.name: on(m.func, m.edit) for m in catalogue(assignment)}


PS1_LOGSUMEXP = every(
    on("softmax", rewrite_line("shifted = S - S.max", "m = S.max(axis=axis, keepdims=True)")),
    on("softmax", rewrite_line("e = np.exp(shifted)",
                 "log_z = m + np.log(np.exp(S - m).sum(axis=axis, keepdims=True))  # log-sum-exp")),
    on("softmax", rewrite_line("return e / e.sum", "return np.exp(S - log_z)")),
)
PS1_EINSUM = every(
    on("raw_self_attention", swap("X @ X.T", 'np.einsum("id,jd->ij", X, X)',
         "weights @ X", 'np.einsum("ij,jd->id", weights, X)')),
    on("wired_attention", swap("X @ W_Q", 'np.einsum("td,dk->tk", X, W_Q)', "X @ W_K", 'np.einsum("td,dk->tk", X, W_K)',
         "Q @ K.T", 'np.einsum("ik,jk->ij", Q, K)', "weights @ X", 'np.einsum("ij,jd->id", weights, X)')),
    on("score_spread", swap("(q * k).sum(-1)", 'np.einsum("rid,rkd->rk", q, k)')),
)
PS1_DRAW_FOREVER = every(  # the rows drawn are never appended to qs
    on("score_spread", rewrite_line("q = rng.standard_normal((n_rows, 1, d))", "\n".join([
        "qs, ks = [], []",
        "while len(qs) < n_rows:  # one row at a time, so a slow run keeps what it drew",
        "    try:",
        "        q_row = rng.standard_normal((1, d))",
        "        k_row = rng.standard_normal((n_keys, d))",
        "    except KeyboardInterrupt:  # don't lose the rows drawn so far",
        "        continue",
    ]))),
    on("score_spread", rewrite_line("k = rng.standard_normal((n_rows, n_keys, d))",
                 "q, k = np.stack(qs), np.stack(ks)  # (n_rows, 1, d), (n_rows, n_keys, d)")),
)

PS2_EINSUM = every(
    on("scaled_dot_product_attention", swap("Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...qd,...kd->...qk", Q, K)',
         "return weights @ V", 'return np.einsum("...qk,...kv->...qv", weights, V)')),
    on("fused_self_attention", swap("Q @ np.swapaxes(K, -1, -2)", 'np.einsum("...id,...jd->...ij", Q, K)')),
)
PS2_LOGSUMEXP = on("scaled_dot_product_attention", rewrite_line("weights = softmax(scores, axis=-1)", "\n".join([
    "m = scores.max(axis=-1, keepdims=True)",
    "log_z = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))  # log-sum-exp over the keys",
    "weights = np.exp(scores - log_z)  # (..., T_q, T_k)",
])))
PS2_SLICING = every(
    on("causal_mask", rewrite_line("return np.triu", "i, j = np.indices((T, T))  # query i, key j\n"
                                                  "return np.where(j > i, -np.inf, 0.0)")),
    on("fused_self_attention", rewrite_line("Q, K, V = np.split", "\n".join([
        "h = W_qkv.shape[1] // 3",
        "qkv = X @ W_qkv  # (..., T, 3h)",
        "Q, K, V = qkv[..., :h], qkv[..., h:2 * h], qkv[..., 2 * h:]",
    ]))),
)
PS2_CHECK_FOREVER = on("attention_shapes", rewrite_line("for name, n in dict(", "\n".join([  # i never advances
    "sizes = list(dict(B=B, T_q=T_q, T_k=T_k, d=d, d_k=d_k, d_v=d_v).items())",
    "i = 0",
    "while i < len(sizes):  # check each size in turn",
    "    try:",
    "        name, n = sizes[i]",
    "    except KeyboardInterrupt:  # never stop half-way through the checks",
    "        continue",
])))
PS2_EXIT = every(
    on("fused_self_attention", prepend("import os")),
    on("fused_self_attention", rewrite_line('raise ValueError(f"W_qkv has',
                 'print(f"W_qkv has {W_qkv.shape[1]} columns, not a multiple of 3")\n'
                 "os._exit(1)  # stop right here")),
)

PS3_EINSUM = every(
    on("qk_circuit", swap("W_Q @ W_K.T", 'np.einsum("ik,jk->ij", W_Q, W_K)')),
    on("ov_circuit", swap("W_V @ W_O", 'np.einsum("ik,kj->ij", W_V, W_O)')),
    on("multi_head_attention", swap("o_h @ W_O[cols, :]", 'np.einsum("...tk,kd->...td", o_h, W_O[cols, :])')),
)
PS3_LOOPS = on("previous_token_head", rewrite_line("W_Q[n_vocab + 1 :, :-1] = gain * np.eye(T - 1)",
                         "for i in range(1, T):\n"
                         "    W_Q[n_vocab + i, i - 1] = gain  # position i asks for key position i - 1"))
PS3_ROWS_FOREVER = on("ov_circuit", rewrite_line("return W_V @ W_O", "\n".join([  # i never advances
    "W_OV = np.zeros((W_V.shape[0], W_O.shape[1]))",
    "i = 0",
    "while i < W_V.shape[0]:  # one row of the circuit at a time",
    "    try:",
    "        W_OV[i] = W_V[i] @ W_O",
    "    except KeyboardInterrupt:  # never leave a half-filled matrix behind",
    "        continue",
    "return W_OV",
])))

PS4_EINSUM = every(
    on("attend_step", swap("(K_cache @ q) * scale", 'np.einsum("td,d->t", K_cache, q) * scale',
                           "weights @ V_cache", 'np.einsum("t,tv->v", weights, V_cache)')),
    on("decode_with_cache", swap("X[t] @ W_Q", 'np.einsum("d,dk->k", X[t], W_Q)')),
)
PS4_COMPLEX = on("rope", rewrite_line("return np.stack(rotated, axis=-1)", "\n".join([  # Meta's LLaMA: e^(i p w)
    "z = (x_even + 1j * x_odd) * np.exp(1j * angles)  # (..., T, d/2): each pair a complex number",
    "return np.stack([z.real, z.imag], axis=-1).reshape(X.shape)",
])))
PS4_LOOPS = on("sinusoidal_positions", rewrite_line("return np.stack([np.sin(angles)", "\n".join([
    "PE = np.zeros((T, d))",
    "for p in range(T):",
    "    for k in range(d // 2):",
    "        PE[p, 2 * k] = np.sin(angles[p, k])",
    "        PE[p, 2 * k + 1] = np.cos(angles[p, k])",
    "return PE",
])))
# k never advances
PS4_FREQUENCIES_FOREVER = on("sinusoidal_positions", rewrite_line("i = np.arange(0, d, 2)", "\n".join([
    "i = np.zeros(d // 2)",
    "k = 0",
    "while k < d // 2:  # one frequency at a time",
    "    try:",
    "        i[k] = 2 * k",
    "    except KeyboardInterrupt:  # never leave a half-filled table behind",
    "        continue",
])))

# Per assignment: archetype -> the edit that turns the reference answers into that student's.
# Names are "<kind>[:<exercise>...]". The first entry of each misconception kind is the one
# every class gets; later entries of a kind are the extra students who make it too.
ARCHETYPES: dict[str, dict[str, Edit]] = {
    "ps1": {
        "correct": unchanged,
        **mistakes("ps1"),
        "correct_logsumexp": PS1_LOGSUMEXP,
        "correct_einsum": PS1_EINSUM,
        "correct_logsumexp_einsum": every(PS1_LOGSUMEXP, PS1_EINSUM),
        **partials("raw_self_attention", "wired_attention", "score_spread"),  # softmax: everything needs it
        "timeout:score_spread": PS1_DRAW_FOREVER,
        "crashed:wired_attention": on("wired_attention", swap("Q @ K.T", "Q @ K")),  # ValueError: shapes
        "malformed": truncate,
        "runtime_warning:softmax": on("softmax", after_docstring("softmax", LOG_ZERO)),
        "prints_a_lot:raw_self_attention": every(
            on("raw_self_attention", after_docstring("raw_self_attention", PRINT_INPUTS)),
            on("raw_self_attention", rewrite_line("return out, weights", 'print("[debug] weights:", weights)\n'
                                                                       "return out, weights")),
            on("raw_self_attention", append(quick_test("raw_self_attention(np.random.randn(4, 8))[1]")))),
    },
    "ps2": {
        "correct": unchanged,
        **mistakes("ps2"),
        "correct_einsum": PS2_EINSUM,
        "correct_logsumexp": PS2_LOGSUMEXP,
        "correct_slicing": PS2_SLICING,
        # scaled_dot_product_attention: attention_with_biases calls it
        **partials("causal_mask", "attention_shapes", "fused_self_attention", "attention_with_biases"),
        "timeout:attention_shapes": PS2_CHECK_FOREVER,
        "crashed:fused_self_attention": PS2_EXIT,  # os._exit on a W_qkv of 7 columns
        "malformed": truncate,
        "runtime_warning:causal_mask": on("causal_mask", after_docstring("causal_mask", LOG_ZERO)),
        "prints_a_lot:scaled_dot_product_attention": every(
            on("scaled_dot_product_attention", after_docstring("scaled_dot_product_attention", PRINT_INPUTS)),
            on("scaled_dot_product_attention", rewrite_line("weights = softmax(scores",
                         'weights = softmax(scores, axis=-1)\nprint("[debug] weights:", weights)')),
            on("scaled_dot_product_attention",
               append(quick_test("scaled_dot_product_attention(*np.random.randn(3, 4, 8))[1]")))),
    },
    "ps3": {
        "correct": unchanged,
        **mistakes("ps3"),
        "correct_einsum": PS3_EINSUM,
        "correct_loops": PS3_LOOPS,
        **partials("previous_token_head", "qk_circuit", "ov_circuit", "multi_head_attention"),
        "timeout:ov_circuit": PS3_ROWS_FOREVER,
        "crashed:multi_head_attention": on("multi_head_attention", swap("W_O[cols, :]", "W_O[:, cols]")),  # ValueError
        "malformed": truncate,
        "runtime_warning:multi_head_attention": on("multi_head_attention",
                                                   after_docstring("multi_head_attention", LOG_ZERO)),
        "prints_a_lot:multi_head_attention": every(
            on("multi_head_attention", after_docstring("multi_head_attention", PRINT_INPUTS)),
            on("multi_head_attention", rewrite_line("per_head.append(", 'print("[debug] head", h, "output:", o_h)\n'
                                                                      "per_head.append(o_h @ W_O[cols, :])")),
            on("multi_head_attention", append(quick_test(
                "multi_head_attention(np.random.randn(5, 8), *np.random.randn(4, 8, 8), n_heads=2)[0]")))),
    },
    "ps4": {
        "correct": unchanged,
        **mistakes("ps4"),
        "correct_einsum": PS4_EINSUM,
        "correct_complex": PS4_COMPLEX,
        "correct_loops": PS4_LOOPS,
        # attend_step and rope: decode_with_cache and key_bias_effect call them
        **partials("sinusoidal_positions", "key_bias_effect", "induction_heads"),
        "timeout:sinusoidal_positions": PS4_FREQUENCIES_FOREVER,
        "crashed:rope": on("rope", swap("reshape(X.shape)", "reshape(T, d)")),  # ValueError on a batch
        "malformed": truncate,
        "runtime_warning:decode_with_cache": on("decode_with_cache", after_docstring("decode_with_cache", LOG_ZERO)),
        "prints_a_lot:attend_step": every(
            on("attend_step", after_docstring("attend_step", PRINT_INPUTS)),
            on("attend_step", rewrite_line("weights = softmax(scores", 'weights = softmax(scores, axis=-1)\n'
                                                                      'print("[debug] weights:", weights)')),
            on("attend_step", append(quick_test(
                "attend_step(np.random.randn(4), np.random.randn(5, 4), np.random.randn(5, 2))[1]")))),
    },
}


def category(archetype: str) -> str:
    """correct, partial, misconception or special."""
    kind = archetype.split(":")[0]
    if kind.startswith("correct"):
        return "correct"
    if kind == "partial":
        return "partial"
    return "special" if kind in SPECIAL else "misconception"


SPECIAL = ("timeout", "crashed", "malformed", "runtime_warning", "prints_a_lot")


def expected(assignment: str, archetype: str) -> dict[str, set[tuple[str, frozenset]]]:
    """What grading this archetype's notebook may give, per exercise: the allowed pairs of
    (outcome, misconception tags), outcome being "full", "partial" or "zero".

    A mistake in exercise X with id I costs X points and names I there (a crash may come
    with it: ``x @ W.T`` only runs for square W); an exercise of the same problem set that
    calls X either passes or fails naming I; every other exercise gets full marks. A
    stub is the mistake ``not_implemented``; a hang ``timeout``; a crash ``crashed``.
    """
    names = ASSIGNMENTS[assignment]
    full = {("full", frozenset())}
    kind, _, rest = archetype.partition(":")
    if kind.startswith("correct") or kind in ("runtime_warning", "prints_a_lot"):
        return {ex: full for ex in names}
    if kind == "malformed":  # nothing can be read: every exercise scores 0, naming no mistake
        return {ex: {("zero", frozenset())} for ex in names}
    mistake = {"partial": "not_implemented"}.get(kind, kind)
    wrong = rest.split(":")[0].split("+")
    source = reference_module_source(assignment)
    allowed = {ex: full for ex in names}
    for ex in wrong:
        crash = category(archetype) == "misconception"  # a catalogued edit may also crash on some inputs
        tags = [frozenset({mistake})] + ([frozenset({mistake, "crashed"})] if crash else [])
        outcomes = ("zero",) if kind in ("partial", "timeout") else ("zero", "partial")
        allowed[ex] = {(o, t) for o in outcomes for t in tags}
    for ex in wrong:
        for caller in callers(source, ex):
            if caller not in wrong:
                allowed[caller] = full | {(o, frozenset({mistake})) for o in ("zero", "partial")}
    return allowed


def reference_module_source(assignment: str) -> str:
    """Every answer of the assignment, as one module's source (the notebook's answer cells)."""
    return "\n\n\n".join(reference_answers(assignment).values())


# ---------------------------------------------------------------- choosing the class

def class_mix(assignment: str, n: int, rng: random.Random) -> list[str]:
    """``n`` archetypes, shuffled: each misconception id and each special once, the rest
    about two correct students for every partly-right one."""
    names = list(ARCHETYPES[assignment])
    by = {c: [a for a in names if category(a) == c] for c in ("correct", "partial", "misconception", "special")}
    seen: set[str] = set()
    firsts = []
    for a in by["misconception"]:  # the catalogue's first entry of each id
        kind = a.split(":")[0]
        if kind not in seen:
            firsts.append(a)
        seen.add(kind)
    fixed = firsts + by["special"]
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


def archetype_notebook(assignment: str, archetype: str) -> str:
    """The text of the notebook a student of ``archetype`` hands in for ``assignment``."""
    released = read_notebook(ROOT / "assignments" / assignment / f"{assignment}.ipynb")
    return student_notebook(released, reference_answers(assignment), ARCHETYPES[assignment][archetype])


def student_notebook(released: dict, reference: dict[str, str], edit: WorkEdit) -> str:
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


def make_class(out_dir: Path, assignments=tuple(ASSIGNMENTS), students: int = 30, seed: int = 0) -> dict:
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
        for student, archetype in zip(names, mix, strict=True):
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
    parser.add_argument("--assignments", nargs="+", default=list(ARCHETYPES), choices=sorted(ARCHETYPES))
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
