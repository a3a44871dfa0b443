"""The pandoc fallback: render a Quarto project's main document to one
self-contained HTML file with the pandoc binary shipped in pypandoc-binary, and to PDF
through Typst (:mod:`.typst`).

Steps: expand shortcodes (includes) in the .qmd text, parse it to pandoc's JSON AST,
number figures/tables/sections/equations and resolve cross references there
(:mod:`.crossref`), then write HTML with ``--standalone --embed-resources`` so that
images and the stylesheet end up inside the file as data URIs, and the same AST as
Typst, typeset into a PDF.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .crossref import CrossRefTransform, Labels
from .errors import CrossRefError, RenderError
from .project import PaperProject
from .shortcodes import ShortcodeExpander
from .style import PAPER_CSS

MIN_PANDOC = (3, 0)

# Pandoc reader: its default markdown, which is what Quarto builds on.
READER = "markdown"


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
    raise RenderError(
        "pandoc not found: install pypandoc-binary (pip install pypandoc-binary) "
        "or put pandoc >= 3.0 on PATH"
    )


def pandoc_version(exe: str) -> str:
    try:
        proc = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RenderError(f"cannot run {exe} --version: {exc}") from exc
    first = proc.stdout.splitlines()[0] if proc.stdout else ""
    m = re.search(r"(\d+(?:\.\d+)+)", first)
    if not m:
        raise RenderError(f"cannot parse the pandoc version from {first!r}")
    version = m.group(1)
    if tuple(int(x) for x in version.split(".")[:2]) < MIN_PANDOC:
        raise RenderError(f"pandoc {version} at {exe} is too old: need >= 3.0")
    return version


def _run(cmd: list[str], *, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True)
    except OSError as exc:
        raise RenderError(f"cannot run pandoc ({cmd[0]}): {exc}") from exc
    if proc.returncode != 0:
        raise RenderError(f"pandoc failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc


def _pandoc_messages(stderr: str) -> list[str]:
    """Pandoc's warnings, one string each (continuation lines joined)."""
    messages: list[str] = []
    for line in stderr.splitlines():
        if line.startswith("["):
            messages.append(line.strip())
        elif line.strip() and messages:
            messages[-1] += " " + line.strip()
    return messages


@dataclass
class PandocOutcome:
    version: str
    figures: list[str]
    tables: list[str]
    warnings: list[str] = field(default_factory=list)
    markdown: str = ""
    pdf: Path | None = None


