"""Figures print their smallest type at PRINT_PT or more in the PDF (`legible`)."""

import json
import re

import altair as alt
import pandas as pd
import pytest
import vl_convert as vlc

from parbench.figures import legible
from parbench.paper import figure_check, layout_check

TEXT_WIDTH_PT = 482
DATA = pd.DataFrame({"x": [1, 2, 3], "y": [1.0, 4.0, 9.0], "group": ["a", "b", "c"]})


def _panel(width: int) -> alt.Chart:
    return alt.Chart(DATA).mark_line(point=True).encode(x="x:Q", y="y:Q", color="group:N").properties(
        width=width, height=120)


def _width(svg: str) -> float:
    return float(re.search(r'<svg[^>]*width="([\d.]+)', svg).group(1))


def test_a_wide_figure_prints_its_smallest_type_at_the_least_size():
    wide = alt.hconcat(*(_panel(260) for _ in range(3))).properties(title="A title")
    before = vlc.vegalite_to_svg(wide.to_json())
    assert legible.printed_pt(before, TEXT_WIDTH_PT) < layout_check.MIN_TYPE_PT  # 10 px at ~890 px
    spec, after = legible.for_print(wide.to_dict(), vlc.vegalite_to_svg, TEXT_WIDTH_PT)
    assert after == vlc.vegalite_to_svg(json.dumps(spec))  # the SVG is the spec's
    assert legible.PRINT_PT - 0.01 <= legible.printed_pt(after, TEXT_WIDTH_PT) < legible.PRINT_PT + 0.3
    assert figure_check.type_problems(after, "wide", text_width=TEXT_WIDTH_PT) == []
    # only the type grew: the panels keep their size, the figure widens by its labels alone
    assert [p["width"] for p in spec["hconcat"]] == [260, 260, 260]
    assert _width(before) < _width(after) < 1.2 * _width(before)


def test_a_figure_that_fits_keeps_its_look():
    narrow = _panel(300).properties(title="A title")
    spec, svg = legible.for_print(narrow.to_dict(), vlc.vegalite_to_svg, TEXT_WIDTH_PT)
    assert svg == vlc.vegalite_to_svg(json.dumps(spec)) == vlc.vegalite_to_svg(narrow.to_json())


def test_type_below_the_least_size_is_raised_and_larger_type_kept():
    spec = {"mark": {"type": "text", "size": 8}, "title": {"text": "t", "fontSize": 16},
            "layer": [{"mark": {"type": "point", "size": 40}}], "encoding": {"x": {"axis": {"labelFontSize": 9}}}}
    out = legible.with_least_type(spec, 12)
    assert out["mark"]["size"] == 12 and out["title"]["fontSize"] == 16
    assert out["encoding"]["x"]["axis"]["labelFontSize"] == 12
    assert out["layer"][0]["mark"]["size"] == 40  # a point's size is its area, not type
    assert out["config"]["axis"]["labelFontSize"] == 12 and out["config"]["title"]["fontSize"] == 13
    # a label may take as much more room as its type grew (10 px to 12 px)
    assert out["config"]["legend"]["labelLimit"] == 160 * 1.2
    assert spec["mark"]["size"] == 8 and "config" not in spec  # the spec given is left as it was


def test_saved_figures_pass_the_paper_type_check(tmp_path):
    from parbench.figures import save

    wide = alt.hconcat(*(_panel(300) for _ in range(3)))
    svg_path = next(p for p in save(wide, tmp_path / "wide") if p.suffix == ".svg")
    assert figure_check.type_problems(svg_path.read_text(), "wide") == []


def test_points_at_the_first_and_last_count_clear_the_panel_frame():
    """A point at the fewest or most workers sat on the panel's frame, half outside: the
    count axes of every study's figures end PANEL_END_PX past their counts."""
    from parbench.figures import PANEL_END_PX, count_axis

    frame = pd.DataFrame({"workers": [1, 2, 4], "y": [1.0, 2.0, 3.0]})
    for log2 in (False, True):
        x = count_axis("workers", frame["workers"].tolist(), "workers", log2=log2)
        chart = alt.Chart(frame).mark_point(size=60, filled=True).encode(x=x, y="y:Q").properties(width=200)
        spec = chart.to_dict()["encoding"]["x"]
        assert spec["scale"]["domain"] == [1, 4] and spec["scale"]["padding"] == PANEL_END_PX
        assert spec["axis"]["values"] == [1, 2, 4] and spec["scale"].get("type") == ("log" if log2 else None)
        # drawn: the points' centres lie PANEL_END_PX inside the 200 px plot, not on its edges
        svg = vlc.vegalite_to_svg(chart.to_json())
        xs = sorted(float(m) for m in re.findall(r'aria-roledescription="point" transform="translate\(([\d.]+),', svg))
        assert xs[0] == pytest.approx(PANEL_END_PX, abs=0.5) and xs[-1] == pytest.approx(200 - PANEL_END_PX, abs=0.5)


def test_a_long_title_is_wrapped_into_even_lines_without_an_orphan():
    """The gil speedup title wrapped at 90 characters left "linear" alone on its last line."""
    from parbench.figures import TITLE_CHARS, wrap_title

    title = ("Speedup against the same runtime's sequential run: threads (solid, circles) and processes "
             "(dashed, squares); bars: 95% bootstrap interval, cut at the top of the axis; dotted: linear")
    lines = wrap_title(_panel(100).properties(title=title)).title
    assert len(lines) == 3 and " ".join(lines) == title
    assert max(map(len, lines)) <= TITLE_CHARS and min(map(len, lines)) > 40
    # a title that fits stays one string
    assert wrap_title(_panel(100).properties(title="Short")).title == "Short"
