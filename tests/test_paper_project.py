"""The paper is a Quarto project that reads nothing outside its folder: Quarto typesets the
PDF with Typst rooted at the project folder, which refuses any file outside it (Quarto 1.8:
"failed to load file (access denied)"). The smoke run checks the rendered paper itself
(tests/test_pipeline_smoke.py)."""

import re
from pathlib import Path

import pytest

from parbench import paths
from parbench.paper.format import figure

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / paths.PAPER_DIR
# a markdown image's target, an include's path
_TARGETS = re.compile(r"!\[[^\]]*\]\(([^)\s]+)|\{\{<\s*include\s+(\S+)\s*>\}\}")


@pytest.mark.parametrize("profile", ["local", "m4", "smoke"])
def test_a_figure_of_the_paper_is_a_file_inside_the_quarto_project(profile):
    target = _TARGETS.search(figure(profile, "sigpar_scaling", "Caption.", "fig-x")).group(1)
    resolved = (PAPER / target).resolve()
    assert resolved.is_relative_to(PAPER.resolve()), target
    # the copy the pipeline makes (rule paper_figure) of the figure it draws
    assert resolved == (REPO / paths.PAPER_FIGURES.format(profile=profile) / "sigpar_scaling.svg").resolve()


def test_the_paper_sources_name_nothing_outside_the_project():
    # the sections are pasted into index.qmd: their paths are relative to paper/, as Quarto reads them
    for source in sorted(PAPER.rglob("*.qmd")):
        for image, include in _TARGETS.findall(source.read_text()):
            target = image or include
            assert (PAPER / target).resolve().is_relative_to(PAPER.resolve()), (source, target)
