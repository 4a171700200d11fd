"""No import circle in the Python package, as tests/test_c_layers.py keeps the C core's layers:
the modules' imports of each other, module-level and inside functions alike, form no cycle."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jitterbench"


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    """The package's modules a module imports, module-level and inside functions alike."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0]
            target = f"{base}.{node.module}" if node.module else base
            found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jitterbench"):
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                      for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in MODULES}
    return (found & MODULES.keys()) - {name}


@functools.cache  # read once for every test of the package's imports (tests/test_architecture.py too)
def graph() -> dict[str, frozenset[str]]:
    return {m: frozenset(imports_of(p)) for m, p in MODULES.items()}


def cycle(edges) -> list[str] | None:
    """A cycle of edges, or None (depth-first search)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.unit
def test_the_package_has_no_import_circle():
    found = cycle(graph())
    assert found is None, "import circle: " + " -> ".join(found)


@pytest.mark.unit
def test_a_circle_is_found():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


HARNESS = PACKAGE / "harness"


def reframe_imports(path: Path) -> list[int]:
    """The lines of a module that import ReFrame, module-level and inside functions alike."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "reframe" for a in node.names)
            or isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "reframe"]


@pytest.mark.unit
def test_only_the_harness_imports_reframe():
    """jitterbench/harness/ is the ReFrame side (issue 43, item 1): a module elsewhere that imports
    ReFrame would load it for commands that only read files (tests/test_layout.py times them)."""
    stray = {module_name(p): lines for p in PACKAGE.rglob("*.py")
             if HARNESS not in p.parents and (lines := reframe_imports(p))}
    assert stray == {}, f"modules outside jitterbench/harness/ that import ReFrame (lines): {stray}"
    assert reframe_imports(HARNESS / "checks.py")  # the rule sees an import where there is one


@pytest.mark.unit
def test_a_stray_reframe_import_is_found(tmp_path):
    module = tmp_path / "stray.py"
    module.write_text("def f():\n    from reframe.core.backends import getlauncher\n    import os, reframe as rfm\n")
    assert reframe_imports(module) == [2, 3]
    module.write_text("from .reframe_like import x\nimport reframes\n")
    assert reframe_imports(module) == []
