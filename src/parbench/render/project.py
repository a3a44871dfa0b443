"""Read a Quarto project directory: ``_quarto.yml``, the main ``index.qmd`` and its
YAML front matter, merged the way Quarto merges them (document over project, the
``format: html:`` block over top-level keys)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import RenderError

CONFIG_NAMES = ("_quarto.yml", "_quarto.yaml")
DEFAULT_OUTPUT_DIR = "_output"

# Document-level metadata the pandoc fallback shows in the title block.
TITLE_KEYS = ("title", "subtitle", "author", "date", "abstract", "keywords", "lang")

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


def _load_yaml(text: str, where: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RenderError(f"invalid YAML in {where}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RenderError(f"invalid YAML in {where}: expected a mapping, got {type(data).__name__}")
    return data


def split_front_matter(text: str, where: Path) -> tuple[dict[str, Any], str]:
    """Return (front matter mapping, body) of a .qmd/.md text."""
    text = text.lstrip("\ufeff")
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    body = text[m.end():]
    # Keep the line count of the body meaningful for error messages.
    return _load_yaml(m.group(1), where), "\n" * (m.group(0).count("\n")) + body


def _html_format(config: dict[str, Any]) -> dict[str, Any]:
    fmt = config.get("format")
    if isinstance(fmt, str):
        return {}
    if isinstance(fmt, dict):
        html = fmt.get("html")
        if isinstance(html, dict):
            return html
    return {}


@dataclass
class PaperProject:
    """A Quarto project (or single document directory) as the renderer sees it."""

    paper_dir: Path
    main_doc: Path
    config_path: Path | None
    project_config: dict[str, Any]
    front_matter: dict[str, Any]
    body: str
    variables: dict[str, Any] = field(default_factory=dict)

    @property
    def output_dir(self) -> Path:
        project = self.project_config.get("project") or {}
        out = project.get("output-dir") if isinstance(project, dict) else None
        return self.paper_dir / (out or DEFAULT_OUTPUT_DIR)

    @property
    def default_output(self) -> Path:
        return self.output_dir / (self.main_doc.stem + ".html")

    def option(self, key: str, default: Any = None) -> Any:
        """A format option, looked up as Quarto does: document ``format.html``,
        document top level, project ``format.html``, project top level."""
        for layer in (
            _html_format(self.front_matter),
            self.front_matter,
            _html_format(self.project_config),
            self.project_config,
        ):
            if key in layer:
                return layer[key]
        return default

    def crossref_option(self, key: str, default: str) -> str:
        for layer in (self.front_matter, self.project_config):
            cr = layer.get("crossref")
            if isinstance(cr, dict) and key in cr:
                return str(cr[key])
        return default

    def metadata(self) -> dict[str, Any]:
        """Merged document metadata (project first, then front matter)."""
        merged: dict[str, Any] = {}
        for layer in (self.project_config, _html_format(self.project_config),
                      self.front_matter, _html_format(self.front_matter)):
            for key, value in layer.items():
                if key not in ("format", "project", "crossref"):
                    merged[key] = value
        return merged

    def title_metadata(self) -> dict[str, Any]:
        """Title-block metadata normalised for pandoc's HTML template."""
        meta = self.metadata()
        out: dict[str, Any] = {}
        for key in TITLE_KEYS:
            if meta.get(key) in (None, "", []):
                continue
            value = meta[key]
            if key == "author":
                value = normalise_authors(value)
            elif key == "date":
                value = self._format_date(value, meta.get("date-format"))
            elif key == "keywords" and isinstance(value, list):
                value = [str(v) for v in value]
            elif not isinstance(value, str):
                value = str(value)
            out[key] = value
        if "title" not in out:
            out["pagetitle"] = self.main_doc.stem
        toc_title = self.option("toc-title")
        if toc_title:
            out["toc-title"] = str(toc_title)
        elif self.option("toc", False):
            out["toc-title"] = "Table of contents"  # Quarto's default
        return out

    def _format_date(self, value: Any, date_format: Any) -> str:
        if isinstance(value, str):
            special = value.strip().lower()
            if special in ("today", "now"):
                value = _dt.date.today()
            elif special == "last-modified":
                value = _dt.date.fromtimestamp(self.main_doc.stat().st_mtime)
            else:
                try:
                    value = _dt.date.fromisoformat(value.strip())
                except ValueError:
                    return value
        if isinstance(value, _dt.datetime):
            value = value.date()
        if isinstance(value, _dt.date):
            if str(date_format or "").lower() == "iso":
                return value.isoformat()
            # Quarto's default HTML date format, "MMMM D, YYYY".
            return f"{value.strftime('%B')} {value.day}, {value.year}"
        return str(value)


def normalise_authors(value: Any) -> list[str]:
    """Quarto authors may be a string, a list of strings, or (lists of) mappings with
    ``name`` (itself a string or ``{given, family, literal}``); pandoc's template wants
    a list of strings."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if isinstance(item, dict):
            name = item.get("name", "")
            if isinstance(name, dict):
                name = name.get("literal") or " ".join(
                    str(name[k]) for k in ("given", "family") if name.get(k)
                )
            if name:
                names.append(str(name))
        elif item not in (None, ""):
            names.append(str(item))
    return names


def find_main_doc(paper_dir: Path) -> Path:
    index = paper_dir / "index.qmd"
    if index.is_file():
        return index
    qmds = sorted(p for p in paper_dir.glob("*.qmd") if not p.name.startswith("_"))
    if len(qmds) == 1:
        return qmds[0]
    if not qmds:
        raise RenderError(f"no index.qmd (or other .qmd document) in {paper_dir}")
    names = ", ".join(p.name for p in qmds)
    raise RenderError(f"{paper_dir} has several .qmd documents ({names}) and no index.qmd")


def load_project(paper_dir: str | Path) -> PaperProject:
    paper_dir = Path(paper_dir)
    if not paper_dir.is_dir():
        raise RenderError(f"paper directory not found: {paper_dir}")
    config_path = next((paper_dir / n for n in CONFIG_NAMES if (paper_dir / n).is_file()), None)
    config = _load_yaml(config_path.read_text(encoding="utf-8"), config_path) if config_path else {}
    main_doc = find_main_doc(paper_dir)
    front, body = split_front_matter(main_doc.read_text(encoding="utf-8"), main_doc)
    variables: dict[str, Any] = {}
    for name in ("_variables.yml", "_variables.yaml"):
        if (paper_dir / name).is_file():
            variables = _load_yaml((paper_dir / name).read_text(encoding="utf-8"), paper_dir / name)
            break
    return PaperProject(paper_dir, main_doc, config_path, config, front, body, variables)
