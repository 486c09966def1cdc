"""The engine knows no chapter: no module under autograder/ names an exercise, a problem set
or a catalogued mistake of any course here, outside its docstrings and comments; and no
cycle runs through the engine's imports."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autograder import course

ROOT = Path(__file__).resolve().parent.parent
ENGINE = sorted(p for p in (ROOT / "autograder").rglob("*.py"))


def course_words() -> set[str]:
    """Every exercise, problem set and mistake id the two courses declare."""
    words: set[str] = set()
    for root in (ROOT, ROOT / "examples" / "block-course"):
        package = course.read_manifest(root)["package"]
        declared = (root / package / "__init__.py").read_text(encoding="utf-8")
        words |= set(re.findall(r'"(\w+)"', declared.split("EXERCISES", 1)[1].split(")", 1)[0]))
        for module in (root / package / "exercises").glob("*.py"):
            words |= set(re.findall(r'Exercise\(F, "(\w+)"', module.read_text(encoding="utf-8")))
        words |= set(re.findall(r'Mistake\("\w+", "(\w+)"', (root / "solutions" / "mistakes.py").read_text()))
    return words - {"not_implemented", "timeout", "crashed"}  # the engine's own outcomes


WORDS = course_words()


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def named(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found += [w for w in WORDS if re.search(rf"\b{w}\b", node.value)]
        elif isinstance(node, ast.Name) and node.id in WORDS:
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in WORDS:
            found.append(node.attr)
    return sorted(set(found))


def test_the_courses_declare_words_to_look_for():
    assert {"softmax", "ps1", "layer_norm", "block1", "unstable_softmax", "eps_outside_sqrt"} <= WORDS


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_engine_module_names_a_course(path):
    assert named(path) == []


def test_the_detector_sees_a_name_in_code(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""softmax is fine here."""\nMAP = {"causal_mask": 1}\n')
    assert named(sample) == ["causal_mask"]


# ---------------------------------------------------------------- the import graph

def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ENGINE}


def imports(name: str) -> set[str]:
    """Every engine module ``name`` imports, wherever the import stands (inside a function
    too: an import put off to dodge a cycle is still one)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in MODULES and m != name}


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = {m: imports(m) for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in sorted(MODULES):
        if m not in index:
            visit(m)
    return found


def test_no_cycle_runs_through_the_engines_imports():
    assert cycles() == []


def test_the_graph_sees_the_engines_imports():
    assert {"autograder.course", "autograder.exercise"} <= imports("autograder.assignments")
    assert "autograder.spec" in imports("autograder.exercise")
    assert "autograder.class_results" in imports("autograder.report.dashboard")
