"""The seed's report: its box-drawn table and its wording of the ratio.

The seed (`benchmarks/run_benchmarks.py --output reports/multithread_cpu_report.md`)
prints one row per benchmark, the two interpreters' wall times in milliseconds and their
ratio:

    │ Benchmark              │ protopy (ms) │ cpython (ms) │ Ratio        │
    ├────────────────────────┼──────────────┼──────────────┼──────────────┤
    │ multithread_cpu        │       120.00 │       380.00 │ 0.32x faster │

Ratio = the runtime's time / the baseline's (CPython's) time. Below 1 the runtime is
faster, worded with two decimals (`0.32x faster`, 120 / 380; three where two would read
1.00); above 1 it is slower,
worded with one decimal (`3.3x slower`, 215 / 65; two where one would read 1.0:
`1.04x slower`); exactly 1 is the same wall time
(`1.00x same`). Columns are as wide as the seed's (22 and 12 characters) or as their
longest entry.

The seed words every ratio from the medians alone. Where a row says it is not
distinguishable (`"distinguishable": False`: the interval of the ratio does not set it
apart from one by more than the machine's spread), the word gives way to `n.d.`
(`0.98x n.d.`): the paper's blocks never say faster or slower where the data cannot.
"""

from __future__ import annotations

import math

BENCHMARK_WIDTH = 22
VALUE_WIDTH = 12


def ratio_text(ratio: float | None, distinguishable: bool = True) -> str:
    """The seed's wording of a time ratio (runtime / baseline); `n.d.` for its word where
    the ratio cannot be told apart from one."""
    if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)) or ratio <= 0:
        return "n/a"
    if not distinguishable:
        return f"{ratio:.2f}x n.d."
    if ratio < 1:  # two decimals as the seed's, three where two would read 1.00
        return f"{ratio:.2f}x faster" if round(ratio, 2) < 1 else f"{ratio:.3f}x faster"
    if ratio > 1:  # one decimal as the seed's, two where one would read 1.0
        return f"{ratio:.1f}x slower" if round(ratio, 1) > 1 else f"{ratio:.2f}x slower"
    return "1.00x same"


def _ms(value) -> str:
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.2f}"


def box_table(rows: list[dict], runtime: str, baseline: str) -> str:
    """The seed's table: rows of {"benchmark", "runtime_ms", "baseline_ms"} (a number, or
    a word such as "failed" where there is no time; optionally "distinguishable"); the
    ratio is computed here."""
    header = ["Benchmark", f"{runtime} (ms)", f"{baseline} (ms)", "Ratio"]
    body = []
    for row in rows:
        a, b = row["runtime_ms"], row["baseline_ms"]
        numeric = all(isinstance(v, (int, float)) and not math.isnan(v) for v in (a, b))
        body.append([row["benchmark"], _ms(a), _ms(b),
                     ratio_text(a / b if numeric and b else None, row.get("distinguishable", True))])
    widths = [max([BENCHMARK_WIDTH if i == 0 else VALUE_WIDTH, len(header[i])] + [len(r[i]) for r in body])
              for i in range(4)]

    def line(cells: list[str]) -> str:
        text = [cells[0].ljust(widths[0]), cells[1].rjust(widths[1]), cells[2].rjust(widths[2]),
                cells[3].ljust(widths[3])]
        return "│ " + " │ ".join(text) + " │"

    head = "│ " + " │ ".join(h.ljust(w) for h, w in zip(header, widths)) + " │"
    rule = "├" + "┼".join("─" * (w + 2) for w in widths) + "┤"
    return "\n".join([head, rule, *(line(r) for r in body)])
