"""YAML files read one way: the safe loader, in C (libyaml) where PyYAML was built with it.

Both loaders accept the same documents and build the same objects; the C one parses the
config's schema, the studies' schemas and their captions files several times faster, which
every cell's start pays for (a composed config is kept as JSON, `config.COMPOSED_CACHE`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read(path: Path) -> Any:
    """The document in `path` (None for an empty file); a fresh object on every call."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=SAFE_LOADER)
