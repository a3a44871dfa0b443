"""Render with Quarto when it is installed: ``quarto render <paper_dir>``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from .errors import QuartoNotFoundError, RenderError
from .project import PaperProject

INSTALL_HINT = (
    "install Quarto from conda-forge (`conda install -c conda-forge quarto`) "
    "or from https://quarto.org/docs/get-started/, or use --renderer pandoc"
)

_FIG_ID = re.compile(r"""\bid=["'](fig-[^"']+)["']""")


def find_quarto() -> str | None:
    """The ``quarto`` executable on PATH, or None."""
    return shutil.which("quarto")


def require_quarto() -> str:
    exe = find_quarto()
    if exe is None:
        raise QuartoNotFoundError(f"renderer 'quarto' requested but quarto is not on PATH: {INSTALL_HINT}")
    return exe


def quarto_version(exe: str) -> str:
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RenderError(f"cannot run {exe} --version: {exc}") from exc
    if proc.returncode != 0:
        raise RenderError(f"{exe} --version failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else "unknown"


def figure_ids(html: str) -> list[str]:
    """The ids of the figures of a rendered page, in order."""
    return list(dict.fromkeys(_FIG_ID.findall(html)))


def render_with_quarto(exe: str, project: PaperProject, output: Path,
                       pdf_output: Path | None = None) -> tuple[list[str], list[str]]:
    """Run Quarto (every format of the project: html, and typst for the PDF); copy its
    HTML to ``output`` (and its PDF to ``pdf_output``) if that is not where Quarto writes
    them. Returns (figure ids, warnings)."""
    produced = project.default_output
    produced_pdf = produced.with_suffix(".pdf")
    for stale in (produced, produced_pdf):
        if stale.exists():
            stale.unlink()  # so that a stale file is never mistaken for this render's
    try:
        proc = subprocess.run([exe, "render", str(project.paper_dir)], capture_output=True, text=True)
    except OSError as exc:
        raise RenderError(f"cannot run {exe}: {exc}") from exc
    log = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        tail = "\n".join(log.splitlines()[-40:])
        raise RenderError(f"quarto render {project.paper_dir} failed (exit {proc.returncode}):\n{tail}")
    if not produced.is_file():
        raise RenderError(f"quarto render {project.paper_dir} succeeded but did not write {produced}")
    if pdf_output is not None:
        if not produced_pdf.is_file():
            raise RenderError(f"quarto render {project.paper_dir} succeeded but did not write {produced_pdf} "
                              f"(is the typst format in _quarto.yml?)")
        if Path(pdf_output).resolve() != produced_pdf.resolve():
            Path(pdf_output).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(produced_pdf, pdf_output)
    warnings = [line.strip() for line in log.splitlines() if "WARN" in line]
    output = Path(output)
    if output.resolve() != produced.resolve():
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(produced, output)
        support = produced.with_name(produced.stem + "_files")
        if support.is_dir():
            warnings.append(
                f"{produced} uses supporting files in {support}; the copy at {output} may not "
                "display them (set embed-resources: true)"
            )
    html = produced.read_text(encoding="utf-8", errors="replace")
    return figure_ids(html), warnings
