"""The sigpar figures. Each takes the study's cells table (Parquet `sigpar_cells`) and
the machine record, and returns a chart; only cells with status "ok" are drawn."""

from __future__ import annotations

import altair as alt
import pandas as pd

from parbench.figures import note, ok_rows

from parbench.studies.sigpar.algorithms import CATALOG

ALGORITHM_ORDER = list(CATALOG)
FAMILY_ORDER = ["RSA", "ECDSA", "EdDSA", "ML-DSA", "Falcon", "SPHINCS+"]
MODE_DASH = alt.StrokeDash("mode:N", title="mode", sort=["threading", "multiprocess"],
                           legend=alt.Legend(symbolType="stroke", symbolStrokeColor="#444444"))


def _family_grid(cells: pd.DataFrame, y: str, y_title: str, title: str) -> alt.Chart:
    """Lines against worker count, one panel per family (columns) and operation (rows),
    one colour per algorithm, dashed for multiprocess."""
    data = ok_rows(cells)[["algorithm", "family", "operation", "mode", "workers", y]].dropna()
    workers = sorted(data["workers"].unique().tolist())
    base = alt.Chart(data).encode(
        x=alt.X("workers:Q", title="workers", scale=alt.Scale(domain=[min(workers), max(workers)]),
                axis=alt.Axis(values=workers, format="d")),
        y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log")),
        color=alt.Color("algorithm:N", sort=ALGORITHM_ORDER, legend=alt.Legend(columns=1, symbolLimit=40)),
        strokeDash=MODE_DASH,
        tooltip=["algorithm", "operation", "mode", "workers", alt.Tooltip(f"{y}:Q", format=",.3~f")],
    )
    chart = (base.mark_line(point=True).properties(width=150, height=130)
             .facet(column=alt.Column("family:N", sort=FAMILY_ORDER, title=None),
                    row=alt.Row("operation:N", sort=["sign", "verify"], title=None))
             .resolve_scale(y="independent"))
    return chart.properties(title=title)


def scaling(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    return _family_grid(cells, "ops_per_sec", "operations per second (log)",
                        "Throughput against workers: sign and verify, threading (solid) and multiprocess (dashed)")


def latency(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    return _family_grid(cells, "p99_latency_ms", "p99 latency, ms (log)",
                        "p99 latency against workers")


def efficiency(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(cells)[["algorithm", "operation", "mode", "workers", "scaling_efficiency"]].dropna()
    base = alt.Chart(data).encode(
        x=alt.X("workers:O", title="workers"),
        y=alt.Y("algorithm:N", sort=ALGORITHM_ORDER, title=None),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("scaling_efficiency:Q", title="efficiency",
                        scale=alt.Scale(scheme="redyellowgreen", domain=[0, 1.1], clamp=True)),
        tooltip=["algorithm", "operation", "mode", "workers", alt.Tooltip("scaling_efficiency:Q", format=".2f")],
    )
    text = base.mark_text(fontSize=9).encode(text=alt.Text("scaling_efficiency:Q", format=".2f"))
    return ((rect + text).properties(width=22 * max(2, data["workers"].nunique()), height=alt.Step(14))
            .facet(column=alt.Column("mode:N", sort=["threading", "multiprocess"], title=None),
                   row=alt.Row("operation:N", sort=["sign", "verify"], title=None))
            .properties(title="Scaling efficiency ops(N) / (N x ops(1))"))


def gil_ratio(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(cells)
    wide = data.pivot_table(index=["algorithm", "operation", "workers"], columns="mode",
                            values="ops_per_sec").reset_index()
    if not {"threading", "multiprocess"} <= set(wide.columns):
        return note("Threading / multiprocess ratio", "needs both modes in the run")
    wide["ratio"] = wide["threading"] / wide["multiprocess"]
    wide = wide.dropna(subset=["ratio"])
    bars = alt.Chart(wide).mark_bar().encode(
        x=alt.X("ratio:Q", title="threading / multiprocess throughput"),
        y=alt.Y("workers:O", title=None),
        color=alt.Color("workers:O", title="workers"),
        row=alt.Row("algorithm:N", sort=ALGORITHM_ORDER, title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        column=alt.Column("operation:N", sort=["sign", "verify"], title=None),
        tooltip=["algorithm", "operation", "workers", alt.Tooltip("ratio:Q", format=".3f"),
                 alt.Tooltip("threading:Q", format=",.1f"), alt.Tooltip("multiprocess:Q", format=",.1f")],
    ).properties(width=220, height=alt.Step(8))
    return bars.properties(title="What threads cost against processes (1.0 = same throughput)")


def energy(cells: pd.DataFrame, machine: dict) -> alt.Chart:
    data = ok_rows(cells).dropna(subset=["energy_per_op_j"])
    if data.empty:
        reason = (machine.get("capabilities", {}).get("energy", {}).get("reason")
                  or "no energy source on this machine")
        return note("Energy per operation", f"not measured on this machine: {reason}")
    data = data.assign(energy_per_op_mj=data["energy_per_op_j"] * 1e3)
    return _family_grid(data, "energy_per_op_mj", "energy per operation, mJ (log)",
                        "Energy per operation against workers")


# name -> (function, the tables it draws from)
FIGURES = {
    "sigpar_scaling": (scaling, ["sigpar_cells"]),
    "sigpar_efficiency": (efficiency, ["sigpar_cells"]),
    "sigpar_latency": (latency, ["sigpar_cells"]),
    "sigpar_gil_ratio": (gil_ratio, ["sigpar_cells"]),
    "sigpar_energy": (energy, ["sigpar_cells"]),
}
