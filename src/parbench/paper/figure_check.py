"""A figure held against its data, as a reader sees it: the SVG the pipeline drew.

Vega-Lite writes every data mark with an `aria-label` that names the values it draws
("algorithm: RSA-2048; operation: sign; ratio: 0.97"; a figure's tooltip adds the fields
the reader needs, the facet fields among them). `problems(svg)` reads the SVG and checks:

- the figure draws data (a chart that only says "not measured" is a sentence, not a
  figure);
- every facet panel's header (row and column, or the title a wrapped facet puts above
  each panel) is the value its marks carry for the facet field: a panel labelled with
  another panel's name is the bug of a header sorted one way and the data another;
- every label of a nominal axis sits at the marks that carry it (a heat map's rows);
- every concatenated panel (or row of them) titled with a value its marks carry draws that
  value alone (`concat_title_problems`), as a facet's headers;
- every legend entry is a value some mark draws: a legend never lists what is not plotted;
- every axis tick drawn carries its label (`unlabelled_ticks`): a log axis left to Vega's
  own format labels only some mantissas, so an axis spanning less than a decade had
  stretches of ticks, data under them, with no number;
- its smallest type, once the PDF shrinks the figure to the text's width, is at least
  `layout_check.MIN_TYPE_PT` (`type_problems`): a figure too wide for the page prints
  its labels too small to read.

The positions come from the SVG's own `translate(x,y)` transforms and path starts, so the
check needs no browser.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from parbench.words import counted

SVG = "{http://www.w3.org/2000/svg}"
_TRANSLATE = re.compile(r"translate\(\s*([-\d.e]+)[ ,]+([-\d.e]+)\s*\)")
_MOVE = re.compile(r"^M\s*([-\d.e]+)[ ,]([-\d.e]+)")
_RECT = re.compile(r"^M([-\d.e]+),([-\d.e]+)h([-\d.e]+)v([-\d.e]+)")


@dataclass
class Mark:
    fields: dict
    x: float
    y: float
    size: tuple[float, float] | None = None  # a bar's (width, height), px


@dataclass
class Panel:
    x: float
    y: float
    width: float
    height: float
    marks: list = field(default_factory=list)

    def holds(self, x: float | None, y: float | None) -> bool:
        return ((x is None or self.x - 0.5 <= x <= self.x + self.width + 0.5)
                and (y is None or self.y - 0.5 <= y <= self.y + self.height + 0.5))


@dataclass
class Text:
    text: str
    x: float
    y: float
    role: str


def _fields(label: str) -> dict:
    out = {}
    for part in label.split("; "):
        if ": " in part:
            k, v = part.split(": ", 1)
            out[k.strip()] = v.strip()
    return out


def _offset(el) -> tuple[float, float]:
    m = _TRANSLATE.search(el.get("transform", ""))
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)


def parse(svg_text: str) -> tuple[list[Panel], list[Mark], list[Text]]:
    """The facet panels (with their marks), every data mark and every text of a Vega SVG,
    at absolute positions."""
    root = ET.fromstring(svg_text)
    panels: list[Panel] = []
    marks: list[Mark] = []
    texts: list[Text] = []

    def walk(el, ox: float, oy: float, roles: tuple[str, ...], panel: Panel | None) -> None:
        dx, dy = _offset(el)
        x, y = ox + dx, oy + dy
        cls = el.get("class", "")
        role = roles
        if "role-" in cls or "mark-" in cls:
            role = roles + tuple(c for c in cls.split() if c.startswith(("role-", "mark-")))
        if el.tag == f"{SVG}g" and "role-scope" in cls and "cell" in cls.split():
            # the facet cells: each child group is one panel, its background path its size
            for inner in el:
                ix, iy = _offset(inner)
                bg = inner.find(f"{SVG}path")
                w = h = 0.0
                if bg is not None and (m := re.match(r"M[-\d.e]+,[-\d.e]+h([-\d.e]+)v([-\d.e]+)", bg.get("d", ""))):
                    w, h = float(m.group(1)), float(m.group(2))
                cell = Panel(x + ix, y + iy, w, h)
                panels.append(cell)
                for child in inner:
                    walk(child, x + ix, y + iy, role, cell)
            return
        label = el.get("aria-label")
        # a data mark: labelled with its values, not an axis, legend or title, and not text
        # (a chart that only says "not measured" draws text, no data)
        if label and el.get("role") == "graphics-symbol" and el.get("aria-roledescription") not in (
                "axis", "legend", "title") and ": " in label and el.tag != f"{SVG}g" and "mark-text" not in role:
            mx, my, size = x, y, None
            d = el.get("d", "")
            if (m := _RECT.match(d)) is not None:
                mx, my = x + float(m.group(1)) + float(m.group(3)) / 2, y + float(m.group(2)) + float(m.group(4)) / 2
                if "mark-rect" in role:
                    size = (abs(float(m.group(3))), abs(float(m.group(4))))
            elif (m := _MOVE.match(d)) is not None:
                mx, my = x + float(m.group(1)), y + float(m.group(2))
            mark = Mark(_fields(label), mx, my, size)
            marks.append(mark)
            if panel is not None:
                panel.marks.append(mark)
        if el.tag == f"{SVG}text" and (el.text or "").strip():
            texts.append(Text(el.text.strip(), x, y, " ".join(role)))
        for child in el:
            walk(child, x, y, role, panel)

    walk(root, 0.0, 0.0, (), None)
    return panels, marks, texts


def _field_of(values: set[str], marks: list[Mark]) -> str | None:
    """The mark field whose values include every one of `values` (a facet's or a legend's
    field), or None."""
    candidates: dict[str, set] = {}
    for mark in marks:
        for k, v in mark.fields.items():
            candidates.setdefault(k, set()).add(v)
    fits = [k for k, seen in candidates.items() if values <= seen]
    return fits[0] if fits else None


def problems(svg_text: str, name: str) -> list[str]:
    panels, marks, texts = parse(svg_text)
    out = []
    if not marks:
        return [f"{name}: draws no data (say it in a sentence instead of a figure)"]
    for kind, axis in (("row", "y"), ("column", "x")):
        headers = [t for t in texts if f"role-{kind}-header" in t.role and "role-title" in t.role]
        if not headers or not panels:
            continue
        field_name = _field_of({t.text for t in headers}, marks)
        if field_name is None:
            out.append(f"{name}: the {kind} headers {sorted({t.text for t in headers})} are not values of any "
                       f"field the marks carry (add the facet field to the tooltip)")
            continue
        for h in headers:
            pos = h.y if axis == "y" else h.x
            under = [p for p in panels if (p.holds(None, pos) if axis == "y" else p.holds(pos, None))]
            seen = {m.fields.get(field_name) for p in under for m in p.marks}
            seen.discard(None)
            if seen and seen != {h.text}:
                out.append(f"{name}: the {kind} labelled {h.text!r} draws {field_name} {sorted(seen)}")
    # a wrapped facet (`facet=..., columns=N`) titles each panel just above it, inside its cell
    wrapped = [t for t in texts if "role-scope" in t.role and "role-title-text" in t.role]
    if wrapped and panels:
        field_name = _field_of({t.text for t in wrapped}, marks)
        if field_name is None:
            out.append(f"{name}: the panel titles {sorted({t.text for t in wrapped})} are not values of any field "
                       f"the marks carry (add the facet field to the tooltip)")
        else:
            for t in wrapped:
                below = [p for p in panels if p.holds(t.x, None) and p.y >= t.y - 0.5]
                if not below:
                    continue
                panel = min(below, key=lambda p: p.y - t.y)
                seen = {m.fields.get(field_name) for m in panel.marks} - {None}
                if seen and seen != {t.text}:
                    out.append(f"{name}: the panel titled {t.text!r} draws {field_name} {sorted(seen)}")
    out += concat_title_problems(svg_text, name)
    from parbench.paper.templates import COMPARISONS

    for t in texts:
        if "role-title" in t.role and (m := COMPARISONS.search(t.text)):
            out.append(f"{name}: its title {t.text!r} states the comparison {m.group(0)!r}, which only a verdict of "
                       f"the text may")
    bars = [m.size for m in marks if m.size is not None]
    if len(bars) >= 2:
        # bars share their band: all of them thinner than a pixel across it is a layout that
        # failed (an offset scale with no range), not data
        for across, along, words in ((0, 1, "wide"), (1, 0, "high")):
            if max(b[across] for b in bars) < 1 and max(b[along] for b in bars) >= 2:
                out.append(f"{name}: every bar is less than a pixel {words} ({max(b[across] for b in bars):.2g} px): "
                           f"the bars are hairlines")
    out += unlabelled_ticks(svg_text, name)
    legend_labels = {t.text for t in texts if "role-legend-label" in t.role}
    if legend_labels:
        drawn = {v for m in marks for v in m.fields.values()}
        for label in sorted(legend_labels - drawn):
            if not _number(label):
                out.append(f"{name}: the legend lists {label!r}, which no mark draws")
    return out


_CONCAT_VIEW = re.compile(r"concat(_\d+_concat)*_\d+_group")


def concat_titles(svg_text: str) -> list[tuple[str, list[Mark]]]:
    """Each titled view of a concatenated chart (a panel, or a row of them) with the data
    marks drawn inside it. A view's title is the title group whose nearest enclosing view
    it is (a row's title is not its panels')."""
    root = ET.fromstring(svg_text)
    views: list[tuple[str, list[Mark]]] = []

    def walk(el, view) -> None:
        cls = el.get("class", "").split()
        if el.tag == f"{SVG}g" and "role-scope" in cls and any(_CONCAT_VIEW.fullmatch(c) for c in cls):
            _, marks, _ = parse(ET.tostring(el, encoding="unicode"))
            view = {"title": None, "marks": marks}
            views.append(view)
        elif el.tag == f"{SVG}g" and "role-title" in cls and view is not None and view["title"] is None:
            view["title"] = " ".join(t.text.strip() for t in el.iter(f"{SVG}text") if (t.text or "").strip())
            return
        for child in el:
            walk(child, view)

    walk(root, None)
    return [(v["title"], v["marks"]) for v in views if v["title"]]


def concat_title_problems(svg_text: str, name: str) -> list[str]:
    """A concatenated view titled with a value of a field its figure's marks carry (a
    family, an operation, a workload) draws that value alone in that field: the panels
    drawn one by one, side by side, must each draw what their title names. A title that
    is no field's value (a sentence) is not checked."""
    views = concat_titles(svg_text)
    everything = [m for _, marks in views for m in marks]
    out = []
    for title, marks in views:
        fields = {k for m in everything for k, v in m.fields.items() if v == title}
        if not fields or not marks:
            continue
        drawn = {k: {m.fields[k] for m in marks if k in m.fields} for k in fields}
        if all(seen and seen != {title} for seen in drawn.values()):
            k = sorted(fields)[0]
            out.append(f"{name}: the panel titled {title!r} draws {k} {sorted(drawn[k])}")
    return out


