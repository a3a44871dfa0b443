"""How the generated parts of the paper write numbers, tables and figures: shared by
every study's paper module so that the whole paper reads alike."""

from __future__ import annotations

import math
import posixpath
from typing import Any, Callable

import pandas as pd

from parbench import paths
from parbench.words import counted  # noqa: F401  (the paper's filter, written once for the console too)


def fmt_num(x, digits: int = 3) -> str:
    """A readable number: 3 significant digits, thousands separators."""
    if x is None or pd.isna(x):
        return "n/a"
    x = float(x)
    if abs(x) >= 999.5:  # what rounds to 1,000 or more (never "1e+03")
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def fmt_pct(x) -> str:
    return "n/a" if x is None or pd.isna(x) else f"{100 * float(x):.0f}%"


def pct_format(*values) -> str:
    """`pct`, or `pct2` where a value's whole percent would read 0% or 100% though it is
    neither (an efficiency of 99.97% below full efficiency must not print as 100%), or
    where it lies below one percent (0.69% is not "1%"): one format for all `values`, so
    a range's ends share their precision."""
    for v in values:
        if v is None or pd.isna(v) or float(v) in (0.0, 1.0):
            continue
        if fmt_pct(v) in ("0%", "100%") or abs(float(v)) < 0.01:
            return "pct2"
    return "pct"


def mid_sentence(title: str) -> str:
    """A title inside a sentence: its first letter small unless its first word is an
    acronym or a name ("the GIL across Python runtimes", "ML-KEM key exchange")."""
    return title[:1].lower() + title[1:] if title[1:2].islower() else title


def sentence_start(name: str) -> str:
    """A name opening a sentence: its first letter capital ("push mode" to "Push mode"), the
    rest as it is ("ProcessPoolExecutor", "push-naive" to "Push-naive")."""
    return name[:1].upper() + name[1:]


def possessive(name) -> str:
    """A name's possessive ("ws's"). After a final digit the apostrophe is escaped
    ("libcrux-avx2\\'s"): both renderers then set it as an apostrophe, where Typst's smart
    quote makes one after a digit a prime ("avx2′s", a length in feet)."""
    text = str(name)
    return text + ("\\'s" if text[-1:].isdigit() else "'s")


def share(part, whole, noun: str) -> str:
    """How many of a whole, with the noun in the form the count asks for: "2 of the 3
    stalls", "all 3 stalls", "both stalls", "the one stall", "0 of the 1 stall"; facts
    write themselves and count by their value."""
    p, w = getattr(part, "value", part), getattr(whole, "value", whole)
    if p == w and w == 1:
        return f"the one {noun}"
    if p == w and w == 2:
        return f"both {noun}s"
    if p == w:  # the part's span: the count the claim is about, as the paper check reads it
        return f"all {part} {noun}s"
    return f"{part} of the {counted(whole, noun)}"


def interval_end(f: Callable[[Any], str], x) -> str:
    """An interval's end as `f` writes it, with more digits where `f` would round it onto
    one or 100% (parity, no gain, full efficiency) though it is not: `0.9996` is never
    written `1.00` beside a verdict that it lies below one, in a sentence or a table; nor,
    in `fmt_num`, onto a whole number under 100 (`1.9986` is not "2", linear speedup at 2
    threads)."""
    text = f(x)
    if x is None or pd.isna(x) or float(x) == 1.0:
        return text
    if f is fmt_num and _whole_below_100(text) and float(text) != float(x):
        # 3 significant digits with their zeros dropped: 1.9986 and 2.0001 both read "2",
        # a speedup's linear bound at 2 threads; the end gets the digits that tell it apart
        for digits in range(1, 8):
            fine = f"{float(x):.{digits}f}"
            if float(fine) != float(text):
                return fine
    percent = text.endswith("%")
    if (text[:-1] in ("100", "100.0", "100.00") if percent else text in ("1", "1.0", "1.00", "1.000")):
        scaled = 100 * float(x) if percent else float(x)
        for digits in range(2 if percent else 3, 8):
            fine = f"{scaled:.{digits}f}"
            if float(fine) != (100.0 if percent else 1.0):
                return fine + ("%" if percent else "")
    return text


