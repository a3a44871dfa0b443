"""The paper as PDF without Quarto: pandoc writes Typst from the same document the HTML
is made of (shortcodes expanded, cross references resolved and numbered), and the Typst
compiler of the PyPI package `typst` typesets it. Quarto users get the same PDF from
Quarto's own `typst` format (paper/_quarto.yml).

Typst runs with the rule Quarto gives it: its root (`--root`) is the Quarto project
folder, and the document reads its images by paths relative to that folder, as Quarto's
`index.typ` beside `index.qmd` does. Typst refuses any file outside its root, so a paper
that shows a figure from outside the project fails here exactly where Quarto's PDF would.

The numbers of figures, tables and sections are the ones the HTML shows (written into
captions, headings and references by :mod:`.crossref`), so Typst's own figure numbering
is switched off: both formats say "Figure 3" for the same figure.
"""

from __future__ import annotations

import json
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


def _images_relative_to(node, root: Path, outside: list[str]):
    """Rewrite every image of pandoc's JSON AST `node` (the HTML route gives them absolute
    paths) as a path relative to `root`, as the document's author wrote it for Quarto, and
    collect the images that lie outside `root`."""
    if isinstance(node, list):
        for item in node:
            _images_relative_to(item, root, outside)
    elif isinstance(node, dict):
        if node.get("t") == "Image":
            target = node["c"][2]
            if os.path.isabs(target[0]):
                relative = Path(os.path.relpath(target[0], root)).as_posix()
                if relative == ".." or relative.startswith("../"):
                    outside.append(relative)
                target[0] = relative
        for value in node.values():
            if isinstance(value, (list, dict)):
                _images_relative_to(value, root, outside)


# A callout's box in the PDF, as Quarto's typst format draws one: a tinted block with a
# coloured rule on its left, its title in bold (the colours of the HTML's, render/style.py).
CALLOUT_COLOURS = {"note": "#0d6efd", "tip": "#198754", "important": "#dc3545", "warning": "#e0a800",
                   "caution": "#fd7e14"}


def _raw(text: str) -> dict:
    return {"t": "RawBlock", "c": ["typst", text]}


def _callout_blocks(node: dict) -> list[dict] | None:
    """The blocks of a callout Div (as :mod:`.crossref` shapes it: a header Div and a body
    Div) as a Typst box, or None for any other block. pandoc's Typst writer drops a Div's
    classes, which would leave the callout as plain paragraphs."""
    if node.get("t") != "Div":
        return None
    (_, classes, _), blocks = node["c"]
    if "callout" not in classes:
        return None
    kind = next((c[8:] for c in classes if c.startswith("callout-") and c[8:] in CALLOUT_COLOURS), "note")
    colour = CALLOUT_COLOURS[kind]
    header = next((b for b in blocks if b.get("t") == "Div" and "callout-header" in b["c"][0][1]), None)
    body = next((b for b in blocks if b.get("t") == "Div" and "callout-body" in b["c"][0][1]), None)
    title = []
    if header is not None:
        title = [{"t": "Para", "c": [{"t": "Strong", "c": inline["c"]}]}
                 for inline in header["c"][1] if inline.get("t") in ("Plain", "Para")]
    inner = body["c"][1] if body is not None else blocks
    return [_raw(f'#block(width: 100%, inset: 8pt, radius: 2pt, fill: rgb("{colour}").lighten(92%), '
                 f'stroke: (left: 3pt + rgb("{colour}")), breakable: true)['),
            *title, *_boxed_callouts(inner), _raw("]")]


def _boxed_callouts(blocks: list) -> list:
    out = []
    for block in blocks:
        boxed = _callout_blocks(block) if isinstance(block, dict) else None
        out.extend(boxed if boxed is not None else [block])
    return out


def callouts_as_boxes(node):
    """Every callout of the document (at any depth) as a Typst box, in place."""
    if isinstance(node, dict):
        for key, value in list(node.items()):
            if key == "blocks" and isinstance(value, list):
                node[key] = _boxed_callouts(value)
            callouts_as_boxes(node[key])
        if node.get("t") in ("Div", "BlockQuote") and isinstance(node.get("c"), list):
            content = node["c"]
            if node["t"] == "Div" and isinstance(content[1], list):
                content[1] = _boxed_callouts(content[1])
            elif node["t"] == "BlockQuote":
                node["c"] = _boxed_callouts(content)
    elif isinstance(node, list):
        for item in node:
            callouts_as_boxes(item)
    return node


def write_pdf(exe: str, doc_json: Path, meta: dict, paper_dir: Path, output: Path,
              keep_typst: Path | None = None, toc_depth: int | None = None) -> list[str]:
    """Typeset `doc_json` (pandoc's JSON AST, cross references resolved) with the title
    block `meta` into `output` (PDF), Typst rooted at the Quarto project folder
    `paper_dir` as Quarto runs it. Returns warnings. Raises RenderError, naming the files
    outside the project when Typst refuses them."""
    import typst
    import yaml

    root = Path(paper_dir).resolve()
    work = doc_json.parent
    doc = json.loads(doc_json.read_text(encoding="utf-8"))
    outside: list[str] = []
    _images_relative_to(doc, root, outside)
    callouts_as_boxes(doc)
    typst_json = work / "document-typst.json"
    typst_json.write_text(json.dumps(doc), encoding="utf-8")
    header = work / "parbench-header.typ"
    own = paper_dir / PAPER_HEADER
    header.write_text(HEADER + (own.read_text(encoding="utf-8") if own.exists() else ""), encoding="utf-8")
    meta_file = work / "metadata-typst.yaml"
    meta_file.write_text(yaml.safe_dump({**meta, **PAGE}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    source = work / "document.typ"
    cmd = [exe, str(typst_json), "--from", "json", "--to", "typst", "--standalone", "--wrap=none",
           "--resource-path", str(root), "--metadata-file", str(meta_file),
           "--include-in-header", str(header), "--output", str(source)]
    if toc_depth:
        cmd += ["--toc", f"--toc-depth={toc_depth}"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RenderError(f"pandoc could not write Typst (exit {proc.returncode}): {proc.stderr.strip()}")
    warnings = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    staging = output.with_name(f".{output.name}.tmp")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        # The source as bytes: Typst takes it as a file at the root, i.e. beside index.qmd,
        # where Quarto writes its index.typ; relative paths resolve from there.
        typst.compile(source.read_bytes(), output=str(staging), root=str(root))
    except Exception as exc:  # the binding raises its own error types
        staging.unlink(missing_ok=True)
        where = ""
        if outside:
            where = (f"; Typst reads only files inside the Quarto project folder {root} (its root, as "
                     f"Quarto runs it), and the paper shows {', '.join(dict.fromkeys(outside))} from outside "
                     "it: put those files inside the project (Quarto's PDF fails the same way)")
        raise RenderError(f"typst could not typeset the paper: {exc}{where}") from exc
    if keep_typst is not None:
        keep_typst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, keep_typst)
    os.replace(staging, output)
    return warnings
