"""Expand the Quarto shortcodes the pandoc fallback supports, at the text level, as
Quarto does before pandoc sees the document.

Supported: ``{{< include path >}}`` (recursive; as in Quarto, an include is pasted
into the main document, so a relative path, in the main document or in an included
file alike, is relative to the main document's folder, and a path starting with ``/``
to the project's), ``{{< meta key >}}``,
``{{< var key >}}`` (from ``_variables.yml``) and ``{{< pagebreak >}}``.
``{{{< ... >}}}`` is an escaped shortcode and comes out literally as ``{{< ... >}}``.
Any other shortcode is an error.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from .errors import MissingIncludeError, RenderError, UnsupportedSyntaxError
from .project import split_front_matter

_SHORTCODE = re.compile(r"(\{)?\{\{<\s*(.*?)\s*>\}\}(\})?")
_EXEC_CELL = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*\{\s*([A-Za-z][\w-]*)")

PAGEBREAK_HTML = '<div style="page-break-after: always;"></div>'


def _lookup(mapping: dict[str, Any], dotted: str) -> Any:
    node: Any = mapping
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(dotted)
    return node


def _scalar(value: Any, what: str) -> str:
    if isinstance(value, (dict, list)):
        raise RenderError(f"{what} is not a scalar value")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class ShortcodeExpander:
    def __init__(self, project_dir: Path, metadata: dict[str, Any], variables: dict[str, Any],
                 main_dir: Path | None = None):
        self.project_dir = project_dir
        self.main_dir = main_dir or project_dir
        self.metadata = metadata
        self.variables = variables
        self.included: list[Path] = []

    def expand(self, text: str, source: Path, _stack: tuple[Path, ...] = ()) -> str:
        stack = _stack + (source.resolve(),)
        out_lines: list[str] = []
        for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
            cell = _EXEC_CELL.match(line)
            if cell:
                raise UnsupportedSyntaxError(
                    f"{source}:{lineno}: executable code cell ```{{{cell.group(2)}}} "
                    "is not supported: generate its output before rendering "
                    "(or write a plain code block, ```" + cell.group(2) + ")"
                )
            where = f"{source}:{lineno}"
            out_lines.append(
                _SHORTCODE.sub(lambda m: self._replace(m, source, where, stack), line)
            )
        return "".join(out_lines)

    def _replace(self, m: re.Match[str], source: Path, where: str, stack: tuple[Path, ...]) -> str:
        if m.group(1) and m.group(3):  # {{{< ... >}}} -> literal {{< ... >}}
            return "{{< " + m.group(2) + " >}}"
        prefix = m.group(1) or ""
        suffix = m.group(3) or ""
        try:
            parts = shlex.split(m.group(2))
        except ValueError as exc:
            raise RenderError(f"{where}: cannot parse shortcode {m.group(0)!r}: {exc}") from exc
        if not parts:
            raise RenderError(f"{where}: empty shortcode {m.group(0)!r}")
        name, args = parts[0], parts[1:]
        if name == "include":
            if len(args) != 1:
                raise RenderError(f"{where}: include takes exactly one path, got {m.group(0)!r}")
            return prefix + self._include(args[0], source, where, stack) + suffix
        if name in ("meta", "var"):
            if len(args) != 1:
                raise RenderError(f"{where}: {name} takes exactly one key, got {m.group(0)!r}")
            mapping = self.metadata if name == "meta" else self.variables
            try:
                value = _lookup(mapping, args[0])
            except KeyError:
                origin = "the document metadata" if name == "meta" else "_variables.yml"
                raise RenderError(f"{where}: {{{{< {name} {args[0]} >}}}}: no key {args[0]!r} in {origin}") from None
            return prefix + _scalar(value, f"{where}: {name} {args[0]}") + suffix
        if name == "pagebreak":
            return prefix + PAGEBREAK_HTML + suffix
        raise UnsupportedSyntaxError(
            f"{where}: shortcode {{{{< {name} >}}}} is not supported by the pandoc renderer "
            "(supported: include, meta, var, pagebreak)"
        )

    def _include(self, target: str, source: Path, where: str, stack: tuple[Path, ...]) -> str:
        if target.startswith("/"):
            path = self.project_dir / target.lstrip("/")
        else:
            path = self.main_dir / target
        if not path.is_file():
            raise MissingIncludeError(f"{where}: included file not found: {path}")
        resolved = path.resolve()
        if resolved in stack:
            chain = " -> ".join(str(p) for p in stack + (resolved,))
            raise RenderError(f"{where}: include cycle: {chain}")
        self.included.append(path)
        text = path.read_text(encoding="utf-8")
        front, text = split_front_matter(text, path)  # front matter of an include is dropped
        if front:
            text = text.lstrip("\n")
        text = self.expand(text, path, stack)
        return text.rstrip("\n")
