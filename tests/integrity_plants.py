"""Ways a student disguises a copy, and ways honest students come to look alike: for
tests/test_integrity.py and benchmarks/integrity_cost.py. Each takes and returns source text."""
from __future__ import annotations

import ast
import builtins
import json
import random

from autograder.assignments import ASSIGNMENTS

EXERCISES = frozenset(name for names in ASSIGNMENTS.values() for name in names) | {"softmax"}
_KEEP = frozenset(dir(builtins)) | EXERCISES


def rename_everything(source: str, tag: str = "mine") -> str:
    """Every name the student chose (locals, parameters, helpers, classes, module aliases like
    ``np``) renamed; the exercises' names kept (they are graded). Also reformats (ast.unparse)."""
    tree = ast.parse(source)
    imported = {a.asname or a.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    names: dict[str, str] = {}

    def new(name: str) -> str:
        if name in _KEEP or (name in imported and name != "np"):
            return name
        return names.setdefault(name, f"{tag}_{len(names)}")

    class Renamer(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = new(node.id)
            return node

        def visit_arg(self, node):
            node.arg = new(node.arg)
            return node

        def visit_FunctionDef(self, node):
            node.name = new(node.name)
            self.generic_visit(node)
            return node

        def visit_ClassDef(self, node):
            node.name = new(node.name)
            self.generic_visit(node)
            return node

        def visit_keyword(self, node):  # f(axis=-1) names numpy's parameter: not the student's to rename
            self.generic_visit(node)
            return node

        def visit_alias(self, node):
            if node.name == "numpy" and node.asname == "np":
                node.asname = new("np")
            return node

    return ast.unparse(Renamer().visit(tree)) + "\n"


def add_comments(source: str) -> str:
    """A comment after every line that opens a block, and one before every statement of the module."""
    out = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped and not stripped.startswith(("#", ")", "]", "}")) and not line.startswith(" "):
            out.append(f"{indent}# my own work: {stripped[:20]}")
        out.append(line)
        if stripped.endswith(":"):
            out.append(f"{indent}    # here is the step I worked out")
    return "\n".join(out) + "\n"


def reorder_functions(source: str, seed: int = 0) -> str:
    """The module's top-level statements after its imports, shuffled."""
    tree = ast.parse(source)
    head = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    random.Random(seed).shuffle(rest)
    lines = source.splitlines()
    parts = ["\n".join(lines[s.lineno - 1 : s.end_lineno]) for s in head]
    parts += ["\n".join(lines[min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]) - 1
                               : s.end_lineno]) for s in rest]
    return "\n\n\n".join(parts) + "\n"


def functions(source: str) -> dict[str, str]:
    """Top-level function name -> its text."""
    tree = ast.parse(source)
    lines = source.splitlines()
    return {s.name: "\n".join(lines[s.lineno - 1 : s.end_lineno]) for s in tree.body if isinstance(s, ast.FunctionDef)}


def replace_functions(source: str, donor: str, names: list[str]) -> str:
    """``source`` with the top-level functions ``names`` taken from ``donor`` instead."""
    mine, theirs = functions(source), functions(donor)
    for name in names:
        source = source.replace(mine[name], theirs[name])
    return source


def notebook_with(released: dict, answers: dict[str, str], extra: list[str] = (),
                  outputs: dict[str, list] | None = None, counts: list[int] | None = None) -> str:
    """A saved notebook: the released one with ``answers`` (exercise -> cell text) in the
    solution cells, ``extra`` cells appended (each with a fresh id), and saved outputs."""
    import copy
    import uuid

    nb = copy.deepcopy(released)
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("_code") and grade_id[: -len("_code")] in answers:
            cell["source"] = answers[grade_id[: -len("_code")]]
            if outputs and grade_id[: -len("_code")] in outputs:
                cell["outputs"] = outputs[grade_id[: -len("_code")]]
    for text in extra:
        nb["cells"].append({"cell_type": "code", "id": uuid.uuid4().hex[:8], "metadata": {},
                            "execution_count": None, "outputs": [], "source": text})
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for cell, n in zip(code, counts or [], strict=False):
        cell["execution_count"] = n
    return json.dumps(nb, indent=1)
