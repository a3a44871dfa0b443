"""The rendered PDF held to its page: every word of the text, its tables and its figures
inside the page's text area, and no word printed over another.

A table too wide for the page runs off the right margin; a table that typesets badly
prints rows over each other; a figure too wide does the same with its labels. Both show
in the PDF's words (figures are embedded as vectors, so their labels are words too):
`problems(pdf)` reads every word's box (pdfplumber) and reports the words outside the text
area (the page less the margins of `paper/_quarto.yml`, with a small tolerance), the
pairs of characters on a page whose boxes overlap by more than half of the smaller one,
the words printed smaller than `MIN_TYPE_PT` (a figure's labels after the figure was
shrunk to the text's width), and an apostrophe after a digit that Typst typeset as a
prime ("avx2′s").
"""

from __future__ import annotations

import re
from pathlib import Path

from parbench.words import counted

CM = 72 / 2.54  # PDF points per centimetre
# How far a word may reach past the text area (points): glyph boxes overhang a little.
TOLERANCE_PT = 3.0
# The smallest type a reader can read in print (points): a figure drawn wider than the
# text is shrunk to fit, and its labels with it.
MIN_TYPE_PT = 6.0
# a word, a digit, a prime and a letter: an apostrophe Typst took for a prime
PRIME_AFTER_DIGIT = re.compile(r"\w*\d\u2032\w+")


def _margin_pt(value) -> float:
    text = str(value).strip()
    if text.endswith("cm"):
        return float(text[:-2]) * CM
    if text.endswith("mm"):
        return float(text[:-2]) * CM / 10
    if text.endswith("in"):
        return float(text[:-2]) * 72
    if text.endswith("pt"):
        return float(text[:-2])
    return float(text)


def margins(quarto_yml: Path) -> tuple[float, float]:
    """The typst format's horizontal and vertical margins, in points."""
    import yaml

    doc = yaml.safe_load(quarto_yml.read_text())
    margin = doc.get("format", {}).get("typst", {}).get("margin", {})
    return _margin_pt(margin.get("x", "2.5cm")), _margin_pt(margin.get("y", "2.5cm"))


def _overlap(a: dict, b: dict) -> float:
    w = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a["x1"] - a["x0"]) * (a["bottom"] - a["top"]), (b["x1"] - b["x0"]) * (b["bottom"] - b["top"]))
    return (w * h) / smaller if smaller > 0 else 0.0


def _unrotated(char: dict) -> bool:
    matrix = char.get("matrix") or (1, 0, 0, 1, 0, 0)
    return abs(matrix[1]) < 1e-6 and abs(matrix[2]) < 1e-6


def problems(pdf: Path, quarto_yml: Path) -> list[str]:
    import pdfplumber

    mx, my = margins(quarto_yml)
    out = []
    with pdfplumber.open(str(pdf)) as doc:
        for number, page in enumerate(doc.pages, 1):
            words = page.extract_words(keep_blank_chars=False, use_text_flow=False)
            outside = [w for w in words if w["x1"] > page.width - mx + TOLERANCE_PT or w["x0"] < mx - TOLERANCE_PT]
            if outside:
                sample = ", ".join(repr(w["text"]) for w in outside[:6])
                out.append(f"page {number}: {counted(len(outside), 'word')} outside the text area (the page is "
                           f"{page.width:.0f} pt wide, margins {mx:.0f} pt), e.g. {sample}")
            # glyphs printed over others (characters, not words: pdfplumber merges the
            # characters of two overlapping lines into one garbled word)
            # unrotated glyphs only: the boxes of rotated ones (slanted axis labels) overlap
            # their neighbours in any case
            chars = sorted((c for c in page.chars if c["text"].strip() and _unrotated(c)),
                           key=lambda c: (c["top"], c["x0"]))
            clashes = []
            for i, a in enumerate(chars):
                for b in chars[i + 1:]:
                    if b["top"] > a["bottom"]:
                        break
                    if _overlap(a, b) > 0.5:
                        clashes.append((a["text"], b["text"], a["x0"], a["top"]))
            if clashes:
                sample = "; ".join(f"{a!r} over {b!r} at ({x:.0f}, {y:.0f}) pt" for a, b, x, y in clashes[:5])
                out.append(f"page {number}: {counted(len(clashes), 'character')} printed over others, e.g. {sample}")
            # Typst typesets a straight quote after a digit as a prime (feet, minutes):
            # "avx2's" printed as "avx2′s"
            primes = PRIME_AFTER_DIGIT.findall("".join(c["text"] for c in page.chars))
            if primes:
                out.append(f"page {number}: {counted(len(primes), 'apostrophe')} after a digit typeset as a "
                           f"prime, e.g. "
                           f"{primes[0]!r}: write the sentence without the digit's possessive")
            # upright glyphs only: a rotated glyph's size reads its box, not its type
            tiny = [c for c in chars if c["size"] < MIN_TYPE_PT - 0.05]
            if tiny:
                smallest = min(c["size"] for c in tiny)
                sample = "".join(c["text"] for c in tiny[:40])
                out.append(f"page {number}: {counted(len(tiny), 'character')} printed smaller than "
                           f"{MIN_TYPE_PT:g} pt (the "
                           f"smallest {smallest:.1f} pt: a figure shrunk to fit the page shrinks its labels), "
                           f"e.g. {sample!r}")
    return out


def main(args) -> int:
    from parbench.records import finish_check

    found = problems(Path(args.pdf), Path(args.quarto_yml))
    return finish_check(args.out, {"pdf": args.pdf}, found,
                        f"parbench paper-layout: {counted(len(found), 'page')} with problems in {args.pdf}:",
                        f"parbench paper-layout: every word of {args.pdf} is on its page, none over another")


def add_commands(sub) -> None:
    p = sub.add_parser("paper-layout", help="check that every table and figure of the PDF fits its page")
    p.add_argument("pdf")
    p.add_argument("--quarto-yml", default="paper/_quarto.yml")
    p.add_argument("--out", help="write the result as JSON here")
    p.set_defaults(func=main)