def _whole_below_100(text: str) -> bool:
    """Whether `fmt_num` wrote a whole number under 100 ("2", "12"): fewer than its three
    significant digits, the zeros after the point dropped."""
    return text.lstrip("-").isdigit() and abs(int(text)) < 100


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return None


def median_text(f: Callable[[Any], str], value, lo, hi) -> str:
    """A median as `f` writes it, beside its interval's ends: with more digits only where
    the rounding would put it outside them as they are written ("1.00 (1.002–1.003)"),
    never more than that ("100% (93%–105%)" stays)."""
    text, low, high = f(value), _number(interval_end(f, lo)), _number(interval_end(f, hi))
    shown = _number(text)
    if None in (shown, low, high) or low <= shown <= high:
        return text
    return interval_end(f, value)


def fmt_interval(lo, hi, fmt=fmt_num) -> str:
    """A 95% interval as `lo–hi`, or "" when there is none (a single repetition); an end
    that is not one is never written as one (`interval_end`)."""
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return ""
    if fmt is fmt_num:  # each end to its three digits, as the median beside it (`_kept_zeros`)
        return f"{_kept_zeros(interval_end(fmt, lo), lo)}–{_kept_zeros(interval_end(fmt, hi), hi)}"
    return f"{interval_end(fmt, lo)}–{interval_end(fmt, hi)}"


def fmt_ci(value, lo, hi, fmt=fmt_num) -> str:
    """A median with its interval: `1,234 (1,200–1,260)`; the median alone without one.
    With an interval, the median is never written outside it (`median_text`), and in
    `fmt_num` it keeps the zeros its three significant digits end with where it was rounded
    onto them ("1.00 (0.933–1.02)", not "1 (0.933–1.02)": a median read to fewer digits
    than its interval's ends)."""
    interval = fmt_interval(lo, hi, fmt)
    if not interval:
        return fmt(value)
    text = median_text(fmt, value, lo, hi)
    return f"{_kept_zeros(text, value) if fmt is fmt_num else text} ({interval})"


def _kept_zeros(text: str, x) -> str:
    """`fmt_num`'s text of `x` with the trailing zeros of its three significant digits
    written, where `x` was rounded onto them (0.99985: "1.00"; 2.0996: "2.10"); as it is
    where it holds three digits already, or more, or is exact ("2" for 2.0)."""
    digits = text.lstrip("-").replace(".", "").lstrip("0")
    number = _number(text)
    if number is None or len(digits) >= 3 or number == float(x):
        return text
    return f"{float(x):#.3g}".rstrip(".")


def _numeric_column(column: pd.Series) -> bool:
    """Whether every cell reads as a number (formatted or not): right-aligned."""
    text = column.astype(str).str.replace(r"[,%]", "", regex=True).str.replace(r" \(.*\)$", "", regex=True)
    return bool(len(column)) and bool(pd.to_numeric(text.where(text != "n/a", "0"), errors="coerce").notna().all())


def span_text(text: str) -> str:
    """A fact's text as its span holds it: `<` and `>` escaped, which Markdown would
    otherwise take for an HTML tag and drop (perf's `<not supported>`)."""
    return text.replace("<", "\\<").replace(">", "\\>")


def unspan_text(text: str) -> str:
    """A span's text as the fact states it (`span_text` undone)."""
    return text.replace("\\<", "<").replace("\\>", ">")


# The most a pipe table's column asks for, in characters: a column of long text then
# wraps instead of squeezing its neighbours.
MAX_COLUMN_WEIGHT = 60
# The characters a table's line holds at the paper's width (the PDF's table type holds
# about 150, a browser's column fewer): what each column's longest word must fit within,
# with `CELL_PADDING` characters of the cell's own margins beside it.
TABLE_LINE_CHARS = 110
CELL_PADDING = 4


# How much wider a character of code (a `span` in backticks) is set than one of text.
CODE_WIDTH = 1.25


def _word_width(word: str) -> int:
    """A word's width in characters of text: a word of code (in backticks) is set wider."""
    if word.startswith("`") or word.endswith("`"):
        return math.ceil(len(word.strip("`")) * CODE_WIDTH)
    return len(word)


