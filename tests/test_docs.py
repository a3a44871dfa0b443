"""The documentation: a README a newcomer reads in one sitting, and links that lead somewhere."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "CHANGELOG.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)?(?:#([^)\s]*))?\)")


def _anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (outside code blocks)."""
    anchors, fenced = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_the_readme_stays_short_and_points_to_the_manuals():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for study in ("sigpar", "sched", "gil", "dispatch", "kem"):
        assert f"docs/studies/{study}.md" in readme
        assert (REPO / "docs/studies" / f"{study}.md").is_file()


def test_every_relative_link_and_anchor_resolves():
    broken = []
    for rel in DOCS:
        doc = REPO / rel
        for target, anchor in LINK.findall(doc.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path = (doc.parent / target).resolve() if target else doc
            if not path.exists():
                broken.append(f"{rel}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path.read_text()):
                broken.append(f"{rel}: {target}#{anchor}")
    assert not broken, broken


def test_the_readme_test_command_is_what_ci_runs():
    assert "exec make test" in (REPO / ".ci/run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
