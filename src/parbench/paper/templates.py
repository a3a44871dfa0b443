"""The paper's prose: Jinja templates beside the section that includes them, filled from
facts.

Each generated part of the paper is a template, `paper/sections/<study>/<part>.md` (the
Method and summary parts: `paper/sections/shared/<part>.md`), rendered into
`paper/_generated/<study>/<part>.md`, which the section's `.qmd` includes. A template
holds the words; it gets its numbers and verdicts only from the facts Python computed
(`parbench.paper.facts`), so a template may not contain a digit outside an identifier
(`ML-KEM-768`, `x86-64`), nor a comparison word (`faster`, `slower`, `better`, ...): those
come from verdict facts, which say "not distinguishable" where intervals overlap.
`lint()` checks both, and the test suite runs it on every template.

What a template gets:
- `f`: the study's facts by short name (`{{ f.seq_time }}` writes its span);
- `figure(name)`: the study's figure, with its declared label and its one caption (the
  study's `captions.yml`, beside its templates);
- `table(name, label, caption)`: a table the paper module gives in its context's `tables`;
- `counted`: a filter writing a number and its noun, plural unless the number is one
  (`{{ f.repetitions | counted("time") }}`), and `share`, how many of a whole ("2 of the 3
  stalls", "all 3 stalls", "both stalls": `{{ f.n_as | share(f.n, "stall") }}`), and
  `mid_sentence`, a title inside a sentence; `sentence_start`, a name opening one;
  `possessive`, a name's possessive ("{{ name | possessive }}", never "{{ name }}'s": a name
  ending in a digit, avx2, would have its apostrophe set as a prime); `or_none`, a count
  that may be zero read as a word ("in none", never "in 0");
- a verdict's `spread` (and that of a `Facts.count_within_spread` count): the machine's
  spread, where that alone made the verdict "not distinguishable" (the two intervals apart,
  the two values within the spread of each other); `shared/_spread.md`'s macros say so,
  and a verdict a template writes without them gets that file's plain note where its
  clause ends;
- a verdict decided just past its bar (its `edge`), or a count of verdicts among which
  such ones are (`counted_edges`), is written with the note `shared/_edge.md` gives it, the
  first time the part writes it; `weakest`, a filter, picks from a group of the same
  verdict the member whose verdict the group's word should be (one just past its bar, else
  the first), carrying every member's just past its bar, so that the note stands beside a
  group stated by its word, giving each of those ("one of them", "all of them", "some of
  them") where the group has several; where the members
  are listed, the group's word is written `| unnoted` and each member's value followed by
  `| edge_note` (`spread_note` does), so that the note stands beside the member it means;
- `table_caption(name)`: the caption written under `tables:` in the study's captions.yml
  (itself a template, filled from the same context): the caption of a table the paper and
  Snakemake's report both show, written once;
- anything else the paper module puts in its context (rows to loop over, names).
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from parbench.paper.facts import Fact, weakest
from parbench.paper.format import counted, mid_sentence, possessive, sentence_start, share

# A number outside an identifier: digits not preceded by a letter, a digit, `-`, `_` or
# `.` and not followed by a letter, `_` or `-` (so `ML-KEM-768`, `x86-64`, `sha256` and
# `3.11`-style versions inside identifiers pass, `42` and `3.5` do not).
FREE_NUMBER = re.compile(r"(?<![A-Za-z0-9_\-.#/])\d+(?:[.,]\d+)*(?![A-Za-z_\-\d])")
# Words that state a comparison: only a verdict fact may say them.
# A noun with "(s)": the count beside it is known, so `counted` writes the right form.
MAYBE_PLURAL = re.compile(r"\b[a-z]+\(s\)")
# A possessive written after a value (`{{ name }}'s`, `name ~ "'s"`): the `possessive`
# filter writes it, so that a name ending in a digit keeps an apostrophe, not a prime.
POSSESSIVE_AFTER_VALUE = re.compile(r"\}\}'s\b|~\s*\"'s\b")
COMPARISONS = re.compile(r"\b(faster|slower|quicker|better|worse|outperform\w*|beats?|upper bound|"
                         r"lower bound|ahead of|behind)\b", re.IGNORECASE)


class TemplateError(RuntimeError):
    """A template broke the rules (a number or comparison of its own, a missing fact)."""


def sections_dir() -> Path:
    from parbench import paths, project

    return project.root() / paths.PAPER_SECTIONS


def environment(folder: Path) -> jinja2.Environment:
    """Templates are found in the study's folder, then under `paper/sections/` (for the
    parts every study shares: `{% include "shared/load.md" %}`)."""
    # StrictUndefined: a template that names a fact the paper module did not compute fails
    loader = jinja2.FileSystemLoader([str(folder), str(folder.parent)])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             autoescape=False, finalize=lambda value: _edge_noted(env, value))
    env.edge_noted = set()  # the verdicts whose note this part has given (by their margin's key)
    env.edge_notes = []  # the notes, each written where its placeholder's clause ends (`place_notes`)
    # the verdicts the spread alone decided whose note a template gave (`shared/_spread.md`'s
    # spread_note); any other such verdict a `{{ }}` writes gets the plain one (`_plain_spread_note`)
    env.spread_noted = set()
    # (a count of them, `spread_count`: every verdict it counts, one of which may stand for the group)
    env.filters["spread_noted"] = lambda fact: env.spread_noted.update(
        fact.source["of"] if fact.source["kind"] == "count_within_spread" else [fact.key]) or ""
    # a member of a listed group: its note right after its value; the group's word without it
    env.filters["edge_note"] = lambda verdict: _note(env, (verdict.edge,) if verdict.edge else (), "member")
    env.filters["unnoted"] = str
    env.filters["weakest"] = weakest
    # a count written with its noun keeps the note of the verdicts it counts, after the noun
    env.filters["counted"] = lambda n, *a, **k: counted(n, *a, **k) + _count_note(env, n)
    env.filters["share"] = lambda part, *a, **k: share(part, *a, **k) + _count_note(env, part)
    # a count that may be zero, where a sentence reads it as a word: "none", not "in 0"
    env.filters["or_none"] = lambda n: "none" if getattr(n, "value", n) == 0 else _edge_noted(env, n)
    env.filters["mid_sentence"] = mid_sentence
    env.filters["sentence_start"] = sentence_start
    env.filters["possessive"] = possessive
    return env


def _edge_noted(env: jinja2.Environment, value):
    """What every `{{ }}` writes: a verdict decided just past its bar, or a count of
    verdicts holding such ones, followed by the note `shared/_edge.md` writes for them (the
    margin and the bar of each), wherever a template states it, once per part; a verdict
    the spread alone decided followed by its plain note (`_plain_spread_note`); anything
    else as it is."""
    if not isinstance(value, Fact):
        return value
    text = f"{value}{_plain_spread_note(env, value)}"
    if not (value.edge or value.counted_edges):
        return text
    if value.edge is None:  # a count: its note right after it, in words that say what it counts
        return f"{text}{_count_note(env, value)}"
    if value.members > 1:  # a group's word: the note gives every member just past its bar
        note = _note(env, value.member_edges, "group", value.members)
    else:
        note = _note(env, (value.edge,), "verdict")
    if not note:
        return text
    env.edge_notes.append(note)
    return f"{text}\x00{len(env.edge_notes) - 1}\x00"


def _plain_spread_note(env: jinja2.Environment, value: Fact) -> str:
    """The placeholder of the plain note beside a verdict the spread alone decided ("only
    because the two medians lie within the machine's spread of each other"), written where
    its clause ends unless the template gives the verdict its own note (`spread_note`) in
    the part: so that no such verdict reads as the intervals' (the paper check refuses one
    in a paragraph that never gives the spread). Not for a group's word: its members differ."""
    if value.kind != "verdict" or value.spread is None or value.members > 1:
        return ""
    plain = env.get_template("shared/_spread.md").module.plain_note
    env.edge_notes.append(lambda: "" if value.key in env.spread_noted else " " + str(plain(value)))
    return f"\x00{len(env.edge_notes) - 1}\x00"


