"""Nothing a student installs or receives computes an exercise's answer.

The wheel (``pip install`` of the grader, which students need for the check cells) and the
released notebooks are read as source, not only called: a softmax (exponentials normalised
by their own sum, directly or through a log-sum-exp), a causal mask (a triangle of -inf), or
a call of an answer by name, anywhere in them, fails the test. Checks that need attention
run only in the grader, with the reference (attention_course/exercises/previous_token_head.py).
The detector is shown to find each of those in the reference solutions, in the catalogue's
and the corpus's other styles, and in the attention the wheel used to carry.
"""
from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import pytest

from autograder.assignments import ASSIGNMENTS

ROOT = Path(__file__).resolve().parent.parent
ANSWER_NAMES = {"softmax", "log_softmax", "causal_mask", "scaled_dot_product_attention", "multi_head_attention",
                "fused_self_attention", "raw_self_attention", "wired_attention", "attention_with_biases",
                "attend_step", "decode_with_cache", "sinusoidal_positions", "rope", "key_bias_effect",
                "induction_heads"}
TRIANGLES = {"triu", "tril", "tri"}


def _name(node) -> str:
    """The last name of a call's function: np.exp -> exp, exp -> exp."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


class _Source:
    """A module's code with every name's assigned values, to follow a name to what it holds."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        self.bound: dict[str, list[ast.AST]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for t in ast.walk(target):
                        if isinstance(t, ast.Name):
                            self.bound.setdefault(t.id, []).append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) and node.value:
                self.bound.setdefault(node.target.id, []).append(node.value)

    def mentions(self, node, test, seen=None) -> bool:
        """Whether ``node`` or a value a name in it was assigned contains a node passing ``test``."""
        seen = set() if seen is None else seen
        for sub in ast.walk(node):
            if test(sub):
                return True
            if isinstance(sub, ast.Name) and sub.id not in seen:
                seen.add(sub.id)
                if any(self.mentions(v, test, seen) for v in self.bound.get(sub.id, ())):
                    return True
        return False


def _is_exp(node) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in {"exp", "expm1"}


def _is_sum(node) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in {"sum", "nansum", "logaddexp", "logsumexp"}


def _is_log(node) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in {"log", "logaddexp", "logsumexp"}


def _is_inf(node) -> bool:
    if isinstance(node, (ast.Attribute, ast.Name)) and _name(node) in {"inf", "Inf", "infty", "NINF"}:
        return True
    return (isinstance(node, ast.Call) and _name(node.func) == "float" and node.args
            and isinstance(node.args[0], ast.Constant) and "inf" in str(node.args[0].value).lower())


def _is_triangle(node) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in TRIANGLES


def _is_grid(node) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in {"arange", "indices", "ogrid", "mgrid", "meshgrid"}


def findings(source: str) -> list[str]:
    """What in ``source`` computes an answer: softmax, a causal mask, an answer called by name."""
    tree = ast.parse(source)
    code = _Source(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if code.mentions(node.left, _is_exp) and code.mentions(node.right, _is_sum) \
                    and code.mentions(node.right, _is_exp):
                found.append(f"line {line}: a softmax (exponentials over their sum)")
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            if code.mentions(node.target, _is_exp) and code.mentions(node.value, _is_sum):
                found.append(f"line {line}: a softmax (exponentials over their sum)")
        if _is_exp(node) and node.args and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Sub):
            if code.mentions(node.args[0].right, _is_log) and code.mentions(node.args[0].right, _is_exp):
                found.append(f"line {line}: a softmax (exp of scores minus their log-sum-exp)")
        if isinstance(node, ast.Call) and _name(node.func) in ANSWER_NAMES:
            found.append(f"line {line}: calls {_name(node.func)}")
        if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)):
            # a triangle: triu/tril/tri, or index grids compared (j > i)
            triangle = code.mentions(node, _is_triangle) or any(
                isinstance(c, ast.Compare) and code.mentions(c, _is_grid) for c in ast.walk(node))
            if triangle and code.mentions(node, _is_inf):
                found.append(f"line {line}: a causal mask (a triangle of -inf)")
    return sorted(set(found))


