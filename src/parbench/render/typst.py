"""The paper as PDF without Quarto: pandoc writes Typst from the same document the HTML
is made of (shortcodes expanded, cross references resolved and numbered), and the Typst
compiler of the PyPI package `typst` typesets it. Quarto users get the same PDF from
Quarto's own `typst` format (paper/_quarto.yml).

The numbers of figures, tables and sections are the ones the HTML shows (written into
captions, headings and references by :mod:`.crossref`), so Typst's own figure numbering
is switched off: both formats say "Figure 3" for the same figure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import RenderError

# Set before the document: our numbers in the captions (Quarto numbers them itself), and
# figures never wider than the text; then the paper's own header (paper/typst-header.typ,
# which Quarto includes too: tables typeset alike in both).
HEADER = """\
#set figure(numbering: none)
#show figure.where(kind: image): set block(breakable: false)
#set image(fit: "contain")
"""
PAPER_HEADER = "typst-header.typ"
# pandoc's Typst template reads these from the metadata (margin is a map)
PAGE = {"papersize": "a4", "margin": {"x": "2cm", "y": "2.2cm"}, "fontsize": "10pt", "page-numbering": "1"}


def typst_version() -> str:
    try:
        import typst
    except ImportError as exc:
        raise RenderError("the typst package is missing (pip install typst): it makes the PDF") from exc
    return getattr(typst, "__version__", "unknown")


def write_pdf(exe: str, doc_json: Path, meta: dict, paper_dir: Path, output: Path,
              keep_typst: Path | None = None, toc_depth: int | None = None) -> list[str]:
    """Typeset `doc_json` (pandoc's JSON AST, cross references resolved) with the title
    block `meta` into `output` (PDF). Returns warnings. Raises RenderError."""
    import typst
    import yaml

    work = doc_json.parent
    header = work / "parbench-header.typ"
    own = paper_dir / PAPER_HEADER
    header.write_text(HEADER + (own.read_text(encoding="utf-8") if own.exists() else ""), encoding="utf-8")
    meta_file = work / "metadata-typst.yaml"
    meta_file.write_text(yaml.safe_dump({**meta, **PAGE}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    source = work / "document.typ"
    cmd = [exe, str(doc_json), "--from", "json", "--to", "typst", "--standalone", "--wrap=none",
           "--resource-path", str(paper_dir), "--metadata-file", str(meta_file),
           "--include-in-header", str(header), "--output", str(source)]
    if toc_depth:
        cmd += ["--toc", f"--toc-depth={toc_depth}"]
    proc = subprocess.run(cmd, cwd=paper_dir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RenderError(f"pandoc could not write Typst (exit {proc.returncode}): {proc.stderr.strip()}")
    warnings = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    # Images are given by absolute paths: Typst's root is the file system's root.
    staging = output.with_name(f".{output.name}.tmp")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        typst.compile(str(source), output=str(staging), root="/")
    except Exception as exc:  # the binding raises its own error types
        raise RenderError(f"typst could not typeset the paper: {exc}") from exc
    if keep_typst is not None:
        keep_typst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, keep_typst)
    os.replace(staging, output)
    return warnings