def _count_note(env: jinja2.Environment, value) -> str:
    """The note of a count written through `counted` or `share`, after its noun."""
    if not isinstance(value, Fact) or not value.counted_edges:
        return ""
    # a count of one is that verdict: its note says so, not "one of them"
    return _note(env, value.counted_edges, "single" if value.value == 1 else "count", value.value, value.near_bar)


def _note(env: jinja2.Environment, edges: tuple, form: str, of: int | None = None,
          near: Fact | None = None) -> str:
    """The note `shared/_edge.md` writes for `edges` not yet noted in this part, in `form`
    (a verdict's, a count's, a group's word's, a listed member's); empty when there is none.
    The note of a count or a group's word (of `of` members) says how many of them it names,
    where none of those was noted before in the part: all of them, or `near` (a count's
    `near_bar` fact); else "some of them"."""
    fresh = [e for e in edges if e.margin.key not in env.edge_noted]
    if not fresh:
        return ""
    env.edge_noted.update(e.margin.key for e in fresh)
    how_many = None
    if of is not None and len(fresh) == len(edges) > 1:
        how_many = "all" if len(edges) == of else near
    return str(env.get_template("shared/_edge.md").module.note(fresh, form, how_many))


NOTE_MARK = re.compile("\x00(\\d+)\x00")


