"""The machines a profile's cells ran on, read from the cells' own provenance columns
(`hostname`, `cpu_model`, `logical_cores`) in the tidy tables, not from the one machine
record of the run: a profile measured on several nodes (SLURM cells spread over a
partition, or several hosts measuring into one `data/` tree) has cells from each.

Used by the paper's Method section (`machines`) and by figures, which tell the
machines apart only when there is more than one (`several_hosts`, `host_encoding`,
`split_by_host`), so that a one-machine run draws exactly as before. Any study whose
tables carry those columns is covered without naming it here.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd


# the label of a row whose cell recorded no hostname
UNKNOWN_HOST = "unknown host"
# the column figures draw the host from
HOST = "host"


def host_labels(frame: pd.DataFrame) -> pd.Series:
    """Each row's host: its hostname, or UNKNOWN_HOST where none was recorded."""
    if "hostname" not in frame.columns:
        return pd.Series(UNKNOWN_HOST, index=frame.index, dtype=object)
    return frame["hostname"].astype(object).where(frame["hostname"].notna(), UNKNOWN_HOST).astype(str)


def with_host(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a `host` column (HOST) for figures to encode."""
    return frame.assign(**{HOST: host_labels(frame)})


def several_hosts(frame: pd.DataFrame) -> bool:
    """Whether the rows come from more than one machine."""
    return host_labels(frame).nunique() > 1


def host_encoding(frame: pd.DataFrame) -> dict:
    """Encoding channels that tell hosts apart in a line chart with points of
    `with_host(frame)`: a point shape per host (with its legend), and a line per host
    (`detail`), never one line joining two machines' cells. Empty when every row comes
    from one machine."""
    import altair as alt

    if not several_hosts(frame):
        return {}
    return {"shape": alt.Shape(f"{HOST}:N", title="host"), "detail": alt.Detail(f"{HOST}:N")}


def split_by_host(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """With rows from several machines, `column` (a facet's field) becomes
    "<value> on <host>", so that each machine gets panels of its own; unchanged otherwise."""
    if not several_hosts(frame):
        return frame
    return frame.assign(**{column: frame[column].astype(str) + " on " + host_labels(frame)})


def machines(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per machine any cell ran on: `host`, `cpu_model`, `logical_cores` and
    `studies` (the keys of `tables` with cells from it, comma-separated). `tables` maps a
    study to its tables' frames concatenated, or to one frame; frames without a
    `hostname` column, and rows without one (a cell that was not measured, a table of
    the run rather than of a cell), are left out: they do not say where anything ran."""
    rows = {}
    for study, frame in tables.items():
        if frame is None or "hostname" not in frame.columns or frame.empty:
            continue
        frame = frame[frame["hostname"].notna()]
        if frame.empty:
            continue
        facts = frame.assign(**{HOST: host_labels(frame)})
        for host, f in facts.groupby(HOST, sort=True):
            entry = rows.setdefault(host, {HOST: host, "cpu_model": None, "logical_cores": None, "studies": []})
            for column in ("cpu_model", "logical_cores"):
                if entry[column] is None and column in f.columns and f[column].notna().any():
                    value = f[column].dropna().iloc[0]
                    entry[column] = value.item() if hasattr(value, "item") else value
            if study not in entry["studies"]:
                entry["studies"].append(study)
    frame = pd.DataFrame([dict(e, studies=", ".join(e["studies"])) for e in rows.values()],
                         columns=[HOST, "cpu_model", "logical_cores", "studies"])
    return frame.sort_values(HOST).reset_index(drop=True)
