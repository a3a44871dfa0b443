"""`{{< include path >}}`, the one shortcode of the paper's Quarto subset, expanded at the
text level as Quarto does before pandoc reads the document.

As in Quarto, an include is pasted into the main document: a relative path, in the main
document or in an included file alike, is relative to the main document's folder, and a
path starting with `/` to the project's. An included file's front matter is dropped.
Every file read (the main document and each include) must stay within the subset
(:mod:`.subset`); anything else is an UnsupportedSyntaxError naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import subset
from .errors import MissingIncludeError, RenderError, UnsupportedSyntaxError

INCLUDE = re.compile(r"\{\{<\s*include\s+(\S+?)\s*>\}\}")
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


def expand(path: Path, project_dir: Path, main_dir: Path, _stack: tuple[Path, ...] = ()) -> str:
    """The text of `path` with every include pasted in (front matter kept for the main
    document, whose title block pandoc reads)."""
    stack = _stack + (path.resolve(),)
    text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    problems = subset.problems(text, str(path))
    if problems:
        raise UnsupportedSyntaxError("outside the paper's Quarto subset (src/parbench/render/subset.py): "
                                     + "; ".join(problems))
    if _stack:
        text = FRONT_MATTER.sub("", text).lstrip("\n")

    def paste(m: re.Match[str]) -> str:
        target = m.group(1)
        included = project_dir / target.lstrip("/") if target.startswith("/") else main_dir / target
        line = text.count("\n", 0, m.start()) + 1
        if not included.is_file():
            raise MissingIncludeError(f"{path}:{line}: included file not found: {included}")
        if included.resolve() in stack:
            chain = " -> ".join(str(p) for p in stack + (included.resolve(),))
            raise RenderError(f"{path}:{line}: include cycle: {chain}")
        return expand(included, project_dir, main_dir, stack).rstrip("\n")

    return INCLUDE.sub(paste, text)
