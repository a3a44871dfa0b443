"""Read a Quarto project folder as the pandoc fallback needs it: `_quarto.yml` (its output
folder, and the options of its `html` and `typst` formats) and the main document,
`index.qmd`, whose front matter (title, subtitle, abstract) pandoc reads itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import RenderError

CONFIG = "_quarto.yml"
MAIN = "index.qmd"
DEFAULT_OUTPUT_DIR = "_output"


@dataclass
class PaperProject:
    paper_dir: Path
    config: dict[str, Any]

    @property
    def main_doc(self) -> Path:
        return self.paper_dir / MAIN

    @property
    def default_output(self) -> Path:
        project = self.config.get("project") or {}
        return self.paper_dir / (project.get("output-dir") or DEFAULT_OUTPUT_DIR) / "index.html"

    def format_options(self, name: str) -> dict[str, Any]:
        """`format: <name>:` of _quarto.yml (top-level keys beneath it, as Quarto merges them)."""
        top = {k: v for k, v in self.config.items() if k not in ("project", "format")}
        formats = self.config.get("format") or {}
        own = formats.get(name) if isinstance(formats, dict) else None
        return {**top, **(own if isinstance(own, dict) else {})}


def load_project(paper_dir: str | Path) -> PaperProject:
    paper_dir = Path(paper_dir)
    if not paper_dir.is_dir():
        raise RenderError(f"paper directory not found: {paper_dir}")
    if not (paper_dir / MAIN).is_file():
        raise RenderError(f"no {MAIN} in {paper_dir}: the paper is the Quarto project's {MAIN}")
    config: Any = {}
    if (paper_dir / CONFIG).is_file():
        try:
            config = yaml.safe_load((paper_dir / CONFIG).read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise RenderError(f"invalid YAML in {paper_dir / CONFIG}: {exc}") from exc
        if not isinstance(config, dict):
            raise RenderError(f"invalid YAML in {paper_dir / CONFIG}: expected a mapping")
    return PaperProject(paper_dir, config)