def unlabelled_ticks(svg_text: str, name: str) -> list[str]:
    """The axes with a tick whose label is drawn empty (Vega writes an empty text where
    its format skips a tick; a label dropped for overlap is not drawn at all), and the
    log axes whose labels cover less than `MIN_LABELLED` of their length (a log scale's
    ticks over less than a decade can stop at the nearest power of ten, leaving the rest
    of the axis, data and all, without a number)."""
    out = []
    for axis in ET.fromstring(svg_text).iter(f"{SVG}g"):
        if "role-axis" not in axis.get("class", "").split():
            continue
        where = axis.get("aria-label") or "an axis"
        labels = [t for g in axis.iter(f"{SVG}g") if "role-axis-label" in g.get("class", "")
                  for t in g.iter(f"{SVG}text") if t.get("opacity", "1") != "0"]
        empty = sum(1 for t in labels if not (t.text or "").strip())
        if empty:
            out.append(f"{name}: {where} draws {empty} of its {len(labels)} ticks "
                       f"without a label (give a log axis an explicit format: figures.log_axis)")
        domain = next((line for g in axis.iter(f"{SVG}g") if "role-axis-domain" in g.get("class", "")
                       for line in g.iter(f"{SVG}line")), None)
        if domain is None or not labels or "log scale" not in where:
            continue  # a linear axis's own ticks span it; a band axis labels its categories
        vertical = abs(float(domain.get("y2", 0) or 0)) > abs(float(domain.get("x2", 0) or 0))
        length = abs(float(domain.get("y2" if vertical else "x2", 0) or 0))
        spots = [_offset(t)[1 if vertical else 0] for t in labels if (t.text or "").strip()]
        if len(spots) < 2:
            out.append(f"{name}: {where} has {counted(len(spots), 'number')}: a reader cannot read a value off it")
        elif length > 0 and (max(spots) - min(spots)) < MIN_LABELLED * length:
            out.append(f"{name}: {where} has numbers over {(max(spots) - min(spots)) / length:.0%} of its length "
                       f"only (at least {MIN_LABELLED:.0%}: let the axis choose its ticks)")
    return out


