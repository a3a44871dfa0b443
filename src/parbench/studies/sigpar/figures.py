"""The sigpar figures. Each takes the study's cells table (Parquet `sigpar_cells`) and
the machine record, and returns a chart; only cells with status "ok" are drawn. A point
is the median over the cell's repetitions; its bar, the 95% bootstrap interval (none with
a single repetition).

Lines and columns are per variant: the mode, or the mode with an extra backend
(`threading-openssl-cffi`); `native-threads` runs with no Python in the loop, and the
Python modes are drawn against it."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench import stats
from parbench.figures import (PANEL_END_PX, disturbed_layer, note, ok_rows, palette_scale,
                              panel_grid, panel_log_scale, panel_x_axis, present)
from parbench.hosts import split_by_host

from parbench.studies.sigpar.algorithms import CATALOG
from parbench.studies.sigpar.plan import VARIANTS

ALGORITHM_ORDER = list(CATALOG)
FAMILY_ORDER = ["RSA", "ECDSA", "EdDSA", "ML-DSA", "Falcon", "SPHINCS+"]
VARIANT_ORDER = ["threading", "multiprocess", "threading-openssl-cffi", "multiprocess-openssl-cffi", "native-threads"]
assert sorted(VARIANT_ORDER) == sorted(VARIANTS)
# Each variant has a dash pattern and a point shape of its own, so that five of them are
# told apart by more than dashes: solid and circles for Python threads, dashed and
# squares for processes, dotted for the openssl-cffi backend, long dashes and crosses for
# the native runner.
VARIANT_DASHES = {"threading": [1, 0], "multiprocess": [6, 3], "threading-openssl-cffi": [1, 2],
                  "multiprocess-openssl-cffi": [6, 2, 1, 2], "native-threads": [12, 3]}
VARIANT_SHAPES = {"threading": "circle", "multiprocess": "square", "threading-openssl-cffi": "triangle-up",
                  "multiprocess-openssl-cffi": "diamond", "native-threads": "cross"}


# The lines' dashes are keyed on the variant behind a prefix (DASH_PREFIX, cut from the
# legend's labels): keyed on the variant itself, their scale had the points' domain, and
# Vega-Lite merged the two legends into one drawn with filled shapes, no dash in it.
DASH_FIELD, DASH_PREFIX = "variant_line", "line:"


def variant_dash(frame: pd.DataFrame) -> alt.StrokeDash:
    domain = present(frame, "variant", VARIANT_ORDER)
    return alt.StrokeDash(f"{DASH_FIELD}:N", title="mode (backend), line",
                          scale=alt.Scale(domain=[DASH_PREFIX + v for v in domain],
                                          range=[VARIANT_DASHES[v] for v in domain]) if domain else alt.Scale(),
                          legend=alt.Legend(symbolType="stroke", symbolStrokeColor="#444444", symbolStrokeWidth=2,
                                            symbolSize=400,
                                            labelExpr=f"replace(datum.label, '{DASH_PREFIX}', '')"))


def variant_shape(frame: pd.DataFrame) -> alt.Shape:
    return alt.Shape("variant:N", title="mode (backend), point", sort=VARIANT_ORDER,
                     scale=palette_scale(frame, "variant", VARIANT_ORDER, VARIANT_SHAPES))


PANEL_WIDTH, PANEL_HEIGHT = 260, 150  # px, a panel of the family grids
# How far apart (px) the variants' points and bars are drawn at a worker count: at one
# place, their bars lay on one line and read as one bar, and a point could hide another.
DODGE_PX = 6
DRAWN_X = "workers_drawn"


def dodged(data: pd.DataFrame, workers: list) -> tuple[pd.DataFrame, list]:
    """`data` with `workers_drawn`: each variant's worker count moved DODGE_PX to a side of
    its own, in VARIANT_ORDER around the count, and the x domain that holds them all (the
    panel's scale pads it by PANEL_END_PX, so that the outermost points clear the frame)."""
    variants = present(data, "variant", VARIANT_ORDER)
    middle = (len(variants) - 1) / 2
    span = (max(workers) - min(workers)) or 1
    step = DODGE_PX * span / (PANEL_WIDTH - 2 * PANEL_END_PX - 2 * middle * DODGE_PX)
    offset = {v: (i - middle) * step for i, v in enumerate(variants)}
    drawn = data.assign(**{DRAWN_X: data["workers"] + data["variant"].map(offset).fillna(0.0)})
    return drawn, [min(workers) - middle * step, max(workers) + middle * step]


def _family_panel(rows: pd.DataFrame, data: pd.DataFrame, y: str, y_title: str, workers: list, x_domain: list,
                  bottom: bool) -> alt.LayerChart:
    """One family's lines for one operation, on a log axis over its own points and bars."""
    bounds = [f"{y}_ci_low", f"{y}_ci_high"]
    # the data's own extent, not whole decades: a decade-wide axis squeezed the modes'
    # lines onto each other, so that no dash or shape could tell them apart
    scale, axis = panel_log_scale(rows[[y, *bounds]].to_numpy().ravel(), title=y_title, height=PANEL_HEIGHT)
    base = alt.Chart(rows).encode(
        x=alt.X(f"{DRAWN_X}:Q", scale=alt.Scale(domain=x_domain, nice=False, zero=False, padding=PANEL_END_PX),
                axis=panel_x_axis(workers, "workers", bottom, format="d")),
        y=alt.Y(f"{y}:Q", title=y_title, scale=scale, axis=axis),
        color=alt.Color("algorithm:N", sort=ALGORITHM_ORDER, legend=alt.Legend(columns=1, symbolLimit=40)),
        tooltip=["family", "algorithm", "operation", "variant", "workers", alt.Tooltip(f"{y}:Q", format=",.3~f"),
                 alt.Tooltip(f"{bounds[0]}:Q", format=",.3~f", title="95% CI low"),
                 alt.Tooltip(f"{bounds[1]}:Q", format=",.3~f", title="95% CI high")],
    )
    # the dash is on the lines only: points with it too would draw the legend's dashes as
    # dots, invisible
    lines = base.transform_calculate(**{DASH_FIELD: f"'{DASH_PREFIX}' + datum.variant"}).mark_line().encode(
        strokeDash=variant_dash(data))
    points = base.mark_point(size=40, opacity=1, filled=True).encode(shape=variant_shape(data))
    bars = base.transform_filter(f"isValid(datum['{bounds[0]}'])").mark_rule(strokeWidth=1.5).encode(
        y=alt.Y(f"{bounds[0]}:Q", scale=scale), y2=f"{bounds[1]}:Q", detail="variant:N")
    return alt.layer(lines, bars, points, *disturbed_layer(base, rows)).properties(width=PANEL_WIDTH,
                                                                                    height=PANEL_HEIGHT)


def _family_grid(cells: pd.DataFrame, y: str, y_title: str, title: str) -> alt.VConcatChart:
    """Lines against worker count, one panel per family (rows) and operation (columns),
    one colour per algorithm, one dash pattern per variant (mode and backend), drawn a
    little apart (`dodged`); each panel on a log axis of its own (`panel_grid`). One row
    per family, sign and verify side by side: legible at the paper's width."""
    bounds = [f"{y}_ci_low", f"{y}_ci_high"]
    data = split_by_host(ok_rows(cells), "operation")
    for b in bounds:  # a figure drawn from a column without an interval draws no bars
        if b not in data:
            data = data.assign(**{b: None})
    data = data.assign(disturbed_reps=data["disturbed_reps"] if "disturbed_reps" in data else 0)
    data = data[["algorithm", "family", "operation", "variant", "workers", y, *bounds, "disturbed_reps"]].dropna(
        subset=[y])
    workers = sorted(data["workers"].unique().tolist()) or [1]
    data, x_domain = dodged(data, workers)
    return panel_grid(data, "family", "operation",
                      lambda rows, bottom: _family_panel(rows, data, y, y_title, workers, x_domain, bottom),
                      FAMILY_ORDER, ["sign", "verify"]).properties(title=title)


def scaling(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    # a y title longer than the panel is high spaces the rows apart by its overhang: with
    # the type raised for print, "operations per second (log)" added 18 px to each row
    return _family_grid(cells, "ops_per_sec", "operations/s (log)",
                        "Throughput against workers, per mode and backend; "
                        "median of the repetitions, bars: 95% bootstrap interval")


def latency(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    return _family_grid(cells, "p99_latency_ms", "p99 latency, ms (log)",
                        "p99 latency against workers; median of the repetitions, bars: 95% bootstrap interval")


def efficiency(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    columns = ["algorithm", "operation", "variant", "workers", "scaling_efficiency", "scaling_efficiency_ci_low",
               "scaling_efficiency_ci_high"]
    data = split_by_host(ok_rows(cells), "operation").reindex(columns=columns).dropna(subset=["scaling_efficiency"])
    data["interval"] = [f"{lo:.2f}–{hi:.2f}" if pd.notna(lo) and pd.notna(hi) else ""
                        for lo, hi in zip(data["scaling_efficiency_ci_low"], data["scaling_efficiency_ci_high"])]
    base = alt.Chart(data).encode(
        x=alt.X("workers:O", title="workers"),
        y=alt.Y("algorithm:N", sort=ALGORITHM_ORDER, title=None),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("scaling_efficiency:Q", title="efficiency",
                        # red at half efficiency or less, green at full or more: the
                        # efficiencies a sweep gives lie near one, where a scale from zero
                        # drew 0.8 and 1.0 in one green
                        scale=alt.Scale(scheme="redyellowgreen", domain=[0.5, 1.0], clamp=True)),
        tooltip=["algorithm", "operation", "variant", "workers", alt.Tooltip("scaling_efficiency:Q", format=".2f"),
                 alt.Tooltip("interval:N", title="95% bootstrap interval")],
    )
    text = base.mark_text(fontSize=10, dy=-5).encode(text=alt.Text("scaling_efficiency:Q", format=".2f"))
    interval = base.mark_text(fontSize=8, dy=6).encode(text="interval:N")
    # a variant per row and an operation per column: five variants side by side made the
    # figure 1,081 px wide, which the PDF shrank to its text's width, the intervals to 3 pt
    rows = int(data.groupby("variant")["algorithm"].nunique().max()) if len(data) else 1
    return ((rect + text + interval).properties(width=alt.Step(64), height=24 * rows)
            .facet(row=alt.Row("variant:N", sort=VARIANT_ORDER, title=None),
                   column=alt.Column("operation:N", sort=["sign", "verify"], title=None))
            .resolve_scale(y="independent")  # a variant's rows: only the algorithms it ran
            .properties(title="Scaling efficiency median ops(N) / (N x median ops(1)); small: 95% bootstrap "
                              "interval"))


def thread_process_ratio(cells: pd.DataFrame) -> pd.DataFrame:
    """Threading throughput / multiprocess throughput at the same algorithm, operation,
    worker count and backend (one row each), with both medians, the range of the
    threading cell's repetitions (`threading_reps_min/max`) and each mode's CPU use (the
    median over its repetitions of the workers' busy share, `threading_cpu`,
    `multiprocess_cpu`)."""
    data = ok_rows(cells)
    index = ["algorithm", "operation", "workers", "backend"]
    wide = data.pivot_table(index=index, columns="mode", values="ops_per_sec").reset_index()
    if not {"threading", "multiprocess"} <= set(wide.columns):
        return pd.DataFrame(columns=[*index, "ratio", "ratio_ci_low", "ratio_ci_high", "threading_reps_min",
                                     "threading_reps_max"])
    wide["ratio"] = wide["threading"] / wide["multiprocess"]
    if "avg_cpu_utilization" in data:
        cpu = data.pivot_table(index=index, columns="mode", values="avg_cpu_utilization").reset_index()
        cpu = cpu.rename(columns={m: f"{m}_cpu" for m in ("threading", "multiprocess")})
        wide = wide.merge(cpu[[*index, *(c for c in ("threading_cpu", "multiprocess_cpu") if c in cpu)]],
                          on=index, how="left")
    reps = _repetitions(data, [*index, "mode"])
    lows, highs, fewest, most = [], [], [], []
    for r in wide.itertuples():
        key = (r.algorithm, r.operation, r.workers, r.backend)
        threads = reps.get((*key, "threading"), [])
        lo, hi = stats.bootstrap_ratio_ci(threads, reps.get((*key, "multiprocess"), []))
        lows.append(lo)
        highs.append(hi)
        fewest.append(min(threads, default=float("nan")))
        most.append(max(threads, default=float("nan")))
    wide["ratio_ci_low"], wide["ratio_ci_high"] = lows, highs
    wide["threading_reps_min"], wide["threading_reps_max"] = fewest, most
    return wide.dropna(subset=["ratio"])


def _repetitions(data: pd.DataFrame, keys: list[str]) -> dict:
    """key -> the cell's repetition rates (`ops_per_sec_reps`; none in tables without it)."""
    if "ops_per_sec_reps" not in data:
        return {}
    return {tuple(getattr(r, k) for k in keys): list(r.ops_per_sec_reps) for r in data.itertuples()}


def _ratio_axis(values: pd.Series, title: str) -> alt.X:
    """An x axis from 0 that shows every ratio; a whisker reaching past it is cut at
    the edge (one wild repetition would otherwise squash every bar)."""
    top = max(1.1, float(values.max()) * 1.5) if len(values) else 1.1
    return alt.X("ratio:Q", title=title, scale=alt.Scale(domain=[0, top], clamp=True))


def gil_ratio(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    wide = thread_process_ratio(cells)
    if wide.empty:
        return note("Threading / multiprocess ratio", "needs both modes in the run")
    # one row per algorithm and backend, named by both: the axis labels come with the data
    # they label (a facet's headers are sorted apart from its panels when scales differ)
    backends = ["pyca", "liboqs-python", "openssl-cffi"]
    wide = wide.assign(row=wide["algorithm"] + " · " + wide["backend"])
    order = [f"{a} · {b}" for a in ALGORITHM_ORDER for b in backends + sorted(set(wide["backend"]) - set(backends))]
    rows = [r for r in order if r in set(wide["row"])]
    base = alt.Chart().encode(
        y=alt.Y("row:N", title=None, sort=rows, axis=alt.Axis(labelLimit=320)),
        yOffset=alt.YOffset("workers:O"),
    )
    bars = base.mark_bar().encode(
        x=_ratio_axis(wide["ratio"], "threading / multiprocess throughput"),
        color=alt.Color("workers:O", title="workers"),
        tooltip=["algorithm", "operation", "backend", "workers", alt.Tooltip("ratio:Q", format=".3f"),
                 alt.Tooltip("ratio_ci_low:Q", format=".3f", title="interval low"),
                 alt.Tooltip("ratio_ci_high:Q", format=".3f", title="interval high"),
                 alt.Tooltip("threading:Q", format=",.1f"), alt.Tooltip("multiprocess:Q", format=",.1f")])
    whiskers = base.transform_filter("isValid(datum.ratio_ci_low)").mark_rule(color="#222222").encode(
        x="ratio_ci_low:Q", x2="ratio_ci_high:Q")
    parity = alt.Chart().mark_rule(strokeDash=[4, 4], color="#444444").encode(x=alt.datum(1.0))
    chart = alt.layer(bars, whiskers, parity, data=wide).properties(width=220, height=alt.Step(9)).facet(
        column=alt.Column("operation:N", sort=["sign", "verify"], title=None))
    return chart.properties(title="Threading throughput over multiprocess throughput, per algorithm and backend "
                                  "(dashed: parity; whiskers: 95% bootstrap interval)")


def python_cost_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm, operation and Python backend, with one worker in threading mode:
    the time per operation above the native runner's (µs), and the backend's rate as a
    fraction of the native rate."""
    ok = ok_rows(cells)
    one = ok[ok["workers"] == 1]
    native = one[one["mode"] == "native-threads"].set_index(["algorithm", "operation"])
    python = one[one["mode"] == "threading"]
    rows = []
    for r in python.itertuples():
        if (r.algorithm, r.operation) not in native.index:
            continue
        nat = native.loc[(r.algorithm, r.operation)]
        base = nat["ops_per_sec"]
        if base is None or pd.isna(base) or not r.ops_per_sec:
            continue
        lo, hi = stats.bootstrap_ratio_ci(getattr(r, "ops_per_sec_reps", []),
                                          nat["ops_per_sec_reps"] if "ops_per_sec_reps" in nat else [])
        rows.append({"algorithm": r.algorithm, "family": r.family, "operation": r.operation, "backend": r.backend,
                     "native_ops_per_sec": base, "backend_ops_per_sec": r.ops_per_sec,
                     "fraction_of_native": r.ops_per_sec / base, "fraction_of_native_ci_low": lo,
                     "fraction_of_native_ci_high": hi,
                     "python_cost_us": 1e6 / r.ops_per_sec - 1e6 / base})
    return pd.DataFrame(rows, columns=["algorithm", "family", "operation", "backend", "native_ops_per_sec",
                                       "backend_ops_per_sec", "fraction_of_native", "fraction_of_native_ci_low",
                                       "fraction_of_native_ci_high", "python_cost_us"])


def python_cost(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    data = python_cost_table(cells)
    if data.empty:
        return note("What Python costs per operation", "needs the native-threads mode and a Python mode in the run")
    base = alt.Chart(data)
    bars = base.mark_bar().encode(
        x=alt.X("fraction_of_native:Q", title="rate / native rate (1 thread)",
                scale=alt.Scale(domain=[0, max(1.1, float(data["fraction_of_native"].max()) * 1.5)], clamp=True)),
        y=alt.Y("algorithm:N", sort=ALGORITHM_ORDER, title=None),
        yOffset=alt.YOffset("backend:N"),
        color=alt.Color("backend:N", title="backend"),
        tooltip=["algorithm", "operation", "backend", alt.Tooltip("fraction_of_native:Q", format=".3f"),
                 alt.Tooltip("python_cost_us:Q", title="µs per operation above native", format=",.2f"),
                 alt.Tooltip("backend_ops_per_sec:Q", format=",.1f"), alt.Tooltip("native_ops_per_sec:Q", format=",.1f")],
    )
    whiskers = base.transform_filter("isValid(datum.fraction_of_native_ci_low)").mark_rule(color="#222222").encode(
        x="fraction_of_native_ci_low:Q", x2="fraction_of_native_ci_high:Q", y=alt.Y("algorithm:N", sort=ALGORITHM_ORDER, title=None),
        yOffset=alt.YOffset("backend:N"))
    rule = base.mark_rule(strokeDash=[4, 4], color="#444444").encode(x=alt.datum(1.0))
    return (alt.layer(bars, whiskers, rule).properties(width=260, height=alt.Step(9))
            .facet(column=alt.Column("operation:N", sort=["sign", "verify"], title=None))
            .properties(title="What Python costs per operation: each backend's rate against the native runner's "
                              "(threads, 1 worker; dashed: native; whiskers: 95% bootstrap interval over both cells' repetitions)"))


def energy(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(cells).dropna(subset=["energy_per_op_j"])
    if data.empty:
        reason = (machine.get("capabilities", {}).get("energy", {}).get("reason")
                  or "no energy source on this machine")
        return note("Energy per operation", f"not measured on this machine: {reason}")
    data = data.assign(energy_per_op_mj=data["energy_per_op_j"] * 1e3)
    return _family_grid(data, "energy_per_op_mj", "energy per operation, mJ (log)",
                        "Energy per operation against workers")
