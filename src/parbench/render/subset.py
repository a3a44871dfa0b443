"""The part of Quarto's syntax the paper may use: what both renderers (Quarto, and the
pandoc fallback of this package) render alike. `problems(text, name)` names every use of
anything else in a source of the paper (`index.qmd`, a section, a template of a
generated part), so that the paper never depends on what only one renderer has.

The subset:

- `{{< include path >}}`, no other shortcode;
- `{#sec-...}`, `{#fig-...}`, `{#tbl-...}` labels and `@sec-`, `@fig-`, `@tbl-`
  cross-references; no citation (`@key`), no other kind of label;
- `::: {.callout-note title="..."}` and `::: {.callout-warning title="..."}` divs, and
  `::: {.block breakable="false"}` (what it holds stays on one page: Quarto's typst
  format writes a `.block` div as a Typst block with its attributes), no other div (no
  columns, tabsets, layouts, margins);
- code blocks with a class (```` ```{.text} ````), never an executable cell (```` ```{python} ````,
  `#|` options), no raw blocks (`{=html}`);
- pandoc's own Markdown otherwise (bracketed spans such as `[text]{.fact key="..."}`).

Jinja in a template (`{% %}`, `{{ }}`, `{# #}`) is the pipeline's, removed before the check.
"""

from __future__ import annotations

import re


SHORTCODES = {"include"}
LABEL_KINDS = {"sec", "fig", "tbl"}
CALLOUT = re.compile(r'^:::+\s*\{\.callout-(note|warning)(\s+title="[^"]*")?\s*\}\s*$')
KEEP_TOGETHER = re.compile(r'^:::+\s*\{\.block\s+breakable="false"\s*\}\s*$')
# a code block Quarto would run: ```{python}, ~~~{r}
EXEC_CELL = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*\{\s*([A-Za-z][\w-]*)")
JINJA = re.compile(r"\{#[-\s].*?#\}|\{%.*?%\}|\{\{(?!<).*?\}\}", re.S)


def problems(text: str, name: str) -> list[str]:
    text = JINJA.sub("", text)
    out = []
    for m in re.finditer(r"\{\{<\s*([\w-]+)", text):
        if m.group(1) not in SHORTCODES:
            out.append(f"{name}: the shortcode {{{{< {m.group(1)} >}}}} is Quarto's alone (allowed: include)")
    for m in re.finditer(r"\{#([A-Za-z]+)-", text):
        if m.group(1) not in LABEL_KINDS:
            out.append(f"{name}: the label kind #{m.group(1)}- is not one the paper uses (allowed: sec, fig, tbl)")
    for m in re.finditer(r"(?<![\w.])@([A-Za-z][\w]*)(-?)", text):
        if not (m.group(2) and m.group(1) in LABEL_KINDS):
            out.append(f"{name}: @{m.group(1)}{m.group(2)} is a citation or a reference of a kind the paper does "
                       f"not use (allowed: @sec-, @fig-, @tbl-)")
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(":::") and stripped.strip(":") and not (CALLOUT.match(stripped)
                                                                        or KEEP_TOGETHER.match(stripped)):
            out.append(f"{name}: the div {stripped!r} is not a callout-note, a callout-warning or "
                       f"a .block with breakable=\"false\"")
        if EXEC_CELL.match(stripped):
            out.append(f"{name}: {stripped!r} is an executable code cell (Quarto runs it; the paper's numbers "
                       f"come from the pipeline)")
        if re.match(r"^(```+|~~~+)\s*\{=", stripped):
            out.append(f"{name}: {stripped!r} is a raw block for one output format")
        if stripped.startswith("#|"):
            out.append(f"{name}: {stripped!r} is a code cell option")
    return out