# The least share of an axis's length its labels must span.
MIN_LABELLED = 0.5


# An SVG pixel is 0.75 pt (96 per inch); A4 is 595.28 pt wide.
PT_PER_PX = 0.75
A4_WIDTH_PT = 595.28


def text_width_pt(quarto_yml: Path | None = None) -> float:
    """The PDF's text width: A4 less the typst format's margins (`quarto_yml` where it
    exists, else the project's paper/_quarto.yml)."""
    from parbench import project
    from parbench.paper import layout_check

    if quarto_yml is None or not quarto_yml.exists():
        quarto_yml = project.root() / "paper" / "_quarto.yml"
    mx, _ = layout_check.margins(quarto_yml)
    return A4_WIDTH_PT - 2 * mx


def print_type(svg_text: str, text_width: float) -> tuple[float, float, float] | None:
    """A rendered figure's smallest type (px), its width (px) and the points per pixel the
    PDF prints it at, where a figure wider than the text is shrunk to it; None for a
    figure without type or width."""
    root = ET.fromstring(svg_text)
    try:
        width = float(str(root.get("width", "0")).removesuffix("px"))
    except ValueError:
        return None
    sizes = [float(m) for m in re.findall(r'font-size="([\d.]+)px"', svg_text)]
    if not sizes or width <= 0:
        return None
    return min(sizes), width, min(PT_PER_PX, text_width / width)


