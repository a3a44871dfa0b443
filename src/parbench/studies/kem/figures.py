"""The kem figures, from the study's tables (`kem_cycles`, `kem_percentiles`,
`kem_throughput`) and the machine record. Only cells with status "ok" are drawn; every
title and axis of counter readings names the unit the table's `counter_unit` holds (TSC
ticks are never called cycles), and a figure names only the operations it draws. A cell
or point with a repetition that stayed disturbed is marked with an open red diamond."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import (PANEL_END_PX, count_axis, disturbed_layer, note, ok_rows,
                              panel_log_scale, panel_grid, panel_x_axis, with_columns)
from parbench.studies.kem.aggregate import CONFIDENCE, IMPLEMENTATION_ORDER, OPERATION_ORDER, SET_ORDER

COLORS = dict(zip(IMPLEMENTATION_ORDER, ["#e45756", "#4c78a8", "#72b7b2", "#f58518", "#444444"]))
UNITS = {"cycles": "core cycles", "tsc_ticks": "TSC ticks", "ns": "nanoseconds"}
UNIT_NOTES = {"cycles": "core clock cycles", "tsc_ticks": "reference cycles of the constant-rate TSC, not core cycles",
              "ns": "CLOCK_MONOTONIC"}


def implementation_color(frame: pd.DataFrame) -> alt.Color:
    """One fixed colour per implementation, the legend listing those drawn."""
    present = [i for i in IMPLEMENTATION_ORDER if i in set(frame["implementation"])]
    return alt.Color("implementation:N", sort=present, title="implementation",
                     scale=alt.Scale(domain=present, range=[COLORS[i] for i in present]))


def unit_title(frame: pd.DataFrame) -> str:
    """The unit of the counter readings of `frame`, for an axis."""
    units = frame["counter_unit"].dropna().unique().tolist()
    return " / ".join(UNITS.get(u, u) for u in units) or "counter ticks"


def counter_note(frame: pd.DataFrame) -> str:
    """Which counter produced the readings of `frame` and what its unit is."""
    counters = frame[["counter", "counter_unit"]].dropna().drop_duplicates()
    return "; ".join(f"counter {r.counter}: {UNITS.get(r.counter_unit, r.counter_unit)} "
                     f"({UNIT_NOTES.get(r.counter_unit, '')})" for r in counters.itertuples())


def cycles(cycles: pd.DataFrame, percentiles: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(cycles).dropna(subset=["median_ticks"])
    if data.empty:
        return note("Cycles per operation", "no cycles cell passed its checks in this run")
    spread = percentiles[percentiles["percentile"].isin([10, 90])].pivot_table(
        index=["implementation", "parameter_set", "operation"], columns="percentile", values="value_ticks")
    spread.columns = [f"p{int(c)}" for c in spread.columns]
    data = data.merge(spread.reset_index(), on=["implementation", "parameter_set", "operation"], how="left")
    sets = [s for s in SET_ORDER if s in set(data["parameter_set"])]
    ops = [o for o in OPERATION_ORDER if o in set(data["operation"])]
    data = with_columns(data, "median_ci_low_ticks", "median_ci_high_ticks")  # tables from before the interval
    # a cycles cell is one record: marked when it stayed disturbed after every attempt
    disturbed = data["disturbed"].fillna(False).astype(bool) if "disturbed" in data else False
    data = data.assign(disturbed=disturbed, disturbed_reps=pd.Series(disturbed, index=data.index).astype(int))
    # where each bar stands; only the bars take the implementation's colour
    place = alt.Chart(data).encode(
        x=alt.X("parameter_set:N", sort=sets, title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("implementation:N", sort=IMPLEMENTATION_ORDER),
    )
    y_title = f"median per call, {unit_title(data)}"
    bars = place.mark_bar().encode(
        y=alt.Y("median_ticks:Q", title=y_title), color=implementation_color(data),
        tooltip=["implementation", "parameter_set", "operation", alt.Tooltip("median_ticks:Q", format=",.0f"),
                 alt.Tooltip("median_ci_low_ticks:Q", title=f"{CONFIDENCE:.0%} CI low", format=",.0f"),
                 alt.Tooltip("median_ci_high_ticks:Q", title=f"{CONFIDENCE:.0%} CI high", format=",.0f"),
                 alt.Tooltip("p10:Q", format=",.0f"), alt.Tooltip("p90:Q", format=",.0f"),
                 alt.Tooltip("median_ns:Q", title="median ns", format=",.0f"), "counter", "counter_unit",
                 alt.Tooltip("disturbed:N", title="disturbed")])
    # the spread of the calls: a dark grey rule with caps, so its ends show
    # where they lie just off the median (the 10th percentile lies inside its bar, and a
    # hairline vanished against the bars it crosses)
    whiskers = place.mark_errorbar(ticks=alt.MarkConfig(size=12), color="#666666", thickness=1.5).encode(
        y=alt.Y("p10:Q", title=y_title), y2="p90:Q")
    # the interval of the median: a short, thick black bar without caps, over the grey rule,
    # so the two never look alike
    interval = place.transform_filter("isValid(datum.median_ci_low_ticks)").mark_errorbar(
        color="#000000", thickness=4).encode(y=alt.Y("median_ci_low_ticks:Q", title=y_title),
                                             y2="median_ci_high_ticks:Q")
    marked = disturbed_layer(place.encode(y=alt.Y("median_ticks:Q", title=y_title)), data)
    return (alt.layer(bars, whiskers, interval, *marked).properties(width=alt.Step(14), height=220)
            # two panels a row: narrow enough to stay legible at the width of a page
            .facet(facet=alt.Facet("operation:N", sort=ops, title=None), columns=2)
            .resolve_scale(x="independent")
            .properties(title=alt.TitleParams(
                f"{unit_title(data)[:1].upper()}{unit_title(data)[1:]} per call by parameter set and implementation",
                subtitle=[f"median; thick black: its {CONFIDENCE:.0%} bootstrap interval over the calls; grey, "
                          "capped: 10th to 90th percentile", counter_note(data)])))


def distribution(percentiles: pd.DataFrame, machine: dict) -> alt.Chart:
    """The seed's percentiles of every ML-KEM cell, one panel per parameter set (rows)
    and operation (columns); X25519's two cells are left to the table."""
    data = percentiles.dropna(subset=["value_ticks"])
    data = data[data["parameter_set"].str.startswith("ML-KEM")].copy()
    if data.empty:
        return note("Percentile distribution", "no ML-KEM cell passed its checks in this run")
    unit = unit_title(data)
    height = 150

    def panel(rows: pd.DataFrame, bottom: bool) -> alt.Chart:
        # the data's own extent, not whole decades: the calls' percentiles span less than one
        scale, axis = panel_log_scale(rows["value_ticks"], "~s", title=f"{unit} (log)", height=height)
        return alt.Chart(rows).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
            x=alt.X("percentile:Q", scale=alt.Scale(domain=[0, 100], padding=PANEL_END_PX),  # points clear the frame
                    axis=panel_x_axis([1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99], "percentile", bottom)),
            y=alt.Y("value_ticks:Q", scale=scale, axis=axis),
            color=implementation_color(data),
            tooltip=["implementation", "parameter_set", "operation", "percentile",
                     alt.Tooltip("value_ticks:Q", title=unit, format=",.0f"),
                     alt.Tooltip("value_ns:Q", title="ns", format=",.0f")],
        ).properties(width=200, height=height)

    return panel_grid(data, "parameter_set", "operation", panel, SET_ORDER, OPERATION_ORDER).properties(
        title=alt.TitleParams(f"{unit[:1].upper()}{unit[1:]} per call at the seed's percentiles 1, 10, ..., 90, 99",
                              subtitle=counter_note(data)))


