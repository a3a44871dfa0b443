"""Render the paper (a Quarto project) to HTML and PDF.

With Quarto on PATH, ``quarto render <paper_dir>`` does it (the project's formats: html
and typst). Without Quarto, the same sources are rendered to one self-contained HTML
file with pandoc (from pypandoc-binary), supporting the paper's Quarto subset
(:mod:`.subset`: includes, section, figure and table labels and references, two callout
kinds) with one Lua filter (`paper.lua`), and to PDF through pandoc's Typst writer and
the Typst compiler of the PyPI package `typst` (:mod:`.typst`). Either way the result
says which renderer was used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from .errors import (
    CrossRefError,
    MissingIncludeError,
    QuartoNotFoundError,
    RenderError,
    UnsupportedSyntaxError,
)
from .pandoc import render_with_pandoc
from .project import load_project
from .quarto import find_quarto, quarto_version, render_with_quarto, require_quarto
from .typst import typst_version

__all__ = [
    "RENDERERS",
    "CrossRefError",
    "MissingIncludeError",
    "QuartoNotFoundError",
    "RenderError",
    "RenderResult",
    "UnsupportedSyntaxError",
    "find_quarto",
    "render_paper",
]

RENDERERS = ("auto", "quarto", "pandoc")


@dataclass
class RenderResult:
    renderer: Literal["quarto", "pandoc"]
    renderer_version: str
    output_path: Path
    figures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pdf_path: Path | None = None


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


def render_paper(
    paper_dir: str | os.PathLike[str],
    output_html: str | os.PathLike[str] | None = None,
    renderer: str = "auto",
    log: Callable[[str], object] | None = print,
    pdf: bool = True,
) -> RenderResult:
    """Render ``paper_dir`` (a Quarto project with ``index.qmd``) to HTML and, with
    ``pdf``, to PDF beside it (same name, ``.pdf``).

    ``renderer``: "auto" (Quarto if on PATH, else pandoc), "quarto" (error without
    Quarto) or "pandoc" (the built-in fallback). ``output_html`` defaults to
    ``<paper_dir>/<project.output-dir, default _output>/index.html``.
    Raises :class:`RenderError` (or a subclass) on any problem.
    """
    if renderer not in RENDERERS:
        raise RenderError(f"unknown renderer {renderer!r}: choose one of {', '.join(RENDERERS)}")
    project = load_project(paper_dir)
    output = Path(output_html) if output_html is not None else project.default_output

    quarto = None
    if renderer == "quarto":
        quarto = require_quarto()
    elif renderer == "auto":
        quarto = find_quarto()

    pdf_output = output.with_suffix(".pdf") if pdf else None
    if quarto is not None:
        version = quarto_version(quarto)
        figures, warnings = render_with_quarto(quarto, project, output, pdf_output)
        result = RenderResult("quarto", version, output, figures, warnings, pdf_output)
        how = f"with Quarto {version}"
    else:
        outcome = render_with_pandoc(project, output, pdf_output=pdf_output)
        result = RenderResult("pandoc", outcome.version, output, outcome.figures, outcome.warnings, outcome.pdf)
        why = "Quarto not found on PATH" if renderer == "auto" else "pandoc renderer requested"
        with_typst = f" and typst {typst_version()}" if pdf_output else ""
        how = f"with pandoc {outcome.version}{with_typst} ({why})"

    if log is not None:
        both = f" and {_display(pdf_output)}" if pdf_output else ""
        log(f"paper: rendered {_display(output)}{both} {how}")
        for warning in result.warnings:
            log(f"paper: warning: {warning}")
    return result