def _column_widths(columns: list[list[str]]) -> list[int]:
    """A pipe table's relative column widths, the dashes of its alignment row (pandoc and
    Quarto size a table wider than the page by them; equal counts gave a column of one
    short word as much room as one of long text, and broke words of a narrow one). Each
    column gets its longest word first, then a share of the line left over in proportion
    to how much more its longest cell asks (at most `MAX_COLUMN_WEIGHT`)."""
    least = [max(3, max(_word_width(w) for t in col for w in t.split() or [""]) + CELL_PADDING) for col in columns]
    wants = [max(low, min(max(len(t) for t in col), MAX_COLUMN_WEIGHT)) for low, col in zip(least, columns)]
    room, extra = TABLE_LINE_CHARS - sum(least), sum(wants) - sum(least)
    if sum(wants) <= TABLE_LINE_CHARS or extra == 0:
        return wants
    if room <= 0:
        return least
    return [low + round(room * (want - low) / extra) for low, want in zip(least, wants)]


def md_table(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A table with a numbered caption (`@tbl-...` refers to it): a pipe table, or, when a
    cell holds a line break (`<br>`: a median over its interval, to keep the table narrow),
    a grid table, whose cells may span lines (Quarto and pandoc read both)."""
    # `<` and `>` escaped as in a fact's span, but for the line breaks: Markdown takes
    # `<not supported>` for a tag and drops it
    cells = [[span_text(str(v)).replace("\\<br\\>", "<br>") for v in row] for row in frame.itertuples(index=False)]
    if any("<br>" in c for row in cells for c in row):
        return grid_table(frame, cells, caption, label)
    header = "| " + " | ".join(frame.columns) + " |"
    weights = _column_widths([[str(c), *(row[i] for row in cells)] for i, c in enumerate(frame.columns)])
    align = "|" + "|".join("-" * (w - 1) + ":" if _numeric_column(frame[c]) else ":" + "-" * (w - 1)
                           for w, c in zip(weights, frame.columns)) + "|"
    rows = ["| " + " | ".join(row) + " |" for row in cells]
    # a blank line first: a table glued to the paragraph before it is that paragraph's text
    return "\n".join(["", header, align, *rows, "", f": {caption} {{#{label}}}", ""])


def grid_table(frame: pd.DataFrame, cells: list[list[str]], caption: str, label: str) -> str:
    """A pandoc grid table; `<br>` in a cell starts a new line of it."""
    lines = [[c.split("<br>") for c in row] for row in cells]
    head = [str(c).split("<br>") for c in frame.columns]
    widths = [max(len(x) + 1 for cell in [head[i], *(row[i] for row in lines)] for x in cell) for i in range(len(head))]
    right = [_numeric_column(frame[c].astype(str).str.split("<br>").str[0]) for c in frame.columns]

    def rule(ch: str, header: bool = False) -> str:
        if header:
            return "+" + "+".join((ch * (w + 1) + ":") if r else (":" + ch * (w + 1))
                                  for w, r in zip(widths, right)) + "+"
        return "+" + "+".join(ch * (w + 2) for w in widths) + "+"

    def row_lines(row: list[list[str]]) -> list[str]:
        height = max(len(c) for c in row)
        out = []
        for k in range(height):
            # a backslash at the end of a cell's line: a hard line break (a median over its
            # interval), where a bare newline would join the two into one line
            parts = [(c[k] + ("\\" if k < len(c) - 1 else "") if k < len(c) else "") for c in row]
            # padded on the right only: leading spaces in a cell would make an indented
            # code block of it (the alignment row aligns the column)
            out.append("| " + " | ".join(x.ljust(w) for x, w in zip(parts, widths)) + " |")
        return out

    text = [rule("-"), *row_lines(head), rule("=", header=True)]
    for row in lines:
        text += [*row_lines(row), rule("-")]
    return "\n".join(["", *text, "", f": {caption} {{#{label}}}", ""])


def figure(profile: str, name: str, caption: str, label: str) -> str:
    """A numbered figure: the paper's copy of `figures/<profile>/<name>.svg`, inside the
    Quarto project (`paths.PAPER_FIGURES`), by its path relative to the paper's folder,
    where Quarto resolves it. Quarto's PDF (Typst rooted at that folder) refuses a file
    outside it."""
    folder = posixpath.relpath(paths.PAPER_FIGURES.format(profile=profile), paths.PAPER_DIR)
    # its own paragraph: an image inside a paragraph is inline, not a numbered figure
    return f"\n![{caption}]({folder}/{name}.svg){{#{label}}}\n"