def type_problems(svg_text: str, name: str, text_width: float | None = None) -> list[str]:
    """The figure's smallest type in the PDF, where a figure wider than the text is shrunk
    to it: each font size (px) times 0.75 pt and the shrink factor."""
    from parbench.paper import layout_check

    text_width = text_width or text_width_pt()
    found = print_type(svg_text, text_width)
    if found is None:
        return []
    smallest_px, width, scale = found
    smallest = smallest_px * scale
    if smallest < layout_check.MIN_TYPE_PT - 0.05:
        fits = text_width / (layout_check.MIN_TYPE_PT / smallest_px)
        return [f"{name}: its {smallest_px:g} px type prints at {smallest:.1f} pt in the PDF, which shrinks its "
                f"{width:.0f} px to the text's {text_width:.0f} pt; at least {layout_check.MIN_TYPE_PT:g} pt needs "
                f"it no wider than {fits:.0f} px, or larger type"]
    return []


def _number(text: str) -> bool:
    try:
        float(text.replace(",", "").replace("%", ""))
    except ValueError:
        return False
    return True


# The words that name each unit a table's unit column can hold: a figure whose data is in
# one unit must not title an axis or itself with the word of another.
UNIT_WORDS = {"cycles": re.compile(r"\b(core )?cycles\b", re.I), "tsc_ticks": re.compile(r"\bTSC ticks\b", re.I),
              "ns": re.compile(r"\bnanoseconds\b|\bns\b", re.I)}


def unit_problems(svg_text: str, name: str, units: set[str]) -> list[str]:
    """A figure's title and axis titles against the units its data is in: the word of a
    unit absent from the data is a mislabel ("cycles" over TSC ticks). The subtitle may
    explain a unit ("reference cycles of the TSC, not core cycles") and is not checked."""
    if not units:
        return []
    _, _, texts = parse(svg_text)
    titles = [t.text for t in texts if "role-axis-title" in t.role]
    # the figure's own title: not a facet header, nor a wrapped facet's panel title (those
    # sit inside a scope and come first in the SVG)
    main = [t.text for t in texts if "role-title-text" in t.role and "role-subtitle" not in t.role
            and "header" not in t.role and "role-scope" not in t.role]
    out = []
    for text in titles + main[:1]:
        for unit, pattern in UNIT_WORDS.items():
            if unit not in units and pattern.search(text) and not any(
                    UNIT_WORDS[u].search(text) for u in units if u in UNIT_WORDS and u != unit):
                out.append(f"{name}: {text!r} speaks of {unit} but the data is in {', '.join(sorted(units))}")
    return out