# ---------------------------------------------------------------- what ships

@pytest.fixture(scope="module")
def wheel_sources(built_wheel) -> dict[str, str]:
    with zipfile.ZipFile(built_wheel) as z:
        return {name: z.read(name).decode() for name in z.namelist() if name.endswith(".py")}


def test_the_wheel_computes_no_answer(wheel_sources):
    assert "attention_course/exercises/previous_token_head.py" in wheel_sources
    assert "attention_course/worked_inputs.py" in wheel_sources
    found = {name: f for name, text in wheel_sources.items() if (f := findings(text))}
    assert found == {}


def _released_code(assignment: str) -> str:
    nb = json.loads((ROOT / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
             for c in nb["cells"] if c["cell_type"] == "code"]
    # IPython-only lines cannot occur in these notebooks; each cell parses as Python
    return "\n\n".join(cells)


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_a_released_notebook_computes_no_answer(assignment):
    code = _released_code(assignment)
    # A check cell names its exercise as a string and passes the student's own function:
    # check("softmax", softmax) calls check, not softmax; the demos call the student's functions.
    tree = ast.parse(code)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    own = [f for f in findings(code) if not any(f.endswith(f"calls {name}") for name in defined)]
    assert own == []


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_no_template_gives_an_earlier_answer_whole(assignment):
    assert "[solution-given]" not in (ROOT / "templates" / f"{assignment}.py").read_text()


# ---------------------------------------------------------------- the detector finds them

OLD_RUN_HEAD = '''
def _run_head(W_Q, W_K, W_V, tokens, n_vocab, T):
    X = np.concatenate([np.eye(n_vocab)[tokens], np.eye(T)], axis=1)
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(W_K.shape[1]) + np.triu(np.full((T, T), -np.inf), k=1)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    weights = e / e.sum(-1, keepdims=True)
    return weights, weights @ (X @ W_V)
'''

OTHER_STYLES = {
    "log-sum-exp": "m = S.max(axis=-1, keepdims=True)\n"
                   "log_z = m + np.log(np.exp(S - m).sum(axis=-1, keepdims=True))\n"
                   "w = np.exp(S - log_z)\n",
    "in place": "e = np.exp(S - S.max(-1, keepdims=True))\ne /= e.sum(-1, keepdims=True)\n",
    "one line": "w = np.exp(S) / np.sum(np.exp(S), axis=-1, keepdims=True)\n",
    "mask by indices": "i, j = np.indices((T, T))\nM = np.where(j > i, -np.inf, 0.0)\n",
    "mask by tri": "M = np.where(np.tri(T, dtype=bool), 0.0, -np.inf)\n",
    "mask by float": "M = np.tril(np.full((T, T), float('-inf')), k=-1).T\n",
    "a given answer called": "out, w = scaled_dot_product_attention(Q, K, V)\n",
}


@pytest.mark.parametrize("style", OTHER_STYLES)
def test_the_detector_finds_each_style(style):
    assert findings(OTHER_STYLES[style]) != []


def test_the_detector_finds_the_attention_the_wheel_used_to_carry():
    kinds = " ".join(findings(OLD_RUN_HEAD))
    assert "softmax" in kinds and "causal mask" in kinds


def test_the_detector_finds_the_reference_answers():
    ps1, ps2 = ((ROOT / "solutions" / f"{a}.py").read_text() for a in ("ps1", "ps2"))
    assert any("softmax" in f for f in findings(ps1))
    assert any("causal mask" in f for f in findings(ps2))


def test_the_detector_leaves_a_property_alone():
    # The visible check of previous_token_head: a weight from score margins, no softmax.
    margin = ("log_tail = float(np.logaddexp.reduce(-margins))\n"
              "on_prev = 1.0 / (1.0 + np.exp(log_tail))\n"
              "on_self = on_prev * float(np.exp(-margins[-1]))\n")
    assert findings(margin) == []