def render_with_pandoc(project: PaperProject, output: Path, keep_intermediate: Path | None = None,
                       pdf_output: Path | None = None) -> PandocOutcome:
    exe = find_pandoc()
    version = pandoc_version(exe)
    paper_dir = project.paper_dir.resolve()
    metadata = project.metadata()
    warnings: list[str] = []

    # 1. shortcodes, at the text level (as Quarto does).
    expander = ShortcodeExpander(paper_dir, metadata, project.variables, project.main_doc.parent)
    markdown = expander.expand(project.body, project.main_doc.resolve())

    # 2. parse to the JSON AST.
    parsed = _run([exe, "--from", READER, "--to", "json"], cwd=paper_dir, stdin=markdown)
    warnings += _pandoc_messages(parsed.stderr)
    doc = json.loads(parsed.stdout)

    # 3. floats, numbering and cross references.
    labels = Labels(
        fig_title=project.crossref_option("fig-title", "Figure"),
        tbl_title=project.crossref_option("tbl-title", "Table"),
        fig_prefix=project.crossref_option("fig-prefix", "Figure"),
        tbl_prefix=project.crossref_option("tbl-prefix", "Table"),
        sec_prefix=project.crossref_option("sec-prefix", "Section"),
        eq_prefix=project.crossref_option("eq-prefix", "Equation"),
        title_delim=project.crossref_option("title-delim", ":"),
    )
    xref = CrossRefTransform(
        paper_dir,
        labels,
        number_sections=bool(project.option("number-sections", False)),
        number_depth=int(project.option("number-depth", 6) or 6),
    )
    doc = xref.apply(doc)
    warnings += xref.warnings

    # 4. metadata, bibliography.
    meta: dict[str, Any] = project.title_metadata()
    extra_args: list[str] = []
    bibliography = metadata.get("bibliography")
    if xref.citations and not bibliography:
        raise CrossRefError(
            "unresolved citation(s): " + ", ".join("@" + c for c in xref.citations)
            + " (not a cross-reference, and no bibliography is configured; write \\@ for a literal @)"
        )
    if bibliography:
        bibs = bibliography if isinstance(bibliography, list) else [bibliography]
        resolved = []
        for bib in bibs:
            path = paper_dir / str(bib)
            if not path.is_file():
                raise RenderError(f"bibliography not found: {path}")
            resolved.append(str(path))
        meta["bibliography"] = resolved
        if metadata.get("csl"):
            csl = paper_dir / str(metadata["csl"])
            if not csl.is_file():
                raise RenderError(f"CSL style not found: {csl}")
            meta["csl"] = str(csl)
        extra_args.append("--citeproc")

    if project.option("toc", False):
        extra_args += ["--toc", f"--toc-depth={int(project.option('toc-depth', 3) or 3)}"]

    user_css = project.option("css")
    css_files = [] if not user_css else (user_css if isinstance(user_css, list) else [user_css])
    for css in css_files:
        if not (paper_dir / str(css)).is_file():
            raise RenderError(f"stylesheet not found: {paper_dir / str(css)}")

    # 5. write HTML.
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="parbench-render-") as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "document.md").write_text(markdown, encoding="utf-8")
        doc_json = tmpdir / "document.json"
        doc_json.write_text(json.dumps(doc), encoding="utf-8")
        meta_file = tmpdir / "metadata.yaml"
        meta_file.write_text(yaml.safe_dump(meta, allow_unicode=True, sort_keys=False), encoding="utf-8")
        css_file = tmpdir / "parbench-paper.css"
        css_file.write_text(PAPER_CSS, encoding="utf-8")
        html_tmp = tmpdir / "out.html"
        cmd = [
            exe, str(doc_json), "--from", "json", "--to", "html5",
            "--standalone", "--embed-resources", "--mathml", "--wrap=none",
            "--resource-path", str(paper_dir),
            "--metadata-file", str(meta_file),
            "--css", str(css_file),
            *[arg for css in css_files for arg in ("--css", str(paper_dir / str(css)))],
            *extra_args,
            "--output", str(html_tmp),
        ]
        proc = _run(cmd, cwd=paper_dir)
        fatal = []
        for msg in _pandoc_messages(proc.stderr):
            if "Could not fetch resource" in msg or re.search(r"[Cc]itation .* not found", msg):
                fatal.append(msg)
            else:
                warnings.append(msg)
        if fatal:
            raise RenderError("pandoc could not resolve: " + "; ".join(fatal))
        # a label printed as text is a table or figure pandoc did not see as one (glued to
        # the paragraph before it): the paper would show raw Markdown where it stands
        stray = sorted(set(re.findall(r"\{#(?:sec|fig|tbl)-[\w-]+\}", html_tmp.read_text(encoding="utf-8"))))
        if stray:
            raise RenderError(f"label(s) left as text in the rendered paper: {', '.join(stray)} (is the table or "
                              f"figure separated from the paragraph before it by a blank line?)")
        if pdf_output is not None:
            from .typst import write_pdf

            toc_depth = int(project.option("toc-depth", 3) or 3) if project.option("toc", False) else None
            warnings += write_pdf(exe, doc_json, meta, paper_dir, Path(pdf_output),
                                  keep_typst=keep_intermediate / "document.typ" if keep_intermediate else None,
                                  toc_depth=toc_depth)
        if keep_intermediate is not None:
            keep_intermediate.mkdir(parents=True, exist_ok=True)
            for name in ("document.md", "document.json", "metadata.yaml"):
                shutil.copyfile(tmpdir / name, keep_intermediate / name)
        # Replace the output in one step so a failed render never leaves half a file.
        staging = output.with_name(f".{output.name}.tmp")
        shutil.copyfile(html_tmp, staging)
        os.replace(staging, output)

    return PandocOutcome(version, xref.ids("fig"), xref.ids("tbl"), warnings, markdown,
                         Path(pdf_output) if pdf_output is not None else None)