def throughput(throughput: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(throughput).dropna(subset=["ops_per_sec"])
    if data.empty:
        return note("Throughput against threads", "no thread-sweep cell passed its checks in this run")
    data = data.assign(disturbed_reps=data["disturbed_reps"].fillna(0) if "disturbed_reps" in data else 0)
    threads = sorted(data["threads"].unique().tolist())
    one = data[data["threads"] == 1].set_index(["implementation", "parameter_set", "operation"])["ops_per_sec"]
    data = data.assign(linear=[one.get((r.implementation, r.parameter_set, r.operation), float("nan")) * r.threads
                               for r in data.itertuples()])
    x = count_axis("threads", threads, "threads")
    base = alt.Chart(data).encode(x=x)
    lines = base.mark_line(point=True).encode(
        color=implementation_color(data),
        y=alt.Y("ops_per_sec:Q", title="operations per second (all threads)"),
        tooltip=["implementation", "parameter_set", "operation", "threads", "repetitions",
                 alt.Tooltip("ops_per_sec:Q", title="ops/s (median)", format=",.0f"),
                 alt.Tooltip("ops_per_sec_ci_low:Q", title=f"{CONFIDENCE:.0%} CI low", format=",.0f"),
                 alt.Tooltip("ops_per_sec_ci_high:Q", title=f"{CONFIDENCE:.0%} CI high", format=",.0f"),
                 alt.Tooltip("scaling_efficiency:Q", title="efficiency", format=".2f"),
                 alt.Tooltip("scaling_efficiency_ci_low:Q", title="efficiency CI low", format=".2f"),
                 alt.Tooltip("scaling_efficiency_ci_high:Q", title="efficiency CI high", format=".2f"), "pinned",
                 alt.Tooltip("disturbed_reps:Q", title="disturbed repetitions")])
    # the 95% bootstrap interval of the median over repetitions (none with one repetition)
    bars = base.transform_filter("isValid(datum.ops_per_sec_ci_low)").mark_errorbar(ticks=True).encode(
        y=alt.Y("ops_per_sec_ci_low:Q", title="operations per second (all threads)"),
        y2="ops_per_sec_ci_high:Q", color=implementation_color(data))
    # grey, and drawn over the lines: an implementation that scales linearly has its
    # line under its own dashes, which in its colour would not show at all
    ideal = base.mark_line(strokeDash=[4, 4], color="#444444", strokeWidth=1.5).encode(
        y="linear:Q", detail="implementation:N")
    sets = [s for s in SET_ORDER if s in set(data["parameter_set"])]
    marked = disturbed_layer(base.encode(y="ops_per_sec:Q"), data)
    subtitle = [f"median of the repetitions, {CONFIDENCE:.0%} bootstrap interval bars",
                "dashed grey: linear scaling from each implementation's one-thread rate"]
    if marked:
        subtitle.append("open red diamond: a repetition stayed disturbed")
    return (alt.layer(bars, lines, ideal, *marked).properties(width=260, height=200)
            .facet(column=alt.Column("operation:N", sort=["encaps", "decaps"], title=None),
                   row=alt.Row("parameter_set:N", sort=sets, title=None))
            .resolve_scale(y="independent")
            .properties(title=alt.TitleParams(
                f"{_operations(data)} per second against threads", subtitle=subtitle)))


OPERATION_NOUNS = {"encaps": "encapsulations", "decaps": "decapsulations", "keypair": "key generations"}


def _operations(data: pd.DataFrame) -> str:
    """The operations a figure draws, as words: "Decapsulations", "Encapsulations and
    decapsulations"; never one that was not measured."""
    ops = [OPERATION_NOUNS.get(o, o) for o in ("keypair", "encaps", "decaps") if o in set(data["operation"])]
    text = ops[0] if len(ops) == 1 else ", ".join(ops[:-1]) + " and " + ops[-1]
    return text[:1].upper() + text[1:]
