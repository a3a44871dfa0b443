"""The paper's Typst header (paper/typst-header.typ, which Quarto and the pandoc fallback
both set before the text) keeps a table that fits a page whole, with its caption, lets a
longer one continue on the next page, and never splits a code block."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest

typst = pytest.importorskip("typst")

HEADER = Path(__file__).resolve().parents[1] / "paper" / "typst-header.typ"
FILL = "Filler text of the paragraph before the table, long enough to wrap across lines. " * 26


def _table(name: str, rows: int) -> str:
    cells = ", ".join(f"[{name} row {i}], [{i}]" for i in range(rows))
    return f"#figure(table(columns: 2, {cells}), caption: [{name} caption], kind: table)\n"


def _pdf(tmp_path: Path, body: str) -> Path:
    """The document as the paper sets it (justified text): the header, then `body`."""
    source = tmp_path / "doc.typ"
    source.write_text('#set page(height: 14cm, width: 12cm)\n#set par(justify: true)\n'
                      '#show figure: set figure.caption(position: top)\n' + HEADER.read_text() + body)
    pdf = tmp_path / "doc.pdf"
    typst.compile(str(source), output=str(pdf))
    return pdf


def _pages(tmp_path: Path, body: str) -> list[str]:
    """The text of each page of the document."""
    with pdfplumber.open(_pdf(tmp_path, body)) as doc:
        return [page.extract_text() or "" for page in doc.pages]


def _page_of(pages: list[str], text: str) -> int:
    return next(i for i, page in enumerate(pages) if text in page)


def test_a_table_that_fits_a_page_stays_whole_with_its_caption(tmp_path):
    # the paragraph leaves room for the caption and a few rows, not for the table
    pages = _pages(tmp_path, f"{FILL}\n\n{_table('Short', 8)}")
    assert _page_of(pages, "Short caption") == _page_of(pages, "Short row 0") == _page_of(pages, "Short row 7")


def test_a_table_longer_than_a_page_continues_on_the_next(tmp_path):
    pages = _pages(tmp_path, _table("Long", 40))
    first, last = _page_of(pages, "Long row 0"), _page_of(pages, "Long row 39")
    assert last > first and "Long row 39" in pages[last]  # broken, not run past the page's foot


def test_a_code_block_is_never_split(tmp_path):
    code = "\n".join(f"line {i}" for i in range(10))
    pages = _pages(tmp_path, f"{FILL}\n\n```\n{code}\n```\n")
    assert _page_of(pages, "line 0") == _page_of(pages, "line 9")


def test_a_tables_cells_are_not_justified(tmp_path):
    # a narrow column whose text wraps: justified, "25,168 TSC ticks" spread over the cell
    body = ("#figure(table(columns: (3cm, 3cm), align: left, [published], [25,168 TSC ticks (libcrux-avx2)]), "
            "caption: [Narrow], kind: table)\n")
    with pdfplumber.open(_pdf(tmp_path, body)) as doc:
        words = doc.pages[0].extract_words()
    first, second = next((a, b) for a, b in zip(words, words[1:]) if a["text"] == "25,168")
    assert second["text"] == "TSC" and second["x0"] - first["x1"] < 4.0  # one space at 8 pt, not a stretched gap
