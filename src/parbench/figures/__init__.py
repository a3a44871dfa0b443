"""Figures: one function per figure, each returning an Altair chart; `save` writes it as
SVG, PNG and a self-contained interactive HTML file (vl-convert, no internet needed).

Each study declares its figures (`Benchmark.FIGURES`: a figure's name, its file stem
prefixed with the study's name, the function in the study's figures module that draws
it, the inputs it draws from, its caption and label); `registry()` gathers them over the
registered studies.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt

from parbench.words import counted

FORMATS = ("svg", "png", "html")


# A title line's most characters: a one-line title of 150 characters made its figure
# 1,100 px wide, which the PDF shrinks to the text's width, the labels with it.
TITLE_CHARS = 90


def wrap_title(chart: alt.TopLevelMixin, width: int = TITLE_CHARS) -> alt.TopLevelMixin:
    """The chart with its title (a string) on lines of at most `width` characters, as
    few lines as that takes, of lengths as even as they can be (no word left alone on a
    last line)."""
    import textwrap

    title = chart.title if hasattr(chart, "title") else alt.Undefined
    if isinstance(title, str) and len(title) > width:
        def wrap(w: int) -> list[str]:
            return textwrap.wrap(title, w, break_long_words=False)

        lines = len(wrap(width))
        even = next(w for w in range(len(title) // lines, width + 1) if len(wrap(w)) == lines)
        return chart.properties(title=wrap(even))
    return chart


# The mantissas a log axis spanning a decade or more puts a tick at, in each decade; and
# those of an axis spanning 3 to 10 times its bottom value, where even steps would leave
# its bottom third without a number (0.27 to 2.6 s stepped by 0.5 had none below 0.5).
LOG_MANTISSAS = (1, 2, 3, 5, 7)
FINE_LOG_MANTISSAS = (1, 1.5, 2, 3, 4, 5, 6, 7, 8)
# still finer, where those span less than EVEN_TICKS_SPAN of the values (1.0 to 4.0 had
# only 1.5, 2 and 3: half the axis)
FINER_LOG_MANTISSAS = (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8)
# Over this many times its bottom value (three decades), an axis is numbered at 1s and 3s
# only: 2s, 5s and 7s between them crowd each other in print and the overlap rule then
# drops labels unevenly.
DECADES_SPAN = 1000
DECADES_MANTISSAS = (1, 3)


def _panel_ticks(values, mantissas=None) -> list[float]:
    import math

    clean = [float(v) for v in values if v is not None and not math.isnan(float(v)) and float(v) > 0]
    if not clean:
        return []
    lo, hi = min(clean), max(clean)
    if mantissas and hi >= 10 * lo:  # the caller's numbers in each decade
        ticks = _mantissa_ticks(lo, hi, mantissas)
    elif hi >= DECADES_SPAN * lo:
        ticks = _mantissa_ticks(lo, hi, DECADES_MANTISSAS)
    elif hi >= 10 * lo:  # a decade or more: a few mantissas in each decade
        ticks = _mantissa_ticks(lo, hi, LOG_MANTISSAS)
    elif hi >= 3 * lo:  # a third of a decade or more: more of them, enough to span the values
        ticks = _mantissa_ticks(lo, hi, FINE_LOG_MANTISSAS)
        if _span(ticks, lo, hi) < EVEN_TICKS_SPAN:
            ticks = _mantissa_ticks(lo, hi, FINER_LOG_MANTISSAS)
    else:  # less: evenly spaced round numbers, about six over the values
        ticks = _even_ticks(lo, hi)
    return [float(f"{t:.6g}") for t in ticks if lo / 1.25 <= t <= hi * 1.25 and t > 0]


# The least share of a sub-decade axis's log length its numbers span (the paper check asks
# for half): the coarsest round step that reaches it is used (0.035, 0.040 and 0.045
# alone spanned 57% of an axis from 0.031 to 0.048; steps of 0.0025 span 86%).
EVEN_TICKS_SPAN = 0.6


def _mantissa_ticks(lo: float, hi: float, mantissas) -> list[float]:
    import math

    return [m * 10.0 ** k for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in mantissas]


def _span(ticks: list[float], lo: float, hi: float) -> float:
    """The share of the log range lo..hi that the ticks inside it span."""
    import math

    inside = sorted(t for t in ticks if lo <= t <= hi and t > 0)
    if hi <= lo:
        return 1.0
    return math.log(inside[-1] / inside[0]) / math.log(hi / lo) if len(inside) >= 2 else 0.0


def _even_ticks(lo: float, hi: float) -> list[float]:
    import math

    raw = (hi - lo) / 6 or lo / 6
    magnitude = 10.0 ** math.floor(math.log10(raw))
    steps = sorted((m * magnitude * scale for m in (1, 2, 2.5, 5) for scale in (0.1, 1, 10)), reverse=True)
    first = min(s for s in steps if s >= raw * (1 - 1e-9))
    ticks: list[float] = []
    for step in (s for s in steps if s <= first):
        ticks = [k * step for k in range(math.floor(lo / step), math.ceil(hi / step) + 1)]
        if _span(ticks, lo, hi) >= EVEN_TICKS_SPAN:
            break
    return ticks


def log_ticks(panels, mantissas=None) -> list[float]:
    """Tick values for a log axis: `panels` holds the numbers each panel draws (one
    list per panel of a facet whose scales are independent, or one list). Each panel
    gets about five round numbers over its values, so every panel has numbers from its
    bottom to its top; the union serves them all, a panel drawing those in its domain.
    Vega's own log ticks step from one power of ten to the next, so an axis ending a
    little past 100,000 had its last number at 100,000, none beside the data above."""
    return sorted({t for values in panels for t in _panel_ticks(values, mantissas)})


def log_axis(panels=None, number_format: str = "~g", domain=None, **options) -> alt.Axis:
    """An axis for a log scale with a number on every tick that fits: a log scale's own
    label format skips every tick whose mantissa is not among the first few (1, 2, 5), so
    an axis spanning less than a decade showed stretches of data with no number. Each
    label is formatted here instead, at `log_ticks(panels)` when the drawn values are
    given, and labels that would overlap are dropped greedily. A scale whose `domain` is
    set wider than the values (padded) gives it here too: the ticks then span the axis,
    not only the data in its middle (Vega draws no tick outside the domain)."""
    if panels is not None:
        ends = [float(v) for v in domain] if domain is not None else []
        options["values"] = log_ticks([[*values, *ends] for values in panels])
    return alt.Axis(labelExpr=f"format(datum.value, '{number_format}')", labelOverlap="greedy", **options)


# How far a padded log scale reaches past its values, each side (a factor), at most
# PADDING_SHARE of the values' own log span (15% past values a few percent apart squeezed
# them into the middle fifth of the axis); then on to the nearest number beyond each end
# within SNAP_SHARE of the axis, so that an end of the data has a number beside it.
LOG_PADDING = 1.15
PADDING_SHARE = 0.08
SNAP_SHARE = 0.25
NEAR_SHARE = 0.03


def _nearest_beyond(values, lo, hi, span, beyond, distance, pick, mantissas=None):
    """The number nearest past one end of the axis lo..hi (`beyond` says which side, `pick`
    chooses among them) within SNAP_SHARE of its log `span`: from the axis's own kind of
    numbers (they run a little past its ends), then a wider axis's (a wider axis numbers
    more coarsely). None if none is."""
    for widen in (1.0, 1.5, 3.5):
        ticks = log_ticks([[*values, lo / widen, hi * widen]], mantissas)
        near = [t for t in ticks if beyond(t) and distance(t) <= SNAP_SHARE * span]
        if near:
            return pick(near)
    return None


def padded_log_scale(values, number_format: str = "~g", mantissas=None,
                     **axis_options) -> tuple[alt.Scale, alt.Axis]:
    """A log scale over `values` (every number a panel draws: points, interval ends),
    padded past them and reaching on to a near number at each end, and its axis
    (`log_axis`). A log scale's own domain rounds out to powers of ten whatever the
    distance: it squeezed the lines into a strip, and the number at its far end was
    dropped for crowding its neighbour on a narrow panel; with the values' own range
    alone, the lowest and highest points could lie past the last numbers. `mantissas`
    chooses the numbers in each decade of an axis spanning one or more ((1,): the powers
    of ten only, for a narrow axis over many decades)."""
    import math

    clean = [float(v) for v in values if v is not None and not math.isnan(float(v)) and float(v) > 0]
    if not clean:
        return alt.Scale(type="log"), log_axis(number_format=number_format, **axis_options)
    low, high = min(clean), max(clean)
    pad = min(LOG_PADDING, (high / low) ** PADDING_SHARE) if high > low else LOG_PADDING
    lo, hi = low / pad, high * pad
    # the numbers are chosen once, over the padded values: chosen again over a domain an end
    # reached on to, they could be of a coarser kind and stop short of the other end
    # (25,000 gave way to 20,000 under data at 25,301 once the bottom reached on to 8,000)
    ticks = log_ticks([[*clean, lo, hi]], mantissas)
    # an end whose data lies past the last number inside the axis (by more than NEAR_SHARE
    # of it) reaches on to the next number beyond, the nearest of a slightly wider axis's
    inside = [t for t in ticks if lo <= t <= hi]
    span = math.log(hi / lo)
    ends = []
    if not inside or math.log(min(inside) / low) > NEAR_SHARE * span:
        below = _nearest_beyond(clean, lo, hi, span, lambda t: t <= lo, lambda t: math.log(lo / t), max, mantissas)
        if below is not None:
            lo, ends = below, [*ends, below]
    if not inside or math.log(high / max(inside)) > NEAR_SHARE * span:
        above = _nearest_beyond(clean, lo, hi, span, lambda t: t >= hi, lambda t: math.log(t / hi), min, mantissas)
        if above is not None:
            hi, ends = above, [*ends, above]
    values = sorted({*ticks, *ends})
    return (alt.Scale(type="log", nice=False, domain=[lo, hi]),
            log_axis(number_format=number_format, values=values, **axis_options))


# The width each panel of a grid gives its y axis's numbers and ticks, the same in every
# panel, so that the columns of panels line up down the page (numbers as wide as "80000"
# or "0.275" fit).
PANEL_AXIS_EXTENT = 40
PANEL_HEADER = {"fontSize": 12, "fontWeight": "normal"}
# The gap (px) between a row's title and its first panel's axis title: touching, the two
# read as one label once the PDF shrinks the figure.
ROW_TITLE_OFFSET = 10
# How far (px) a grid panel's y axis runs on past its end numbers: a number at the very end
# of the axis overhangs the panel by half its height, and a top row's panel so numbered
# had its title a few pixels above its neighbours'.
PANEL_END_PX = 10


def ordered(values, order: list) -> list:
    """The distinct `values` in `order`'s order, each placed by the first entry it starts
    with ("sign on node-a", from a run on several machines, sorts under "sign"), then
    any that start with none."""
    rank = {v: i for i, v in enumerate(order)}
    return sorted(set(values), key=lambda v: (min((rank[o] for o in order if str(v).startswith(str(o))),
                                                  default=len(order)), str(v)))


# The least distance (px) between two numbers of a panel's axis: closer, 10 px numbers
# touch in print, and Vega's overlap rule dropped some, leaving ticks without a number.
MIN_NUMBER_GAP_PX = 14


def _roundness(value: float) -> int:
    """How round a number is, roundest first: a power of ten, then 5s, 2s, 3s, the rest."""
    import math

    mantissa = round(value / 10.0 ** math.floor(math.log10(value)), 6)
    return {1.0: 0, 5.0: 1, 2.0: 2, 3.0: 3}.get(mantissa, 4)


def spaced_ticks(values, domain, length_px: float, gap_px: float = MIN_NUMBER_GAP_PX) -> list[float]:
    """The numbers of a log axis `length_px` long over `domain` that stand `gap_px` apart:
    the domain's ends first (where a number is there, beside the data's ends), then the
    roundest, each kept only if no kept one is closer."""
    import math

    lo, hi = domain
    if not hi > lo > 0:
        return list(values)
    at = {v: length_px * math.log(v / lo) / math.log(hi / lo) for v in values}
    kept: list[float] = []
    for v in sorted(values, key=lambda v: (v not in (lo, hi), _roundness(v), v)):
        if all(abs(at[v] - at[k]) >= gap_px for k in kept):
            kept.append(v)
    return sorted(kept)


def panel_log_scale(values, number_format: str = "~g", height: float | None = None,
                    **axis_options) -> tuple[alt.Scale, alt.Axis]:
    """`padded_log_scale` for a panel of `panel_grid`: its numbers in a margin as wide as
    every other panel's (`PANEL_AXIS_EXTENT`), its ends `PANEL_END_PX` past its end
    numbers, none drawn in that margin; on a panel `height` px high, only numbers that
    stand `MIN_NUMBER_GAP_PX` apart (`spaced_ticks`)."""
    scale, axis = padded_log_scale(values, number_format, minExtent=PANEL_AXIS_EXTENT, **axis_options)
    scale.padding = PANEL_END_PX
    if scale.domain is not alt.Undefined:  # the margin draws no number past the domain
        lo, hi = scale.domain
        axis.values = [v for v in axis.values if lo <= v <= hi]
        if height:
            axis.values = spaced_ticks(axis.values, (lo, hi), height - 2 * PANEL_END_PX)
    return scale, axis


def count_axis(field: str, counts, title: str, log2: bool = False) -> alt.X:
    """An x axis over worker or thread counts (`log2`: on a log scale of base 2): a number
    at each count, its ends PANEL_END_PX past the first and the last, so that a point there
    clears the panel's frame (on the frame, it was drawn half outside)."""
    counts = sorted(counts)
    scale = alt.Scale(domain=[min(counts), max(counts)], padding=PANEL_END_PX,
                      **({"type": "log", "base": 2} if log2 else {}))
    return alt.X(f"{field}:Q", title=title, scale=scale, axis=alt.Axis(values=counts, format="d"))


