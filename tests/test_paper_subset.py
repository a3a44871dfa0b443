"""The paper's sources use only the Quarto syntax both renderers render alike
(parbench.render.subset): nothing in paper/ depends on what only one renderer has."""

from pathlib import Path

import pytest

from parbench.render import subset

PAPER = Path(__file__).resolve().parents[1] / "paper"
SOURCES = sorted([PAPER / "index.qmd", *(PAPER / "sections").glob("*.qmd"), *(PAPER / "sections").glob("*/*.md")])


def test_there_are_sources_to_check():
    assert len(SOURCES) > 20 and (PAPER / "sections" / "sigpar.qmd") in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PAPER)))
def test_the_source_stays_within_the_subset(path):
    assert subset.problems(path.read_text(), str(path.relative_to(PAPER))) == []


@pytest.mark.parametrize("text, found", [
    ("{{< pagebreak >}}", "shortcode"),
    ("See @smith2020.", "citation"),
    ("![A](a.svg){#fig-a} and @eq-one", "@eq"),
    ("$$x$$ {#eq-one}", "label kind #eq-"),
    ("::: {.column-margin}\nnote\n:::", "div"),
    ("::: {layout-ncol=2}\n:::", "div"),
    ("```{python}\nprint(1)\n```", "executable"),
    ("```{=html}\n<br>\n```", "raw block"),
    ("#| echo: false", "cell option"),
])
def test_syntax_outside_the_subset_is_named(text, found):
    assert any(found in p for p in subset.problems(text, "t.md"))


def test_the_subset_itself_passes():
    text = ("# Method {#sec-method}\n{{< include _generated/x.md >}}\nAs @sec-method and @fig-a show.\n"
            "::: {.callout-note title=\"Peers\"}\ntext\n:::\n```{.text style=\"white-space: pre\"}\nraw\n```\n"
            "[1.0 s]{.fact key=\"s.x\"} mail@example.org\n{#- a Jinja comment with {#sec-x} in it -#}{{ f.x }}")
    assert subset.problems(text, "t.md") == []
