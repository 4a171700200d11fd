"""docs/architecture.md draws the house as it is: every module of jitterbench/ and every piece of
src/core/ in its layer with its one job, none that does not exist, and no module importing from a
layer above its own (its imports as tests/test_imports.py reads them: module-level and inside
functions alike).  Read as text: nothing is imported or built."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_c_layers import CORE, INCLUDE, UMBRELLA, piece_of
from test_imports import graph

pytestmark = pytest.mark.unit

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
PACKAGE_SECTION = "## jitterbench/"
CORE_SECTION = "## src/core/"
ROW = re.compile(r"^\|\s*(`[^|]+)\|\s*([^|]*?)\s*\|\s*$", re.M)  # | `name`, `name` | its job |


def section(text: str, title: str) -> str:
    """The part of the page under the heading that begins with title, to the next heading of its level."""
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:] if end < 0 else text[start:end]


def rows(text: str) -> list:
    """(names, job) of each table row whose first cell names modules or pieces in backticks."""
    return [(re.findall(r"`([^`]+)`", names), job) for names, job in ROW.findall(text)]


def drawn_layers(text: str) -> dict:
    """{module's full name: its layer (1 at the bottom)} as the page draws jitterbench/; a name
    drawn twice is the last layer's."""
    layers = {}
    for number, body in re.findall(r"^### (\d+)\. [^\n]*\n(.*?)(?=^### |\Z)", section(text, PACKAGE_SECTION),
                                   re.M | re.S):
        for names, _ in rows(body):
            for name in names:
                layers["jitterbench" if name == "jitterbench" else f"jitterbench.{name}"] = int(number)
    return layers


def problems(text: str, imports: dict) -> list:
    """What the page gets wrong of the package whose imports are {module: the modules it imports}:
    one line each."""
    layers = drawn_layers(text)
    found = [f"{m}: a module the page does not draw" for m in sorted(set(imports) - set(layers))]
    found += [f"{m}: drawn, but no module of the package" for m in sorted(set(layers) - set(imports))]
    found += [f"{m} (layer {layers[m]}) imports {n} (layer {layers[n]}), a layer above it"
              for m in sorted(imports) for n in sorted(imports[m])
              if m in layers and n in layers and layers[n] > layers[m]]
    found += [f"{', '.join(names)}: no job said" for names, job in rows(section(text, PACKAGE_SECTION)) if not job]
    return found


def drawn_pieces(text: str) -> list:
    return [name for names, _ in rows(section(text, CORE_SECTION)) for name in names]


def test_the_page_draws_every_module_in_its_layer_and_no_import_reaches_up():
    assert problems(DOC.read_text(), graph()) == []


def test_the_page_draws_every_piece_of_the_core_in_the_umbrella_s_order():
    order = [piece_of(h) for h in INCLUDE.findall((CORE / UMBRELLA).read_text())]
    assert drawn_pieces(DOC.read_text()) == order
    assert all(job for _, job in rows(section(DOC.read_text(), CORE_SECTION)))


def test_a_module_not_drawn_a_stray_name_and_an_upward_import_are_caught():
    text = DOC.read_text()
    imports = {m: set(edges) for m, edges in graph().items()}
    imports["jitterbench.new_module"] = set()                       # written, not drawn
    del imports["jitterbench.plan"]                                 # drawn, since removed
    imports["jitterbench.settings"].add("jitterbench.cli")          # the base reaching for the command
    assert problems(text, imports) == [
        "jitterbench.new_module: a module the page does not draw",
        "jitterbench.plan: drawn, but no module of the package",
        "jitterbench.settings (layer 1) imports jitterbench.cli (layer 5), a layer above it"]
    # a piece of the core left out of the page, and one the core does not have
    assert drawn_pieces(text.replace("| `watchdog` |", "| `watchman` |")) != \
        [piece_of(h) for h in INCLUDE.findall((CORE / UMBRELLA).read_text())]