def panel_x_axis(values: list, title: str, bottom: bool, **options) -> alt.Axis:
    """A grid panel's x axis at `values`: numbered and titled under the bottom row only,
    every row keeping its grid lines (as a facet's shared axis)."""
    if bottom:
        # a number within PANEL_END_PX of an end kept inside the panel: overhanging it (99
        # of percentiles 0 to 100), it widened the bottom row's panels, whose columns then
        # stood a few pixels right of the rows above
        return alt.Axis(values=values, title=title, labelFlush=PANEL_END_PX, **options)
    return alt.Axis(values=values, labels=False, ticks=False, title=None)


def panel_grid(frame, row: str, column: str, draw, rows: list, columns: list) -> alt.VConcatChart:
    """Panels drawn one by one, a row per value of `row` and a panel per value of `column`
    (`rows` and `columns`, in order, any value of `frame` they miss after them, `ordered`),
    so that each can have a scale and an axis of its own: a facet's panels share one list
    of tick values, so each drew its neighbours' numbers among its own (1.2 beside 1.25)
    and some ended with data past their last number. `draw(rows_of_panel, bottom)` draws
    one panel from its rows of `frame` (`bottom`: in the last row, which numbers the x axis,
    `panel_x_axis`); the top row's panels are titled with their column's value and each row
    on its left with its own, as a facet's headers (the figure check holds each against the
    marks under it)."""
    row_values, column_values = ordered(frame[row], rows), ordered(frame[column], columns)
    grid = []
    for i, r in enumerate(row_values):
        panels = []
        for c in column_values:
            panel = draw(frame[(frame[row] == r) & (frame[column] == c)], i == len(row_values) - 1)
            panels.append(panel.properties(title=alt.TitleParams(c, **PANEL_HEADER)) if i == 0 else panel)
        grid.append(alt.hconcat(*panels).properties(
            title=alt.TitleParams(r, orient="left", anchor="middle", offset=ROW_TITLE_OFFSET, **PANEL_HEADER)))
    return alt.vconcat(*grid)


