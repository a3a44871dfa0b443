"""Tests of the paper renderer (parbench.render): the pandoc fallback on a small
Quarto project fixture, and the choice between Quarto and pandoc."""

from __future__ import annotations

import html
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

from parbench.render import (
    CrossRefError,
    MissingIncludeError,
    QuartoNotFoundError,
    RenderError,
    UnsupportedSyntaxError,
    find_quarto,
    render_paper,
)
from parbench.render.__main__ import main as cli_main

FIXTURE = Path(__file__).parent / "fixtures" / "paper"


def _text(page: str) -> str:
    """The visible text of an HTML page, whitespace collapsed."""
    page = re.sub(r"<(style|script|math)\b.*?</\1>", " ", page, flags=re.S)
    page = re.sub(r"</?(?:p|div|h\d|li|ul|nav|header|figure|figcaption|caption|table|tr|td|th)\b[^>]*>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page))).strip()


@pytest.fixture
def no_quarto(monkeypatch, tmp_path):
    """A PATH without quarto (pandoc comes from pypandoc-binary by absolute path)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert find_quarto() is None


@pytest.fixture
def paper(tmp_path) -> Path:
    dest = tmp_path / "paper"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("_output", ".quarto"))
    return dest


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The fixture rendered once with the pandoc renderer: (result, html, log lines)."""
    dest = tmp_path_factory.mktemp("rendered") / "paper"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("_output", ".quarto"))
    lines: list[str] = []
    result = render_paper(dest, renderer="pandoc", log=lines.append)
    return result, result.output_path.read_text(encoding="utf-8"), lines


