"""A table as files a reader can open anywhere: a self-contained HTML page (what
Snakemake's report shows inline) and CSV beside it (what a spreadsheet opens)."""

from __future__ import annotations

import html
from pathlib import Path

from parbench.records import write_atomic

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
"""


def _is_number(text: str) -> bool:
    stripped = text.replace(",", "").replace("%", "").strip()
    try:
        float(stripped)
    except ValueError:
        return stripped == "n/a"
    return True


def table_html(frame, caption: str, title: str) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            text = "" if value is None else str(value)
            cls = ' class="num"' if text and _is_number(text) else ""
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
            f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody></table>\n</body></html>\n")


def write_table_views(frame, stem: Path, caption: str) -> list[Path]:
    """Write `<stem>.html` (the table under its caption), `<stem>.csv` and `<stem>.rst`
    (the caption again, as Snakemake's report shows it beside the HTML); return their
    paths."""
    stem = Path(stem)
    html_path, csv_path, rst_path = (stem.with_suffix(ext) for ext in (".html", ".csv", ".rst"))
    write_atomic(html_path, table_html(frame, caption, stem.name))
    write_atomic(csv_path, frame.to_csv(index=False))
    write_atomic(rst_path, f"{caption} A CSV copy sits beside it.\n")
    return [html_path, csv_path, rst_path]