# A label Vega hid (an axis label dropped for overlap) is still a text in the SVG, drawn
# with opacity 0: the PDF would carry it as text printed over its neighbours.
_HIDDEN_TEXT = re.compile(r'<text\b[^>]*\bopacity="0"[^>]*?(?:/>|>[^<]*</text>)')


def without_hidden_text(svg: str) -> str:
    """The SVG without the texts drawn fully transparent."""
    return _HIDDEN_TEXT.sub("", svg)


def save(chart: alt.TopLevelMixin, stem: str | Path) -> list[Path]:
    """Write `<stem>.svg`, `<stem>.png` and `<stem>.html`; return their paths. A long
    title is wrapped (`wrap_title`), and the type enlarged where the PDF would print it
    smaller than `legible.PRINT_PT` (`legible.for_print`)."""
    import vl_convert as vlc

    from parbench.records import write_atomic

    from parbench.figures import legible
    from parbench.paper.figure_check import text_width_pt

    stem = Path(stem)
    printed, svg = legible.for_print(json.loads(wrap_title(chart).to_json()),
                                     lambda s: without_hidden_text(vlc.vegalite_to_svg(s)), text_width_pt())
    spec = json.dumps(printed)
    out = []
    for fmt, data in (
        ("svg", svg),
        ("png", vlc.vegalite_to_png(spec, scale=2)),
        ("html", vlc.vegalite_to_html(spec, bundle=True)),
    ):
        path = stem.with_suffix(f".{fmt}")
        write_atomic(path, data)
        out.append(path)
    return out


