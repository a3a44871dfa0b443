"""Type a reader can read in print: the PDF shrinks a figure wider than the text to the
text's width, its type with it (a 940 px figure's 10 px tick labels printed at 5.1 pt).
`for_print` raises a figure's smallest type, and only its type, until it prints at
`PRINT_PT` or more at the paper's text width; the plot areas keep their size, type
already larger keeps its size, and a figure that fits keeps its look.

Every size of type in the spec below the least size is raised to it: Vega-Lite's
defaults (set in the spec's config, which no chart here sets) and the sizes a chart sets
itself (a panel header's `fontSize`, a text mark's `size`); the widths a label may take
before it is cut grow with it. Larger type widens the figure a little (its axes' labels
and legends), which shrinks it more in print: the size is found in a few renders, each
from the width the last one drew.
"""

from __future__ import annotations

import copy
import json

# The least size (pt) a figure's type prints at in the PDF; the paper's layout check
# refuses less than `layout_check.MIN_TYPE_PT`, below this.
PRINT_PT = 6.5
# Vega-Lite's own sizes (px) of the type a chart leaves at its default, and the widths (px)
# a label may take before Vega-Lite cuts it ("SPHINCS+-SHA2-128f-si…"), which grow with it.
DEFAULT_TYPE_PX = {
    "axis": {"labelFontSize": 10, "titleFontSize": 11, "labelLimit": 180},
    "legend": {"labelFontSize": 10, "titleFontSize": 11, "labelLimit": 160, "titleLimit": 180},
    "header": {"labelFontSize": 10, "titleFontSize": 11},
    "title": {"fontSize": 13, "subtitleFontSize": 12},
    "text": {"fontSize": 11},
}
LIMIT_KEYS = {"labelLimit", "titleLimit"}
TYPE_KEYS = {"fontSize", "labelFontSize", "titleFontSize", "subtitleFontSize"} | LIMIT_KEYS
# How many renders finding the size may take: each one's width is within a few pixels of the last.
RENDERS = 4


def with_least_type(spec: dict, least_px: float) -> dict:
    """The spec with every size of type below `least_px` raised to it (the defaults written
    into its config), the widths a label may take grown as much as the smallest type,
    nothing else changed."""
    out = copy.deepcopy(spec)
    grow = max(1.0, least_px / min(px for sizes in DEFAULT_TYPE_PX.values() for key, px in sizes.items()
                                   if key not in LIMIT_KEYS))

    def raised(key: str, value: float) -> float:
        return round(value * grow, 2) if key in LIMIT_KEYS else round(max(value, least_px), 2)

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in TYPE_KEYS and isinstance(value, (int, float)):
                    node[key] = raised(key, value)
                else:
                    walk(value)
            if node.get("type") == "text" and isinstance(node.get("size"), (int, float)):  # a text mark's size
                node["size"] = raised("size", node["size"])
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(out)
    config = out.setdefault("config", {})
    for part, sizes in DEFAULT_TYPE_PX.items():
        own = config.setdefault(part, {})
        for key, px in sizes.items():
            own.setdefault(key, raised(key, px))
    return out


def printed_pt(svg: str, text_width_pt: float) -> float | None:
    """The smallest type of a rendered figure as the PDF prints it (None: no type)."""
    from parbench.paper.figure_check import print_type

    found = print_type(svg, text_width_pt)
    return None if found is None else found[0] * found[2]


def for_print(spec: dict, render, text_width_pt: float, least_pt: float = PRINT_PT) -> tuple[dict, str]:
    """The spec whose smallest type prints at `least_pt` or more at `text_width_pt`, and
    its SVG; `render(spec) -> svg` draws a spec (the figure's visible type only)."""
    from parbench.paper.figure_check import print_type

    least_px, out = 0.0, with_least_type(spec, 0.0)
    for _ in range(RENDERS):
        svg = render(json.dumps(out))
        found = print_type(svg, text_width_pt)
        if found is None or found[0] * found[2] >= least_pt - 0.01:
            return out, svg
        # the size that prints at least_pt at this width, a hair over: larger type widens
        # the next render a little
        least_px = max(least_px, least_pt / found[2] * 1.01)
        out = with_least_type(spec, least_px)
    return out, render(json.dumps(out))
