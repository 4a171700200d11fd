"""No import circle in the Python package, as tests/test_c_layers.py keeps the C core's layers:
the modules' imports of each other, module-level and inside functions alike, form no cycle."""
from __future__ import annotations

import ast
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


def graph() -> dict[str, set[str]]:
    return {m: imports_of(p) for m, p in MODULES.items()}


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