def _write_paper(root: Path, body: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.qmd").write_text("---\ntitle: T\n---\n\n" + body, encoding="utf-8")
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# --- the pandoc renderer on the fixture ----------------------------------------------

def test_pandoc_output_location_and_result(rendered):
    result, _, lines = rendered
    assert result.renderer == "pandoc"
    assert re.fullmatch(r"3(\.\d+)+", result.renderer_version)
    assert result.output_path.name == "index.html"
    assert result.output_path.parent.name == "_output"  # output-dir from _quarto.yml
    assert result.figures == ["fig-scaling", "fig-speedup"]
    assert result.warnings == []
    assert lines[0].startswith("paper: rendered ")
    assert f"with pandoc {result.renderer_version} and typst " in lines[0] and "(pandoc renderer requested)" in lines[0]


def test_pandoc_output_is_self_contained(rendered):
    _, page, _ = rendered
    srcs = re.findall(r"""\bsrc=["']([^"']*)["']""", page)
    assert len(srcs) == 2
    assert all(s.startswith("data:") for s in srcs), srcs
    assert "data:image/svg+xml;base64," in page
    assert "data:image/png;base64," in page
    assert not re.search(r"<link\b[^>]*stylesheet", page)  # the CSS is inlined
    assert "max-width: 50em" in page


def test_figures_tables_and_numbering(rendered):
    _, page, _ = rendered
    assert 'id="fig-scaling"' in page and 'id="fig-speedup"' in page
    assert 'id="tbl-summary"' in page
    text = _text(page)
    assert "Figure 1: Scaling of sigpar with threads." in text
    assert "Figure 2: Speedup of telemetry with processes." in text
    assert "Table 1: Summary of the runs." in text
    # figures numbered in order of appearance: fig-scaling comes first
    assert page.index('id="fig-scaling"') < page.index('id="fig-speedup"')


def test_cross_references_resolved(rendered):
    _, page, _ = rendered
    text = _text(page)
    assert "see Figure 1 for threads and Figure 2 for processes" in text
    assert "Table 1 summarises the runs and Section 2 discusses them" in text
    assert "As 1 and see Table 1 show" in text  # [-@fig-x] and [see @tbl-x]
    assert '<a href="#fig-scaling" class="quarto-xref">Figure 1</a>' in page
    assert 'href="#tbl-summary"' in page and 'href="#sec-results"' in page
    assert "@fig-" not in text and "@tbl-" not in text and "@sec-" not in text


def test_includes_metadata_sections_callouts(rendered):
    _, page, _ = rendered
    text = _text(page)
    assert "{{<" not in page
    assert "telemetry 8 3.40" in text  # from the included _generated/results.md
    assert 'id="fig-speedup"' in page  # from the nested include
    # title block from the front matter, toc and numbered sections from _quarto.yml
    assert '<h1 class="title">Fixture paper</h1>' in page
    assert "A test of the paper renderer" in text
    assert "<strong>parbench</strong>" in page
    assert 'id="TOC"' in page
    assert "2 Results" in text and "3 Discussion" in text
    assert 'class="callout callout-note"' in page and "Note Figures and tables" in text
    assert 'class="callout callout-warning"' in page and "Caveat One machine only." in text
    assert '<span class="raw-marker">raw</span>' in page


def test_output_option_and_cli(paper, tmp_path, no_quarto, capsys):
    out = tmp_path / "elsewhere" / "paper.html"
    assert cli_main([str(paper), "--renderer", "pandoc", "--output", str(out)]) == 0
    assert out.is_file() and 'id="fig-scaling"' in out.read_text(encoding="utf-8")
    assert not (paper / "_output").exists()
    assert "paper: rendered" in capsys.readouterr().out

    (paper / "index.qmd").write_text("See @fig-nope.\n", encoding="utf-8")
    assert cli_main([str(paper), "--renderer", "pandoc", "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "error" in err and "fig-nope" in err


def test_the_pdf_beside_the_html_has_the_same_numbers(tmp_path, no_quarto):
    dest = tmp_path / "paper"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("_output", ".quarto"))
    from parbench.render.pandoc import render_with_pandoc
    from parbench.render.project import load_project

    keep = tmp_path / "intermediate"
    outcome = render_with_pandoc(load_project(dest), dest / "_output" / "index.html", keep_intermediate=keep,
                                 pdf_output=dest / "_output" / "index.pdf")
    assert outcome.pdf == dest / "_output" / "index.pdf"
    assert outcome.pdf.read_bytes().startswith(b"%PDF-") and outcome.pdf.stat().st_size > 5000
    typ = (keep / "document.typ").read_text()
    # the HTML's numbers, written into captions and references; Typst's own numbering off
    assert "#set figure(numbering: none)" in typ
    assert "Figure 1: Scaling of sigpar with threads." in typ and "Table 1: Summary of the runs." in typ
    assert "#link(<fig-scaling>)[Figure 1]" in typ and "<fig-speedup>" in typ
    # the image by its path in the project, read with Typst rooted at the project folder (as
    # Quarto's index.typ beside index.qmd)
    assert 'image("figures/scaling.svg"' in typ and str(dest.resolve()) not in typ
    assert "#outline(" in typ  # the table of contents, as in the HTML
    # callouts drawn as boxes (pandoc's Typst writer alone prints them as plain paragraphs)
    assert typ.count('#block(width: 100%, inset: 8pt') == 2
    assert 'stroke: (left: 3pt + rgb("#e0a800"))' in typ  # the warning's colour
    assert "#strong[Caveat]" in typ and "One machine only." in typ


def test_typst_is_rooted_at_the_quarto_project_and_refuses_a_figure_outside_it(tmp_path, no_quarto):
    """Quarto runs Typst with --root = the project folder: a figure from outside the project
    renders in the HTML but not in the PDF. The fallback fails the same way, naming it."""
    (tmp_path / "figures").mkdir()
    shutil.copy(FIXTURE / "figures" / "scaling.svg", tmp_path / "figures" / "outside.svg")
    root = _write_paper(tmp_path / "paper", "See @fig-out.\n\n![Outside.](../figures/outside.svg){#fig-out}\n")
    assert render_paper(root, renderer="pandoc", log=None, pdf=False).figures == ["fig-out"]
    with pytest.raises(RenderError) as info:
        render_paper(root, renderer="pandoc", log=None)
    message = str(info.value)
    assert "escape the project root" in message  # Typst's own refusal
    assert "../figures/outside.svg" in message and f"Quarto project folder {root.resolve()}" in message
    assert not (root / "_output" / "index.pdf").exists()
    assert not list((root / "_output").glob(".*.tmp"))
    # the same figure inside the project (where the pipeline copies the paper's figures)
    shutil.copytree(tmp_path / "figures", root / "_generated" / "figures")
    _write_paper(root, "See @fig-in.\n\n![Inside.](_generated/figures/outside.svg){#fig-in}\n")
    result = render_paper(root, renderer="pandoc", log=None)
    assert result.pdf_path.read_bytes().startswith(b"%PDF-") and result.pdf_path.stat().st_size > 5000


def test_the_renderer_says_it_made_both(rendered):
    result, _, lines = rendered
    assert result.pdf_path == result.output_path.with_suffix(".pdf") and result.pdf_path.is_file()
    assert "and " in lines[0] and "index.pdf with pandoc" in lines[0] and "typst" in lines[0]


# --- errors -------------------------------------------------------------------------

def test_missing_include_names_the_file(tmp_path):
    root = _write_paper(tmp_path / "p", "Text.\n\n{{< include _generated/absent.md >}}\n")
    with pytest.raises(MissingIncludeError, match=r"_generated/absent\.md"):
        render_paper(root, renderer="pandoc", log=None)
    assert not (root / "_output" / "index.html").exists()


def test_missing_nested_include_names_the_file(tmp_path):
    root = _write_paper(
        tmp_path / "p", "{{< include _generated/a.md >}}\n",
        {"_generated/a.md": "A\n\n{{< include _generated/b.md >}}\n"},
    )
    with pytest.raises(MissingIncludeError, match=r"_generated/b\.md"):
        render_paper(root, renderer="pandoc", log=None)


def test_nested_includes_are_relative_to_the_main_document_as_in_quarto(tmp_path):
    # Quarto pastes an include into the main document: a path inside an included file is
    # relative to the main document's folder, not to the included file's.
    root = _write_paper(
        tmp_path / "p", "{{< include _generated/a.md >}}\n",
        {"_generated/a.md": "A\n\n{{< include sections/b.md >}}\n", "sections/b.md": "From B.\n",
         "_generated/sections/b.md": "Wrong B.\n"},
    )
    page = render_paper(root, renderer="pandoc", log=None).output_path.read_text()
    assert "From B." in page and "Wrong B." not in page


def test_include_cycle(tmp_path):
    root = _write_paper(tmp_path / "p", "{{< include a.md >}}\n", {"a.md": "{{< include a.md >}}\n"})
    with pytest.raises(RenderError, match="include cycle"):
        render_paper(root, renderer="pandoc", log=None)


def test_unknown_cross_reference_names_it(tmp_path):
    root = _write_paper(
        tmp_path / "p",
        "![A figure.](a.svg){#fig-known}\n\nSee @fig-knwon and @tbl-nothing.\n",
        {"a.svg": (FIXTURE / "figures" / "scaling.svg").read_text()},
    )
    with pytest.raises(CrossRefError) as info:
        render_paper(root, renderer="pandoc", log=None)
    message = str(info.value)
    assert "@fig-knwon" in message and "did you mean @fig-known" in message
    assert "@tbl-nothing" in message


def test_a_reference_of_another_kind_or_a_citation_is_outside_the_subset(tmp_path):
    root = _write_paper(tmp_path / "p", "See @lst-code.\n")
    with pytest.raises(UnsupportedSyntaxError, match=r"index\.qmd: @lst-.*allowed: @sec-, @fig-, @tbl-"):
        render_paper(root, renderer="pandoc", log=None)
    root = _write_paper(tmp_path / "q", "As [@smith2020] showed.\n")
    with pytest.raises(UnsupportedSyntaxError, match=r"@smith2020"):
        render_paper(root, renderer="pandoc", log=None)


def test_a_figure_image_inside_a_paragraph_is_refused(tmp_path):
    root = _write_paper(tmp_path / "p", "Text ![x](a.svg){#fig-inline} and more.\n",
                        {"a.svg": (FIXTURE / "figures" / "scaling.svg").read_text()})
    with pytest.raises(CrossRefError, match=r"\{#fig-inline\} \(a\.svg\) is not a figure"):
        render_paper(root, renderer="pandoc", log=None, pdf=False)


def test_a_duplicate_label_is_refused(tmp_path):
    root = _write_paper(tmp_path / "p", "# One {#sec-a}\n\n# Two {#sec-a}\n")
    with pytest.raises(CrossRefError, match=r"duplicate cross-reference id #sec-a"):
        render_paper(root, renderer="pandoc", log=None, pdf=False)


def test_headings_inside_a_callout_are_not_numbered_and_references_say_their_title(tmp_path):
    root = _write_paper(tmp_path / "p", "# First {#sec-first}\n\n::: {.callout-note title=\"Aside\"}\n"
                        "## Inside {#sec-inside}\n\nSee @sec-first and @sec-inside.\n:::\n\n# Second {#sec-second}\n\n"
                        "Back to @sec-second.\n", {"_quarto.yml": "format:\n  html:\n    number-sections: true\n"})
    text = _text(render_paper(root, renderer="pandoc", log=None, pdf=False).output_path.read_text())
    assert "1 First" in text and "2 Second" in text and "1.1" not in text
    assert "See Section 1 and Inside." in text and "Back to Section 2." in text


def test_missing_image_names_it(tmp_path):
    root = _write_paper(tmp_path / "p", "![Gone.](../figures/local/gone.svg){#fig-gone}\n")
    with pytest.raises(RenderError, match=r"gone\.svg"):
        render_paper(root, renderer="pandoc", log=None)


def test_a_table_glued_to_the_paragraph_before_it_is_refused(tmp_path):
    glued = ("Text of the paragraph.\n+---+---+\n| a | b |\n+===+===+\n| 1 | 2 |\n+---+---+\n\n"
             ": Caption {#tbl-glued}\n")
    root = _write_paper(tmp_path / "p", glued)
    with pytest.raises(RenderError, match=r"tbl-glued"):
        render_paper(root, renderer="pandoc", log=None)
    root = _write_paper(tmp_path / "q", glued.replace("paragraph.\n", "paragraph.\n\n"))
    render_paper(root, renderer="pandoc", log=None)


def test_the_table_and_figure_helpers_stand_apart_from_the_text_before_them():
    import pandas as pd

    from parbench.paper.format import figure, md_table

    assert md_table(pd.DataFrame({"a": [1]}), "Cap", "tbl-x").startswith("\n")
    assert figure("local", "x", "Cap", "fig-x").startswith("\n")


def test_a_pipe_tables_columns_are_as_wide_as_their_text_asks():
    # pandoc sizes a table wider than the page by the dashes of its alignment row: a column
    # of one short word had as much room as one of long text, and a narrow one broke words
    import pandas as pd

    from parbench.paper.format import MAX_COLUMN_WEIGHT, TABLE_LINE_CHARS, _column_widths, md_table

    frame = pd.DataFrame({"op": ["encaps"], "n": ["12"], "measured here": ["512: 9.7, 768: 12.4 µs (libcrux-avx2); " * 3],
                          "source": ["src/PERFORMANCE.md"]})
    align = md_table(frame, "Cap", "tbl-x").splitlines()[2]
    dashes = [len(cell.strip(":")) + 1 for cell in align.strip("|").split("|")]
    assert dashes == [10, 6, MAX_COLUMN_WEIGHT, 22]  # "encaps"+4; "12"+4; capped; its one word+4
    assert align.split("|")[2].endswith(":")  # numbers still right-aligned
    # more than a line asks for: every column keeps its longest word, the rest is shared
    wide = _column_widths([["operation", "keypair"], ["x " * 80], ["y " * 70], ["ML-KEM-512"]])
    assert wide[0] >= len("operation") + 4 and wide[3] >= len("ML-KEM-512") + 4
    assert sum(wide) <= TABLE_LINE_CHARS + len(wide) and wide[1] > wide[0]
    # a path in backticks is set in a wider type: its column keeps room for it
    code = _column_widths([["`/tmp/x/native/build/gilcontrol/gil-control`"], ["x " * 80]])
    assert code[0] >= int(len("/tmp/x/native/build/gilcontrol/gil-control") * 1.25) + 4


def test_unsupported_syntax_fails_loudly(tmp_path):
    root = _write_paper(tmp_path / "p", "{{< video https://example.com/v.mp4 >}}\n")
    with pytest.raises(UnsupportedSyntaxError, match="video"):
        render_paper(root, renderer="pandoc", log=None)
    root = _write_paper(tmp_path / "q", "```{python}\nprint(1)\n```\n")
    with pytest.raises(UnsupportedSyntaxError, match="executable code cell"):
        render_paper(root, renderer="pandoc", log=None)


def test_syntax_outside_the_subset_is_refused_naming_the_file_it_is_in(tmp_path):
    """The fallback renders the paper's subset and nothing else, so that the paper never
    depends on what only one renderer has: a div figure, another shortcode, another callout
    kind, in the main document or in an included file."""
    root = _write_paper(tmp_path / "p", "Title is {{< meta title >}}.\n\n::: {#fig-div}\n![](a.svg)\n\nA.\n:::\n")
    with pytest.raises(UnsupportedSyntaxError) as info:
        render_paper(root, renderer="pandoc", log=None)
    assert "index.qmd: the shortcode {{< meta >}}" in str(info.value) and "{#fig-div}" in str(info.value)
    root = _write_paper(tmp_path / "q", "{{< include _generated/a.md >}}\n",
                        {"_generated/a.md": "::: {.callout-tip}\nTip.\n:::\n"})
    with pytest.raises(UnsupportedSyntaxError, match=r"_generated/a\.md: the div .*callout-tip"):
        render_paper(root, renderer="pandoc", log=None)


def test_a_block_div_is_kept_on_one_page_in_typst_and_stays_a_div_in_html(tmp_path, no_quarto):
    """`::: {.block breakable="false"}`, as Quarto's typst format writes it: a Typst block
    with the div's attributes; any other `.block` attribute is outside the subset."""
    from parbench.render.pandoc import render_with_pandoc
    from parbench.render.project import load_project

    root = _write_paper(tmp_path / "p", 'Text.\n\n::: {.block breakable="false"}\nA against B:\n\n'
                                         '```text\n| a | b |\n```\n:::\n')
    keep = tmp_path / "intermediate"
    render_with_pandoc(load_project(root), root / "_output" / "index.html", keep_intermediate=keep,
                       pdf_output=root / "_output" / "index.pdf")
    typ = (keep / "document.typ").read_text()
    assert re.search(r"#block\(breakable: false\)\[\s*A against B:\s*```text\s*\| a \| b \|\s*```\s*\]", typ), typ
    page = (root / "_output" / "index.html").read_text()
    assert 'class="block"' in page and "A against B:" in _text(page)
    root = _write_paper(tmp_path / "q", '::: {.block fill="red"}\nA.\n:::\n')
    with pytest.raises(UnsupportedSyntaxError, match=r'the div .*fill="red".* a \.block with breakable="false"'):
        render_paper(root, renderer="pandoc", log=None)


# --- choosing the renderer ------------------------------------------------------------

def test_quarto_renderer_without_quarto_is_a_clear_error(paper, no_quarto):
    with pytest.raises(QuartoNotFoundError) as info:
        render_paper(paper, renderer="quarto", log=None)
    message = str(info.value)
    assert "quarto" in message and "conda-forge" in message
    assert "https://quarto.org/docs/get-started/" in message


def test_auto_without_quarto_uses_pandoc_and_says_so(paper, no_quarto):
    lines: list[str] = []
    result = render_paper(paper, log=lines.append)
    assert result.renderer == "pandoc"
    assert result.output_path == paper / "_output" / "index.html"
    assert result.output_path.is_file()
    assert "with pandoc" in lines[0] and "(Quarto not found on PATH)" in lines[0]


def test_unknown_renderer(paper):
    with pytest.raises(RenderError, match="unknown renderer"):
        render_paper(paper, renderer="latex", log=None)


# A stand-in for the Quarto CLI (Quarto cannot be installed here). A fake that only wrote
# canned files would pass a paper that real Quarto fails: Quarto 1.8 typesets the PDF with
# Typst rooted at the project folder and refuses any file outside it. So this one renders
# for real where it matters: `quarto render <project>` writes the HTML and the PDF into the
# project's output folder through pandoc and Typst, Typst rooted at the project folder (the
# fallback's route, which keeps Quarto's root rule), and fails as Quarto does, with its
# message and a non-zero exit, when the paper reads outside the project.
FAKE_QUARTO = """#!{python}
import os
import sys
from pathlib import Path

from parbench.render import RenderError, render_paper

args = sys.argv[1:]
if args == ["--version"]:
    print("1.8.25")
    sys.exit(0)
if len(args) != 2 or args[0] != "render":
    sys.exit(2)
project = Path(args[1])
(project / "quarto-args.txt").write_text(" ".join(args) + "\\n")
try:
    render_paper(project, renderer="pandoc", log=None, pdf=not os.environ.get("FAKE_QUARTO_NO_PDF"))
except RenderError as exc:
    print(f"ERROR: {{exc}}", file=sys.stderr)
    sys.exit(1)
"""


@pytest.fixture
def fake_quarto(tmp_path, monkeypatch) -> Path:
    if sys.platform == "win32":
        pytest.skip("the fake quarto is a script with a #! line")
    bindir = tmp_path / "fake-bin"
    bindir.mkdir()
    exe = bindir / "quarto"
    exe.write_text(FAKE_QUARTO.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + os.environ.get("PATH", ""))
    return exe


def test_auto_uses_quarto_when_on_path(paper, fake_quarto, tmp_path):
    assert find_quarto() == str(fake_quarto)
    lines: list[str] = []
    result = render_paper(paper, log=lines.append)
    assert result.renderer == "quarto"
    assert result.renderer_version == "1.8.25"
    assert result.output_path == paper / "_output" / "index.html"
    assert result.figures == ["fig-scaling", "fig-speedup"]
    assert (paper / "quarto-args.txt").read_text().split() == ["render", str(paper)]
    assert "with Quarto 1.8.25" in lines[0]

    out = tmp_path / "copy" / "paper.html"
    result = render_paper(paper, out, renderer="quarto", log=None)
    assert result.output_path == out and 'id="fig-scaling"' in out.read_text()

    assert result.pdf_path == out.with_suffix(".pdf") and out.with_suffix(".pdf").read_bytes().startswith(b"%PDF")

    result = render_paper(paper, renderer="pandoc", log=None)  # forced fallback
    assert result.renderer == "pandoc"


def test_quarto_without_the_typst_format_is_reported(paper, fake_quarto, monkeypatch):
    monkeypatch.setenv("FAKE_QUARTO_NO_PDF", "1")
    with pytest.raises(RenderError, match="did not write .*index.pdf .*typst format"):
        render_paper(paper, log=None)
    assert render_paper(paper, log=None, pdf=False).pdf_path is None


def test_quarto_refusing_a_figure_outside_the_project_is_reported(tmp_path, fake_quarto):
    """What real Quarto 1.8 does with a paper that shows a figure from outside its project:
    `quarto render` fails on the PDF (Typst rooted at the project); the error says why."""
    (tmp_path / "figures").mkdir()
    shutil.copy(FIXTURE / "figures" / "scaling.svg", tmp_path / "figures" / "outside.svg")
    root = _write_paper(tmp_path / "paper", "![Outside.](../figures/outside.svg){#fig-out}\n")
    with pytest.raises(RenderError) as info:
        render_paper(root, log=None)
    message = str(info.value)
    assert f"quarto render {root} failed (exit 1)" in message
    assert "escape the project root" in message and "../figures/outside.svg" in message
