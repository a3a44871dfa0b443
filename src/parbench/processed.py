"""What a study's aggregate step writes, written alike for every study: its tidy tables
as `<out>/<study>_<name>.parquet`, its files in the seed's formats, and the one line that
counts its cells by status. Every file is written through a temporary file and a rename,
so an interrupted aggregate never leaves half a table where the paper would read it."""

from __future__ import annotations

from pathlib import Path

from parbench.records import replace_atomically

STATUSES = ("ok", "unavailable", "failed")


def write_parquet(frame, path: str | Path) -> Path:
    return replace_atomically(Path(path), lambda tmp: frame.to_parquet(tmp, index=False))


def write_csv(frame, path: str | Path) -> Path:
    return replace_atomically(Path(path), lambda tmp: frame.to_csv(tmp, index=False))


def write_tables(study: str, tables: dict, out: str | Path, names=None) -> list[Path]:
    """Each table (all of `tables`, or those `names`) as `<out>/<study>_<name>.parquet`."""
    return [write_parquet(tables[name], Path(out) / f"{study}_{name}.parquet") for name in (names or tables)]


def write_study(study: str, tables: dict, out: str | Path, seed_file: str, seed_text: str, summary: str,
                names=None) -> None:
    """What an aggregate step writes and prints, alike for every study: its tables
    (`write_tables`), the seed's own text (`<out>/<seed_file>`, printed as the seed printed
    it), then the one line that counts what was aggregated (`summary`, which ends with the
    folder written to)."""
    from parbench.records import write_atomic

    out = Path(out)
    write_tables(study, tables, out, names)
    write_atomic(out / seed_file, seed_text)
    print(seed_text, flush=True)
    print(f"{summary} -> {out}")


def status_counts(frame, statuses=STATUSES, column: str = "status") -> str:
    """"3 ok, 1 unavailable, 0 failed": how many rows of `frame` have each status."""
    counts = frame[column].value_counts().to_dict() if len(frame) else {}
    return ", ".join(f"{counts.get(s, 0)} {s}" for s in statuses)
