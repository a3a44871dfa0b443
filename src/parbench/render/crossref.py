"""Quarto-style floats and cross references on a pandoc JSON AST.

One ordered pass numbers the targets and rewrites the structures Quarto renders
specially; a second pass replaces ``@fig-x``/``@tbl-x``/``@sec-x``/``@eq-x``
citations by links. What is handled:

* figures: ``![Caption](path){#fig-x}`` alone in a paragraph (a pandoc Figure), or a
  div ``::: {#fig-x}`` whose last paragraph is the caption;
* tables: a table whose caption ends in ``{#tbl-x}``, or a div ``::: {#tbl-x}`` whose
  last paragraph is the caption;
* sections: headings with an id ``{#sec-x}``; numbered like pandoc's
  ``--number-sections`` (numbers shown only when ``number-sections`` is on);
* equations: ``$$ ... $$ {#eq-x}``;
* callouts: ``::: {.callout-note|tip|warning|caution|important}`` with an optional
  ``title="..."`` attribute or a leading heading as the title;
* images: relative paths resolved against the paper directory (a missing image is an
  error); Quarto's ``fig-alt`` attribute becomes the alt text.

References render as "Figure N", "Table N", "Section N", "Equation N" (``[-@fig-x]``
gives just "N"); ``@Fig-x`` is accepted as ``@fig-x``. A reference to an id that does
not exist is an error, as is a reference type this renderer does not support.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

from .errors import CrossRefError, RenderError, UnsupportedSyntaxError

# Every cross-reference prefix Quarto knows; those not in SUPPORTED are errors here.
QUARTO_XREF_TYPES = {
    "fig", "tbl", "sec", "eq", "lst", "tip", "nte", "wrn", "imp", "cau",
    "thm", "lem", "cor", "prp", "cnj", "def", "exm", "exr", "sol", "rem",
}
SUPPORTED = ("fig", "tbl", "sec", "eq")

CALLOUT_TYPES = {
    "note": "Note", "tip": "Tip", "warning": "Warning",
    "caution": "Caution", "important": "Important",
}

_EQ_LABEL = re.compile(r"^\{#(eq-[^\s{}]+)\}$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

Node = dict[str, Any]


# --- tiny AST constructors -------------------------------------------------------

def Str(text: str) -> Node:
    return {"t": "Str", "c": text}


SPACE: Node = {"t": "Space"}


def words(text: str) -> list[Node]:
    out: list[Node] = []
    for i, w in enumerate(text.split()):
        if i:
            out.append(dict(SPACE))
        out.append(Str(w))
    return out


def attr(ident: str = "", classes: list[str] | None = None, kvs: list[list[str]] | None = None) -> list[Any]:
    return [ident, classes or [], kvs or []]


def Span(a: list[Any], inlines: list[Node]) -> Node:
    return {"t": "Span", "c": [a, inlines]}


def Div(a: list[Any], blocks: list[Node]) -> Node:
    return {"t": "Div", "c": [a, blocks]}


def Plain(inlines: list[Node]) -> Node:
    return {"t": "Plain", "c": inlines}


def Link(a: list[Any], inlines: list[Node], target: str) -> Node:
    return {"t": "Link", "c": [a, inlines, [target, ""]]}


def stringify(node: Any) -> str:
    if isinstance(node, list):
        return "".join(stringify(n) for n in node)
    if isinstance(node, dict):
        t = node.get("t")
        if t == "Str":
            return node["c"]
        if t in ("Space", "SoftBreak", "LineBreak"):
            return " "
        if t in ("Code", "Math"):
            return node["c"][1]
        if "c" in node:
            return stringify(node["c"])
    return ""


# --- the transform ---------------------------------------------------------------

@dataclass
class Target:
    kind: str
    ident: str
    number: str  # "" for an unnumbered section
    title: list[Node] = field(default_factory=list)


@dataclass
class Labels:
    """Caption titles and reference prefixes (Quarto's ``crossref:`` options)."""

    fig_title: str = "Figure"
    tbl_title: str = "Table"
    fig_prefix: str = "Figure"
    tbl_prefix: str = "Table"
    sec_prefix: str = "Section"
    eq_prefix: str = "Equation"
    title_delim: str = ":"

    def prefix(self, kind: str) -> str:
        return getattr(self, f"{kind}_prefix")


_NESTING = {"BlockQuote", "BulletList", "OrderedList", "DefinitionList", "Table", "Figure", "Note"}


class CrossRefTransform:
    def __init__(
        self,
        resource_dir: Path,
        labels: Labels | None = None,
        number_sections: bool = False,
        number_depth: int = 6,
    ):
        self.resource_dir = resource_dir
        self.labels = labels or Labels()
        self.number_sections = number_sections
        self.number_depth = number_depth
        self.targets: dict[str, Target] = {}
        self.counts = {"fig": 0, "tbl": 0, "eq": 0}
        self.section_counters = [0] * 6
        self.citations: list[str] = []  # non-cross-reference citation keys, in order
        self.images: list[Path] = []
        self.warnings: list[str] = []
        self._missing_images: list[str] = []
        self._unknown_refs: list[str] = []
        self._nested = 0

    # public -----------------------------------------------------------------------
    def apply(self, doc: dict[str, Any]) -> dict[str, Any]:
        doc["blocks"] = self._visit(doc["blocks"], self._number)
        if self._missing_images:
            raise RenderError("image(s) not found: " + "; ".join(self._missing_images))
        self._section_refs: list[str] = []
        doc["blocks"] = self._visit(doc["blocks"], self._resolve)
        if self._unknown_refs:
            raise CrossRefError("unknown cross-reference(s): " + "; ".join(self._unknown_refs))
        if self._section_refs and not self.number_sections:
            self.warnings.append(
                "section references (" + ", ".join("@" + s for s in self._section_refs)
                + ") are rendered as 'Section N' but the headings are not numbered; "
                "set `number-sections: true`"
            )
        return doc

    def ids(self, kind: str) -> list[str]:
        return [t.ident for t in self.targets.values() if t.kind == kind]

    # walking ----------------------------------------------------------------------
    def _visit(self, node: Any, fn: Callable[[Node], Any]) -> Any:
        if isinstance(node, list):
            out: list[Any] = []
            for item in node:
                result = self._visit(item, fn)
                if isinstance(result, list) and isinstance(item, dict) and "t" in item:
                    out.extend(result)  # an element replaced by several
                else:
                    out.append(result)
            node[:] = out
            return node
        if isinstance(node, dict):
            if "t" in node:
                node = fn(node)
                if not isinstance(node, dict):
                    return node
                nests = node.get("t") in _NESTING or _callout_type(node) is not None
                self._nested += nests
                if "c" in node:
                    node["c"] = self._visit(node["c"], fn)
                self._nested -= nests
                return node
            for key, value in node.items():  # Citation records, captions...
                node[key] = self._visit(value, fn)
        return node

    def _register(self, kind: str, ident: str, number: str, title: list[Node] | None = None) -> None:
        if ident in self.targets:
            raise CrossRefError(f"duplicate cross-reference id #{ident}")
        self.targets[ident] = Target(kind, ident, number, title or [])

    # pass 1: number targets, rewrite floats --------------------------------------------
    def _number(self, node: Node) -> Node:
        t = node["t"]
        if t == "Header":
            return self._header(node)
        if t == "Figure":
            return self._figure(node)
        if t == "Table":
            return self._table(node)
        if t == "Div":
            return self._div(node)
        if t in ("Para", "Plain"):
            return self._equations(node)
        if t == "Image":
            return self._image(node)
        return node

    def _header(self, node: Node) -> Node:
        level, (ident, classes, kvs), inlines = node["c"]
        numbered = not self._nested and "unnumbered" not in classes and "-" not in classes
        number = ""
        if numbered and 1 <= level <= 6:
            self.section_counters[level - 1] += 1
            for i in range(level, 6):
                self.section_counters[i] = 0
            number = ".".join(str(n) for n in self.section_counters[:level])
            if self.number_sections and level <= self.number_depth:
                node["c"][2] = [Span(attr("", ["header-section-number"]), [Str(number)]), dict(SPACE)] + inlines
        if ident.startswith("sec-"):
            self._register("sec", ident, number, inlines)
        return node

    def _caption_prefix(self, kind: str, number: str, caption_blocks: list[Node]) -> list[Node]:
        title = self.labels.fig_title if kind == "fig" else self.labels.tbl_title
        has_text = bool(stringify(caption_blocks).strip())
        label = words(title) + [dict(SPACE), Str(number + (self.labels.title_delim if has_text else ""))]
        prefix: list[Node] = [Span(attr("", ["float-label"]), label)]
        if not has_text:
            return [Plain(prefix)]
        first = caption_blocks[0]
        if first.get("t") in ("Plain", "Para"):
            first["c"] = prefix + [dict(SPACE)] + first["c"]
            return caption_blocks
        return [Plain(prefix)] + caption_blocks

    def _next(self, kind: str) -> str:
        self.counts[kind] += 1
        return str(self.counts[kind])

    def _figure(self, node: Node) -> Node:
        (ident, classes, kvs), caption, content = node["c"]
        if ident.startswith("fig-"):
            number = self._next("fig")
            self._register("fig", ident, number)
            caption[1] = self._caption_prefix("fig", number, caption[1])
            if "quarto-figure" not in classes:
                classes.append("quarto-figure")
        return node

    def _table(self, node: Node) -> Node:
        ident, caption = node["c"][0][0], node["c"][1]
        if ident.startswith("tbl-"):
            number = self._next("tbl")
            self._register("tbl", ident, number)
            caption[1] = self._caption_prefix("tbl", number, caption[1])
        return node

    def _div(self, node: Node) -> Node:
        (ident, classes, kvs), blocks = node["c"]
        callout = _callout_type(node)
        if callout is not None:
            return self._callout(node, callout)
        if ident.startswith(("fig-", "tbl-")):
            caption: list[Node] = []
            body = list(blocks)
            if len(body) > 1 and body[-1].get("t") == "Para":
                caption = body.pop()["c"]
            if ident.startswith("fig-"):
                fig = {"t": "Figure", "c": [[ident, classes, kvs], [None, [Plain(caption)] if caption else []], body]}
                return self._figure(fig)
            number = self._next("tbl")
            self._register("tbl", ident, number)
            cap_blocks = self._caption_prefix("tbl", number, [Plain(caption)] if caption else [])
            cap_div = Div(attr("", ["table-caption"]), cap_blocks)
            return Div([ident, classes + ["quarto-float-tbl"], kvs], [cap_div] + body)
        return node

    def _callout(self, node: Node, kind: str) -> Node:
        (ident, classes, kvs), blocks = node["c"]
        kv = dict(kvs)
        title: list[Node]
        body = list(blocks)
        if kv.get("title"):
            title = words(kv["title"])
        elif body and body[0].get("t") == "Header":
            title = body.pop(0)["c"][2]
        else:
            title = [Str(CALLOUT_TYPES[kind])]
        keep = [[k, v] for k, v in kvs if k not in ("title", "collapse", "appearance", "icon")]
        new_classes = ["callout", f"callout-{kind}"] + [c for c in classes if not c.startswith("callout")]
        return Div(
            [ident, new_classes, keep],
            [Div(attr("", ["callout-header"]), [Plain(title)]), Div(attr("", ["callout-body"]), body)],
        )

    def _equations(self, node: Node) -> Node:
        inlines = node["c"]
        i = 0
        while i < len(inlines):
            el = inlines[i]
            if el.get("t") == "Math" and el["c"][0].get("t") == "DisplayMath":
                j = i + 1
                if j < len(inlines) and inlines[j].get("t") in ("Space", "SoftBreak"):
                    j += 1
                if j < len(inlines) and inlines[j].get("t") == "Str":
                    m = _EQ_LABEL.match(inlines[j]["c"])
                    if m:
                        ident = m.group(1)
                        number = self._next("eq")
                        self._register("eq", ident, number)
                        math = {"t": "Math", "c": [el["c"][0], el["c"][1] + rf" \qquad({number})"]}
                        inlines[i:j + 1] = [Span(attr(ident, ["quarto-equation"]), [math])]
            i += 1
        return node

    def _image(self, node: Node) -> Node:
        (ident, classes, kvs), alt, (src, title) = node["c"]
        if ident.startswith("fig-"):
            raise UnsupportedSyntaxError(
                f"image {{#{ident}}} ({src}) is not a figure: a figure image needs a caption "
                "and must be alone in its paragraph"
            )
        kv = dict(kvs)
        if "fig-alt" in kv:
            node["c"][1] = words(kv["fig-alt"])
            node["c"][0][2] = [[k, v] for k, v in kvs if k != "fig-alt"]
        if src and not _URL.match(src) and not src.startswith("#"):
            path = Path(src)
            if not path.is_absolute():
                path = self.resource_dir / path
            if not path.is_file():
                alt_path = Path(unquote(str(path)))
                if alt_path.is_file():
                    path = alt_path
                else:
                    self._missing_images.append(f"{src} (looked for {path})")
                    return node
            path = path.resolve()
            self.images.append(path)
            node["c"][2] = [str(path), title]
        return node

    # pass 2: references ---------------------------------------------------------------
    def _resolve(self, node: Node) -> Any:
        if node.get("t") != "Cite":
            return node
        citations, _ = node["c"]
        keys = [c["citationId"] for c in citations]
        xrefs = [_xref_key(k) is not None for k in keys]
        if not any(xrefs):
            self.citations.extend(k for k in keys if k not in self.citations)
            return node
        if not all(xrefs):
            raise CrossRefError(
                "cannot mix cross-references and citations in one bracket: "
                + "; ".join("@" + k for k in keys)
            )
        out: list[Node] = []
        for n, cit in enumerate(citations):
            key = cit["citationId"]
            target = self.targets.get(_xref_key(key))
            if target is None:
                self._unknown_refs.append(self._explain_unknown(key))
                continue
            if target.kind == "sec" and target.number and key not in self._section_refs:
                self._section_refs.append(key)
            if cit["citationMode"]["t"] == "SuppressAuthor" and target.number:
                text = [Str(target.number)]
            elif target.kind == "sec" and not target.number:
                text = list(target.title)
            else:
                text = words(self.labels.prefix(target.kind)) + [dict(SPACE), Str(target.number)]
            if n:
                out += [Str(","), dict(SPACE)]
            if cit["citationPrefix"]:
                out += cit["citationPrefix"] + [dict(SPACE)]
            out.append(Link(attr("", ["quarto-xref"]), text, "#" + target.ident))
            out += cit["citationSuffix"]
        return out

    def _explain_unknown(self, key: str) -> str:
        norm = _xref_key(key) or key
        kind = norm.split("-", 1)[0]
        if kind not in SUPPORTED:
            return f"@{key} (reference type '{kind}-' is not supported; supported: " + ", ".join(
                f"{k}-" for k in SUPPORTED) + ")"
        known = self.ids(kind)
        hint = difflib.get_close_matches(norm, known, n=1)
        if hint:
            return f"@{key} (no element has id #{norm}; did you mean @{hint[0]}?)"
        if known:
            return f"@{key} (no element has id #{norm}; known: " + ", ".join(known) + ")"
        return f"@{key} (no element has id #{norm})"


def _xref_key(key: str) -> str | None:
    """The target id a citation key refers to, or None when it is not a cross-reference."""
    if "-" not in key:
        return None
    kind, rest = key.split("-", 1)
    if kind.lower() in QUARTO_XREF_TYPES and kind[1:] == kind[1:].lower():
        return kind.lower() + "-" + rest
    return None


def _callout_type(node: Node) -> str | None:
    if node.get("t") != "Div":
        return None
    for cls in node["c"][0][1]:
        if cls.startswith("callout-") and cls[8:] in CALLOUT_TYPES:
            return cls[8:]
    return None