def ok_rows(frame):
    """The rows of cells whose measurement passed its checks: the only ones drawn."""
    return frame[frame["status"] == "ok"].copy()


def with_columns(frame, *names: str):
    """The frame with every column of `names`, null (NaN) where a table written before
    that column was added lacks it (e.g. the intervals of a table from before
    repetitions)."""
    missing = {name: float("nan") for name in names if name not in frame}
    return frame.assign(**missing) if missing else frame


def note(title: str, text: str) -> alt.Chart:
    """A chart that says, in words, why there is nothing to draw."""
    import pandas as pd

    return (alt.Chart(pd.DataFrame({"text": [text]})).mark_text(size=14, align="center")
            .encode(text="text:N").properties(width=520, height=60, title=title))


def registry() -> dict:
    """name -> (function(inputs..., machine) -> chart, [input names]) over every study; an
    input is a Parquet table (`data/processed/<profile>/<name>.parquet`) or a file the study
    names (Study.figure_files)."""
    from parbench import studies

    return {name: spec for study in studies.registered() for name, spec in study.figures().items()}


def main(args) -> int:
    """`parbench figure NAME --machine M --out-stem S TABLE.parquet...`"""

    import pandas as pd

    figures = registry()
    if args.name not in figures:
        raise SystemExit(f"parbench figure: unknown figure {args.name!r}; allowed: {', '.join(figures)}")
    fn, needed = figures[args.name]
    tables = {Path(p).stem: pd.read_parquet(p) if p.endswith(".parquet") else p for p in args.tables}
    missing = [t for t in needed if t not in tables]
    if missing:
        raise SystemExit(f"parbench figure {args.name}: missing {counted(len(missing), 'input')}: {', '.join(missing)}")
    machine = json.loads(Path(args.machine).read_text())
    chart = fn(*(tables[t] for t in needed), machine)
    for path in save(chart, args.out_stem):
        print(f"figure: wrote {path}")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("figure", help="draw one figure")
    p.add_argument("name")
    p.add_argument("--machine", required=True, help="machine.json of the run")
    p.add_argument("--out-stem", required=True, help="output path without extension")
    p.add_argument("tables", nargs="+", help="Parquet tables (and files) the figure reads")
    p.set_defaults(func=main)


