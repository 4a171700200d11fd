"""The documentation: every relative link resolves, every benchmark has its manual beside
its code, and the README stays a ten-minute read."""
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("src/*/README.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # code blocks hold no links
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(document):
    missing = [t for t in relative_links(document) if not (document.parent / t.split("#")[0]).exists()]
    assert not missing, f"{document.relative_to(REPO)} links to missing files: {missing}"


def test_the_link_checker_sees_links():
    assert "docs/reframe.md" in relative_links(REPO / "README.md")


def test_every_benchmark_has_its_manual_and_the_readme_lists_it():
    readme = (REPO / "README.md").read_text()
    benchmarks = sorted(p.parent.name for p in REPO.glob("src/*/main.c"))
    assert len(benchmarks) >= 7  # halo, pingpong, torus, alltoall, contention, eager, noise
    for name in benchmarks:
        assert (REPO / "src" / name / "README.md").exists(), name
        assert f"src/{name}/README.md" in readme, name


def test_the_readme_is_short():
    assert len((REPO / "README.md").read_text().splitlines()) < 200


def test_the_papers_findings_table_states_each_finding_as_its_record():
    """docs/papers.md's table of the findings has one row a finding record (jitterbench/findings.py),
    its check and the paper's finding as the record states them: the record is the one source."""
    from jitterbench import findings
    text = (REPO / "docs" / "papers.md").read_text()
    table = text[text.index("## The findings, reproduced"):]
    rows = re.findall(r"^\| (\w+Finding)(?: \(torus\))? \| (.*?) \| ", table, re.M)
    assert rows == [(f.check, f.claim) for f in findings.FINDINGS.values()]
