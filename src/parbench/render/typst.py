"""The paper as PDF without Quarto: pandoc writes Typst from the same Markdown and through
the same filter as the HTML (so both show the same numbers), and the Typst compiler of the
PyPI package `typst` typesets it. Quarto users get the same PDF from Quarto's own `typst`
format, whose options in paper/_quarto.yml (table of contents, section numbers, paper
size, margins, font size, the header file) this reads too.

Typst runs with the rule Quarto gives it: its root (`--root`) is the Quarto project
folder, and the document reads its images by paths relative to that folder, as Quarto's
`index.typ` beside `index.qmd` does. Typst refuses any file outside its root, so a paper
that shows a figure from outside the project fails here exactly where Quarto's PDF would.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import yaml

from .errors import RenderError
from .project import PaperProject

# Before the document: the filter's numbers in the captions (Typst's own numbering off),
# and figures never wider than the text; then the paper's own header (include-in-header).
HEADER = """\
#set figure(numbering: none)
#show figure.where(kind: image): set block(breakable: false)
#set image(fit: "contain")
"""
# the page options of Quarto's typst format that pandoc's Typst template reads
PAGE_OPTIONS = ("papersize", "margin", "fontsize")


def typst_version() -> str:
    try:
        import typst
    except ImportError as exc:
        raise RenderError("the typst package is missing (pip install typst): it makes the PDF") from exc
    return getattr(typst, "__version__", "unknown")


def write_pdf(exe: str, markdown: str, project: PaperProject, output: Path,
              keep_typst: Path | None = None) -> list[str]:
    """Typeset the paper's `markdown` into `output` (PDF), Typst rooted at the Quarto
    project folder as Quarto runs it. Returns pandoc's warnings. Raises RenderError,
    naming the files outside the project when Typst refuses them."""
    import typst

    from .pandoc import run_pandoc, section_args

    root = project.paper_dir.resolve()
    options = project.format_options("typst")
    with tempfile.TemporaryDirectory(prefix="parbench-typst-") as tmp:
        header = Path(tmp) / "header.typ"
        own = options.get("include-in-header") or []  # a file or a list of them, as in Quarto
        own = [own] if isinstance(own, str) else own
        missing = [name for name in own if not (root / name).is_file()]
        if missing:
            raise RenderError(f"include-in-header of format typst in {root / '_quarto.yml'}: not found: "
                              f"{', '.join(missing)}")
        header.write_text(HEADER + "".join((root / name).read_text(encoding="utf-8") for name in own),
                          encoding="utf-8")
        page = Path(tmp) / "page.yaml"
        page.write_text(yaml.safe_dump({"page-numbering": "1", **{k: options[k] for k in PAGE_OPTIONS if k in options}}),
                        encoding="utf-8")
        source = Path(tmp) / "index.typ"
        warnings = run_pandoc(exe, markdown, "typst", [
            "--standalone", "--metadata-file", str(page), "--include-in-header", str(header),
            *section_args(options), "--output", str(source)], root)
        staging = output.with_name(f".{output.name}.tmp")
        output.parent.mkdir(parents=True, exist_ok=True)
        try:
            # The source as bytes: Typst takes it as a file at the root, i.e. beside index.qmd,
            # where Quarto writes its index.typ; relative paths resolve from there.
            typst.compile(source.read_bytes(), output=str(staging), root=str(root))
        except Exception as exc:  # the binding raises its own error types
            staging.unlink(missing_ok=True)
            outside = dict.fromkeys(re.findall(r'image\("(\.\./[^"]*)"', source.read_text(encoding="utf-8")))
            where = ""
            if outside:
                where = (f"; Typst reads only files inside the Quarto project folder {root} (its root, as "
                         f"Quarto runs it), and the paper shows {', '.join(outside)} from outside it: put "
                         "those files inside the project (Quarto's PDF fails the same way)")
            raise RenderError(f"typst could not typeset the paper: {exc}{where}") from exc
        if keep_typst is not None:
            keep_typst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, keep_typst)
        os.replace(staging, output)
    return warnings
