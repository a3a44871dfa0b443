"""Refresh the paper check's fixture tables (tests/fixtures/paper_tables/<profile>/) from a
run's processed folder: the machine record and every table a study's paper or figures
read, as that run wrote them. Run after a `make paper` whose tables should become the
fixtures:

    .venv/bin/python tools/refresh_paper_fixtures.py data/processed/local [NAME]

NAME (default: the processed folder's name, the profile) names the fixture folder: a
run's tables kept beside the others for the spread sweep (tests/test_paper_spreads*.py)
take a name of their own, so that they replace none.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from parbench import studies

REPO = Path(__file__).resolve().parents[1]


def main(processed: str, name: str | None = None) -> int:
    src = Path(processed)
    dest = REPO / "tests" / "fixtures" / "paper_tables" / (name or src.name)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    names = {t for s in studies.registered() for t in s.paper().TABLES}
    names |= {i for s in studies.registered() for _, (_, inputs) in s.figures().items() for i in inputs}
    shutil.copy(src / "machine.json", dest / "machine.json")
    for name in sorted(names):
        if (src / f"{name}.parquet").exists():
            shutil.copy(src / f"{name}.parquet", dest / f"{name}.parquet")
    size = sum(p.stat().st_size for p in dest.iterdir())
    print(f"{len(list(dest.iterdir()))} files, {size / 1e6:.1f} MB -> {dest}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