def present(frame, column: str, order: list) -> list:
    """The values of `column` that `frame` holds, in `order` (then any others): what a
    legend may list, never a value nothing draws."""
    values = [v for v in frame[column].dropna().unique().tolist()]
    return [v for v in order if v in values] + sorted(v for v in values if v not in order)


def palette_scale(frame, column: str, order: list, palette: dict) -> alt.Scale:
    """A scale over the values `frame` draws, each in its fixed colour (or dash, or shape)
    from `palette`, so that a value keeps its look from figure to figure."""
    domain = present(frame, column, order)
    return alt.Scale(domain=domain, range=[palette[v] for v in domain]) if domain else alt.Scale()


# How a figure marks a point whose cell had a repetition that stayed disturbed (more of
# the machine busy elsewhere than disturbance.max_other_cores, after every attempt).
DISTURBED_COLOR = "#d62728"


def disturbed_layer(base: alt.Chart, frame, column: str = "disturbed_reps") -> list:
    """An open red diamond over every point whose cell had a disturbed repetition (an
    empty list when none had, or the table has no such column): drawn, never hidden."""
    if column not in frame or not (frame[column].fillna(0) > 0).any():
        return []
    return [base.transform_filter(f"datum['{column}'] > 0").mark_point(
        shape="diamond", size=140, filled=False, strokeWidth=1.5, color=DISTURBED_COLOR)]
