"""The shape of what a pipeline run makes, for the golden check: every Parquet table's
columns and dtypes, every figure's name, and the rendered paper's section, figure and
table labels. A rework of the code (not of the studies) must leave it unchanged.

    python tests/golden.py record <workdir> <profile>   # write tests/fixtures/golden/<profile>.json

A column that a run leaves all null (a sensor this machine lacks, say) has no dtype to
compare: it is recorded as "null" and its dtype is checked only where both runs have values.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "golden"
LABEL = re.compile(r'\bid="((sec|fig|tbl)-[A-Za-z0-9_-]+)"')
# Labels of parts the paper has only where the machine has what they need: energy per
# operation (a power sensor: RAPL or macOS powermetrics) and the free-threaded CPython
# comparison (a CPython built from source). They may come or go from one machine to the
# next without any change of the code, so the check lets them.
MACHINE_DEPENDENT = {"fig-sigpar-energy", "tbl-gil-freethreading"}


def shape(workdir: Path, profile: str) -> dict:
    tables = {}
    for path in sorted((workdir / "data" / "processed" / profile).glob("*.parquet")):
        frame = pd.read_parquet(path)
        tables[path.stem] = {c: "null" if frame[c].isna().all() else str(frame[c].dtype) for c in frame.columns}
    figures = sorted({p.stem for p in (workdir / "figures" / profile).glob("*.svg")})
    html = (workdir / "paper" / "_output" / "index.html").read_text()
    labels: dict[str, list[str]] = {"sec": [], "fig": [], "tbl": []}
    for label, kind in LABEL.findall(html):
        if label not in labels[kind]:
            labels[kind].append(label)  # in the paper's order: numbering follows it
    return {"tables": tables, "figures": figures, "labels": labels}


def differences(golden: dict, now: dict) -> list[str]:
    """What changed from `golden` to `now`, one line each (empty: the same shape)."""
    out = []
    for name in sorted(set(golden["tables"]) | set(now["tables"])):
        was, got = golden["tables"].get(name), now["tables"].get(name)
        if was is None or got is None:
            out.append(f"table {name}: {'new' if was is None else 'gone'}")
            continue
        if list(was) != list(got):
            out.append(f"table {name}: columns {list(was)} became {list(got)}")
        for column in set(was) & set(got):
            if "null" not in (was[column], got[column]) and was[column] != got[column]:
                out.append(f"table {name}: column {column} was {was[column]}, is {got[column]}")
    if golden["figures"] != now["figures"]:
        out.append(f"figures: {sorted(set(golden['figures']) ^ set(now['figures']))} differ")
    for kind, was in golden["labels"].items():
        was, got = ([x for x in labels if x not in MACHINE_DEPENDENT] for labels in (was, now["labels"].get(kind, [])))
        if was != got:
            out.append(f"paper {kind} labels: {was} became {got}")
    return out


def load(profile: str) -> dict:
    return json.loads((FIXTURES / f"{profile}.json").read_text())


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "record":
        sys.exit(__doc__)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    out = FIXTURES / f"{sys.argv[3]}.json"
    out.write_text(json.dumps(shape(Path(sys.argv[2]), sys.argv[3]), indent=1) + "\n")
    print(f"recorded {out}")
