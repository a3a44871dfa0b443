"""The pandoc fallback: the paper's Markdown (includes pasted in, :mod:`.includes`) to one
self-contained HTML file with the pandoc binary of pypandoc-binary, and to PDF through
Typst (:mod:`.typst`). One Lua filter, `paper.lua`, numbers the sections, figures and
tables, resolves the cross references and draws the callouts for both formats.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from parbench.words import counted

from . import includes
from .errors import CrossRefError, RenderError
from .project import PaperProject
from .quarto import figure_ids
from .style import PAPER_CSS

MIN_PANDOC = (3, 0)
FILTER = Path(__file__).with_name("paper.lua")


def find_pandoc() -> str:
    """The pandoc binary: pypandoc-binary's, else ``pandoc`` on PATH."""
    try:
        import pypandoc

        path = pypandoc.get_pandoc_path()
        if path and os.path.exists(path):
            return str(path)
    except (ImportError, OSError):
        pass
    path = shutil.which("pandoc")
    if path:
        return path
    raise RenderError("pandoc not found: install pypandoc-binary (pip install pypandoc-binary) "
                      "or put pandoc >= 3.0 on PATH")


def pandoc_version(exe: str) -> str:
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RenderError(f"cannot run {exe} --version: {exc}") from exc
    m = re.search(r"(\d+(?:\.\d+)+)", proc.stdout.splitlines()[0] if proc.stdout else "")
    if not m:
        raise RenderError(f"cannot parse the pandoc version from {proc.stdout[:80]!r}")
    if tuple(int(x) for x in m.group(1).split(".")[:2]) < MIN_PANDOC:
        raise RenderError(f"pandoc {m.group(1)} at {exe} is too old: need >= 3.0")
    return m.group(1)


def run_pandoc(exe: str, markdown: str, to: str, args: list[str], cwd: Path) -> list[str]:
    """pandoc from the paper's Markdown to `to`, through the filter; its warnings. A
    cross reference it cannot resolve is a CrossRefError, any other failure a RenderError."""
    cmd = [exe, "--from", "markdown", "--to", to, "--lua-filter", str(FILTER), "--wrap=none",
           "--resource-path", str(cwd), *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, input=markdown, capture_output=True, text=True)
    except OSError as exc:
        raise RenderError(f"cannot run pandoc ({exe}): {exc}") from exc
    if proc.returncode != 0:
        crossref = re.search(r"CROSSREF: (.*)", proc.stderr)
        if crossref:
            raise CrossRefError(crossref.group(1).strip())
        raise RenderError(f"pandoc failed (exit {proc.returncode}): {proc.stderr.strip()}")
    messages: list[str] = []  # one per warning, continuation lines joined
    for line in proc.stderr.splitlines():
        if line.startswith("["):
            messages.append(line.strip())
        elif line.strip() and messages:
            messages[-1] += " " + line.strip()
    missing = [m for m in messages if "Could not fetch resource" in m]
    if missing:
        raise RenderError("pandoc could not resolve: " + "; ".join(missing))
    return messages


def section_args(options: dict) -> list[str]:
    """The table of contents and the section numbers a format's options ask for."""
    args = ["-M", f"number-sections={'true' if options.get('number-sections') else 'false'}"]
    if options.get("toc"):
        args += ["--toc", f"--toc-depth={int(options.get('toc-depth') or 3)}"]
    return args


@dataclass
class PandocOutcome:
    version: str
    figures: list[str]
    warnings: list[str] = field(default_factory=list)
    pdf: Path | None = None


def render_with_pandoc(project: PaperProject, output: Path, keep_intermediate: Path | None = None,
                       pdf_output: Path | None = None) -> PandocOutcome:
    exe = find_pandoc()
    version = pandoc_version(exe)
    paper_dir = project.paper_dir.resolve()
    markdown = includes.expand(project.main_doc.resolve(), paper_dir, paper_dir)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="parbench-render-") as tmp:
        css = Path(tmp) / "parbench-paper.css"
        css.write_text(PAPER_CSS, encoding="utf-8")
        page = Path(tmp) / "index.html"
        options = project.format_options("html")
        # pandoc's HTML needs a <title>: the document's file name when it has no title
        front = includes.FRONT_MATTER.match(markdown)
        untitled = [] if front and re.search(r"^title:", front.group(0), re.M) else [
            "-M", f"pagetitle={project.main_doc.stem}"]
        warnings = run_pandoc(exe, markdown, "html5", [
            "--standalone", "--embed-resources", "--mathml", "--css", str(css), *section_args(options),
            "-M", "toc-title=Table of contents", *untitled, "--output", str(page)], paper_dir)
        html = page.read_text(encoding="utf-8")
        # a label printed as text is a table or figure pandoc did not see as one (glued to
        # the paragraph before it): the paper would show raw Markdown where it stands
        stray = sorted(set(re.findall(r"\{#(?:sec|fig|tbl)-[\w-]+\}", html)))
        if stray:
            raise RenderError(f"{counted(len(stray), 'label')} left as text in the rendered paper: "
                              f"{', '.join(stray)} (is the table or "
                              f"figure separated from the paragraph before it by a blank line?)")
        if pdf_output is not None:
            from .typst import write_pdf

            warnings += write_pdf(exe, markdown, project, Path(pdf_output),
                                  keep_typst=keep_intermediate / "document.typ" if keep_intermediate else None)
        if keep_intermediate is not None:
            keep_intermediate.mkdir(parents=True, exist_ok=True)
            (keep_intermediate / "document.md").write_text(markdown, encoding="utf-8")
        # Replace the output in one step so a failed render never leaves half a file.
        staging = output.with_name(f".{output.name}.tmp")
        shutil.copyfile(page, staging)
        os.replace(staging, output)
    return PandocOutcome(version, figure_ids(html), warnings, Path(pdf_output) if pdf_output is not None else None)