def place_notes(text: str, notes: list[str]) -> str:
    """Each verdict's note where the clause of its placeholder ends (before its comma,
    semicolon, colon or full stop, or the bracket that closes around it): right after the
    verdict's words it would split them from what they compare."""
    while (m := NOTE_MARK.search(text)) is not None:
        rest = text[:m.start()] + text[m.end():]
        at = _clause_end(rest, m.start())
        note = notes[int(m.group(1))]
        text = rest[:at] + (note() if callable(note) else note) + rest[at:]
    return text


def _clause_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and (c == "\n" or (c in ",;:." and text[i + 1:i + 2] in ("", " ", "\n"))):
            return i
    return len(text)


def render(folder: Path, part: str, context: dict) -> str:
    """Render `folder/<part>.md` with `context`."""
    env = environment(folder)
    try:
        text = place_notes(env.get_template(f"{part}.md").render(**context), env.edge_notes)
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"{folder / (part + '.md')}: {exc}") from None
    # blank lines the template's control blocks left behind: at most one in a row
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def render_text(folder: Path, text: str, context: dict, where: str) -> str:
    """Render one template written elsewhere than in its own file (a table's caption in
    captions.yml) with `context`, as a template of `folder`; one line, its spaces
    collapsed. `where` names it in an error."""
    env = environment(folder)
    try:
        rendered = place_notes(env.from_string(text).render(**context), env.edge_notes)
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"{where}: {exc}") from None
    return " ".join(rendered.split())


def _words(source: str) -> str:
    """A template's own words: without Jinja expressions, statements and comments, fenced
    or inline code, cross-references, labels and includes."""
    text = re.sub(r"\{#.*?#\}", " ", source, flags=re.S)
    text = re.sub(r"\{\{.*?\}\}", " ", text, flags=re.S)
    text = re.sub(r"\{%.*?%\}", " ", text, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"@(fig|tbl|sec)-[\w-]+", " ", text)
    text = re.sub(r"\{#[\w-]+\}", " ", text)
    return text


def lint(path: Path) -> list[str]:
    """What breaks the rules in one template: every number and comparison word of its own,
    and every noun with "(s)" (the count is known: the `counted` filter writes the noun)."""
    return lint_text(path.read_text(), str(path))


def lint_text(source: str, where: str) -> list[str]:
    """The same for a template written elsewhere (a table's caption); `where` names it."""
    problems = []
    for n, line in enumerate(_words(source).splitlines(), 1):
        for m in FREE_NUMBER.finditer(line):
            problems.append(f"{where}:{n}: the number {m.group(0)!r} is not a fact")
        for m in COMPARISONS.finditer(line):
            problems.append(f"{where}:{n}: the comparison {m.group(0)!r} is not a verdict fact")
        for m in MAYBE_PLURAL.finditer(line):
            problems.append(f"{where}:{n}: {m.group(0)!r}: write the count with | counted(noun)")
    for n, line in enumerate(source.splitlines(), 1):
        for m in POSSESSIVE_AFTER_VALUE.finditer(line):
            problems.append(f"{where}:{n}: {m.group(0)!r}: write a name's possessive with | possessive")
    return problems
