"""The named facts a paper's text states, each computed from the study's tables and
recorded with where it came from, so that the paper check (`parbench.paper.check`) can
compute it again from the Parquet tables and hold the text to it.

The paper's prose lives in templates (`paper/sections/<study>/*.md`, rendered by
`parbench.paper.templates`) that cannot hold a number or a comparison of their own: every
number is a `Fact` (its value, its unit, its 95% interval where it has one, its text and
its source) and every comparison a verdict `Fact` ("faster than", "not distinguishable on
this machine from") computed from two facts' intervals. In the rendered Markdown a fact
is a span, `[29,869 (29,500–30,100) ops/s]{.fact key="sigpar.rate.Ed25519"}`, which
Quarto and pandoc render as its text; the check finds every number of the prose inside
one.

Sources a fact can have (the check recomputes each):

- `lookup`: one row of a table (selected by its key columns), one column; the table is a
  processed Parquet table, or what a named function (`via`, "module:function") makes of
  one;
- `aggregate`: `op` (count, nunique, median, min, max, sum, mean) of a column over the
  rows a filter selects;
- `ratio`, `difference`, `product`, `sum`: of two other facts;
- `config` / `machine`: a value of the run's composed config or machine record (a dotted
  path);
- `constant`: a module's constant ("module:NAME");
- `seed`: a number quoted from a seed document (its file and the exact quote);
- `literal`: a value stated as such (a count of items the text lists), with its reason;
- `verdict_margin` / `verdict_bar` / `verdict_bound` / `verdict_side`: how far apart a
  verdict's two values lie (relative to the larger), the bar it held them to, the fixed
  mark it held one to, and each of its two values again (`side`: a or b), written to the
  digit that gives the margin as written, for a verdict decided just past its bar;
- `range_coverage`: the chance that the range of a count of values holds their median;
- `count_of` / `count_within_spread`: how many of some verdicts say one word, or say
  "not distinguishable" only because of the machine's spread (with a `side`: how many of
  those lie below what they are held to, or above).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from parbench.paper.format import fmt_ci, fmt_num, fmt_pct, span_text, unspan_text


def _series(values) -> str:
    """`1`, `1 and 2`, `1, 2 and 4`."""
    words = [fmt_num(v) if isinstance(v, (int, float)) else str(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else "none"


def _significant(x, digits: int) -> str:
    """`fmt_num` to `digits` significant digits, its trailing zeros kept so that a median
    and its interval's ends show the same digits (32.20 (32.08–32.30), not 32.2 (32.08–32.3))."""
    if x is None or pd.isna(x) or abs(float(x)) >= 999.5:
        return fmt_num(x)
    return f"{float(x):#.{digits}g}".rstrip(".")


# How a fact's value is written. Each takes the value and returns its text.
FORMATS: dict[str, Callable[[Any], str]] = {
    "list": _series,
    "plain": lambda x: "n/a" if x is None else str(x),
    "num": fmt_num,
    "pct": fmt_pct,
    "pct1": lambda x: "n/a" if x is None or pd.isna(x) else f"{100 * float(x):.1f}%",
    # a share near 0% or 100% whose whole-percent text would hide that it is not (99.97%)
    "pct2": lambda x: "n/a" if x is None or pd.isna(x) else f"{100 * float(x):.2f}%",
    # a verdict's margin beside its bar where fewer digits would print the two alike
    "pct3": lambda x: "n/a" if x is None or pd.isna(x) else f"{100 * float(x):.3f}%",
    "int": lambda x: "n/a" if x is None or pd.isna(x) else f"{int(round(float(x))):,}",
    "fixed1": lambda x: "n/a" if x is None or pd.isna(x) else f"{float(x):,.1f}",
    "fixed2": lambda x: "n/a" if x is None or pd.isna(x) else f"{float(x):,.2f}",
    "fixed3": lambda x: "n/a" if x is None or pd.isna(x) else f"{float(x):,.3f}",
    # a value written to more significant digits than `num`'s three (`finer_format`)
    "num4": lambda x: _significant(x, 4),
    "num5": lambda x: _significant(x, 5),
    "num6": lambda x: _significant(x, 6),
    "text": lambda x: str(x),
}
# Each format and the one with a digit more: what a footnote writes a verdict's two values
# with where the study's own digits would not give the margin it states (`finer_format`).
# A plain number takes decimals first, so that a median and its interval's ends show the same
# ones (10.022 (9.675–10.125), not 10.022 (9.6747–10.125)); a value too small for three
# decimals, significant digits.
FINER = {"pct": "pct1", "pct1": "pct2", "pct2": "pct3", "int": "fixed1", "num": "fixed1", "fixed1": "fixed2",
         "fixed2": "fixed3", "fixed3": "num4", "num4": "num5", "num5": "num6"}
# Units written without a space before them.
TIGHT_UNITS = {"%", "x", "×"}
AGGREGATES = {
    "count": lambda s: int(len(s)),
    "nunique": lambda s: int(s.nunique()),
    "median": lambda s: float(s.median()) if len(s) else None,
    "min": lambda s: float(s.min()) if len(s) else None,
    "max": lambda s: float(s.max()) if len(s) else None,
    "sum": lambda s: float(s.sum()),
    "mean": lambda s: float(s.mean()) if len(s) else None,
    "values": lambda s: sorted(_plain(v) for v in s.unique()),
}
# A verdict's word where the data cannot tell two values apart.
SAME = "not distinguishable on this machine from"
# the same, against a seed's point value from another machine: only this run's interval and
# this machine's spread can set the two apart, and the words do not place the seed's value here
SEED_SAME = "not distinguishable, by this run's interval and this machine's spread, from"

# A verdict that tells two values apart by less than its bar plus this share of the bar is
# decided "just past" it: another run could as well have called the two not distinguishable,
# and its sentence says so (the `edge` of its fact, `shared/_edge.md`).
EDGE_MARGIN = 0.1

DERIVED = {
    "ratio": lambda a, b: None if a is None or b in (None, 0) else a / b,
    "difference": lambda a, b: None if a is None or b is None else a - b,
    "product": lambda a, b: None if a is None or b is None else a * b,
    "sum": lambda a, b: None if a is None or b is None else a + b,
    # one fact's size, whatever its sign (b is a again): a difference written as "less" where below zero
    "magnitude": lambda a, b: None if a is None else abs(a),
}


def _plain(x):
    """A JSON-able scalar (numpy and pandas scalars to Python; NaN to None)."""
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def write_value(value, fmt: str, unit: str | None = None, ci: tuple | None = None) -> str:
    """The text of a value: `1,234 (1,200–1,260) ops/s`, `45% (40%–50%)`, `1.9x`."""
    f = FORMATS[fmt]
    text = f(value)
    if ci is not None and None not in ci:
        text = fmt_ci(value, *ci, f)  # as the tables write it: no end rounded onto one
    if unit:
        text += unit if unit in TIGHT_UNITS else f" {unit}"
    return text


@dataclass
class Fact:
    """One number (or verdict) the text states."""

    key: str
    value: Any
    text: str
    source: dict
    fmt: str = "num"
    unit: str | None = None
    ci: tuple | None = None
    # the words (an entity's names) that the sentence stating the fact must contain
    about: tuple[str, ...] = ()
    kind: str = "number"
    # a verdict that says `same` only because the two values lie within the machine's spread
    # (their intervals apart), or a count of such verdicts: the machine's spread as a fact,
    # for the note the sentence gives beside it (`spread_note`)
    spread: "Fact | None" = None
    # a verdict decided by a relative difference just past its bar (`EDGE_MARGIN`): the
    # difference and the bar as facts, written to the digit that tells them apart, and the
    # names the compared value is about, for the note `shared/_edge.md` gives beside it
    edge: "Edge | None" = None
    # a count of verdicts of one word (`count_of`): the edges of those it counts, for the
    # same note beside the count (a group stated by its count)
    counted_edges: tuple = ()
    # a count of verdicts of one word among which several were decided just past their bar:
    # how many, as a fact of its own, for the note beside the count ("7 of them")
    near_bar: "Fact | None" = None
    # a count of verdicts the spread alone decided (`count_within_spread`): how many of them
    # lie below what they are held to and how many above, as facts of their own
    sides: tuple = ()
    # a verdict written as the word of a group of this many members (`weakest`): its note
    # says "one of them", not the group's word as a whole, was decided just past its bar
    members: int = 1
    # the word of a group (`weakest`): the edges of every member decided just past its bar,
    # for the one note beside the word that gives each (the group's word stands for them all)
    member_edges: tuple = ()
    # a count of verdicts the spread alone decided (`count_within_spread`): how many of its
    # verdicts say `same` at all, so that its sentence says "all 5" where it counts each
    among: int = 0

    def __str__(self) -> str:
        return f'[{span_text(self.text)}]{{.fact key="{self.key}"}}'

    def __html__(self) -> str:  # Jinja's autoescape never applies to a fact's span
        return str(self)

    @property
    def known(self) -> bool:
        return self.value is not None

    def record(self) -> dict:
        record = {"key": self.key, "kind": self.kind, "value": _plain(self.value), "text": self.text,
                  "fmt": self.fmt, "unit": self.unit, "ci": None if self.ci is None else [_plain(c) for c in self.ci],
                  "source": self.source, "about": list(self.about)}
        if self.kind == "verdict":
            record["within_spread"] = self.spread is not None
            record["near_bar"] = self.edge is not None
        return record


@dataclass
class Edge:
    """What a verdict decided just past its bar owes its reader: how far apart its two
    values lie (`margin`, of the larger), the bar (`bar`: the machine's spread, or a cell's
    drift), and the two values themselves (`a` and `b`: the compared facts, or a fixed mark
    as a fact of its own), so that a note beside a group says which of its members it
    means. `a_text` and `b_text` write the two values to the digit that gives the margin as
    written (`finer_format`: 95.7% and 100% differ by 4.3%, where 96% and 100% would not)."""

    margin: Fact
    bar: Fact
    a: Fact
    b: Fact
    a_text: Fact
    b_text: Fact
    # how the study's notes name a row's key values (`Facts.note_names`)
    words: dict = dataclasses.field(default_factory=dict)

    @property
    def names(self) -> dict[str, list[str]]:
        """What the note calls the two values: the names of their rows (the text values of
        the key columns that picked them, `row_names`), those both rows share (`shared`),
        then each row's own (`a`, `b`) where both have some (ECDSA-P256 sign, threading
        openssl-cffi against native-threads); else all under `shared` (a fixed mark has no
        row). Each side is named by what its value is `about` first (the paper check holds a
        sentence to naming it: "the TBB task_group", where the row says tbb), then by its
        row's names that name leaves out, in the study's words (`Facts.note_names`)."""
        a, b = side_names(self.a, self.words), side_names(self.b, self.words)
        shared = [n for n in a if n in b]
        a_own, b_own = ([n for n in side if n not in shared] for side in (a, b))
        if a_own and b_own:  # set against each other as nouns: "threads against processes"
            return {"shared": shared, "a": [_noun(n) for n in a_own], "b": [_noun(n) for n in b_own]}
        return {"shared": list(dict.fromkeys([*a, *b_own])), "a": [], "b": []}

    @property
    def machine(self) -> bool:
        return self.bar.source["from"] == "machine"


# key columns that pick a row but name nothing a reader compares: the host every row
# shares, and the identifier of a computed comparison (gil's `freethreading_overhead`),
# which the sentence says in words
UNNAMED_KEYS = ("hostname", "comparison")


# where the machine record holds the machine's own spread (`machine_spread`)
SPREAD_PATH = "cpu_stability.cv"
# a name's leading preposition ("in threads"), dropped where two sides stand as nouns
PREPOSITION = re.compile(r"^(?:in|on|at|through) ")


def _noun(name: str) -> str:
    return PREPOSITION.sub("", name)


def row_names(fact: Fact, words: dict | None = None) -> list[str]:
    """The names of the row a looked-up fact came from: the text values of the key columns
    that picked it, in their order, but a name another of them holds (native, in
    native-threads). `words` ({column: None, {value: words or None}, or a function of the
    row's key values giving the words or None}): how the study names a column's values in
    its text (io: "I/O tasks"; a mode with its backend: "in threading mode"), None where its
    sentence always says it (a phase, the main sweep) and the note leaves it out."""
    words = words or {}
    where = fact.source.get("where") or {}
    names = []
    for column, value in where.items():
        if not isinstance(value, str) or not value or column in UNNAMED_KEYS:
            continue
        if column in words and words[column] is None:  # every sentence says it
            continue
        spec = words.get(column) or {}
        name = spec(where) if callable(spec) else spec.get(value, value)
        if name:  # None: a value its sentence says
            names.append(name)
    return [n for n in dict.fromkeys(names) if not any(n != o and n in o for o in names)]


def side_names(fact: Fact, words: dict | None = None) -> list[str]:
    """What a note calls one value: what it is `about`, then its row's names (`row_names`)
    that those do not already hold (tbb, in "the TBB task_group")."""
    about = [n for n in fact.about if n]
    covered = [n.lower() for n in about]
    return [*dict.fromkeys(about), *(n for n in row_names(fact, words) if not any(n.lower() in c for c in covered))]


COMPARE = {">=": lambda s, v: s >= v, "<=": lambda s, v: s <= v, ">": lambda s, v: s > v, "<": lambda s, v: s < v,
           "!=": lambda s, v: s != v}


def _where(frame: pd.DataFrame, where: dict) -> pd.DataFrame:
    """The rows whose columns equal the values (a list: one of them; None: null; a dict
    {">=": 2}: the comparisons)."""
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        if isinstance(value, dict):
            for op, bound in value.items():
                mask &= COMPARE[op](frame[column], bound).fillna(False).astype(bool)
        elif isinstance(value, (list, tuple)):
            mask &= frame[column].isin(list(value))
        elif value is None:
            mask &= frame[column].isna()
        else:
            mask &= frame[column] == value
    return frame[mask]


def table_of(tables: dict, name, via: str | None, cache: dict) -> pd.DataFrame:
    """The table a source names: one table, several concatenated (a list of names), or
    what the function `via` ("module:function") makes of it."""
    key = (tuple(name) if isinstance(name, (list, tuple)) else name, via)
    if key not in cache:
        if isinstance(name, (list, tuple)):
            missing = [n for n in name if n not in tables]
            if missing:
                raise KeyError(f"the tables {missing} are not among the paper's tables")
            frame = pd.concat([tables[n] for n in name], ignore_index=True)
        else:
            if name not in tables:
                raise KeyError(f"the table {name} is not among the paper's tables")
            frame = tables[name]
        cache[key] = _resolve(via)(frame) if via else frame
    return cache[key]


def _resolve(function: str) -> Callable:
    import importlib

    module, name = function.split(":")
    return getattr(importlib.import_module(module), name)


class Facts:
    """A study's facts, and the tables they are computed from.

    `tables`: processed table name -> DataFrame; `keys`: table name -> the columns that
    identify one of its rows (a lookup names its row by them)."""

    def __init__(self, study: str, tables: dict[str, pd.DataFrame], keys: dict[str, list[str]],
                 machine: dict | None = None, note_names: dict | None = None) -> None:
        self.study = study
        # how a note beside a verdict just past its bar names a row's key values (`row_names`)
        self.note_names = dict(note_names or {})
        self.tables = dict(tables)
        self.keys = dict(keys)
        self.machine = machine or {}
        self.min_relative = machine_spread(self.machine)
        self.items: dict[str, Fact] = {}
        self._derived: dict[tuple, pd.DataFrame] = {}

    # --- the tables ---------------------------------------------------------------------------

    def table(self, name, via: str | None = None) -> pd.DataFrame:
        """A processed table (a list of names: those tables one after the other), or what
        the function `via` makes of it."""
        return table_of(self.tables, name, via, self._derived)

    def _key(self, name, via: str | None) -> list[str]:
        name = "+".join(name) if isinstance(name, (list, tuple)) else name
        return self.keys[f"{name}|{via}" if via else name]

    # --- registering ---------------------------------------------------------------------------

    def _add(self, fact: Fact) -> Fact:
        full = f"{self.study}.{fact.key}"
        fact.key = full
        old = self.items.get(full)
        if old is not None and (old.text != fact.text or old.source != fact.source):
            raise ValueError(f"fact {full} stated twice with different values: {old.text!r} and {fact.text!r}")
        self.items[full] = fact
        return fact

    def lookup(self, key: str, table: str, row, column: str, *, fmt: str = "num", unit: str | None = None,
               interval: bool = True, via: str | None = None, about: tuple[str, ...] = ()) -> Fact:
        """A value of one row of a table: `row` is a row of it (a Series, a dict or a
        namedtuple); its key columns name it in the source."""
        get = (lambda c: row.get(c)) if hasattr(row, "get") else (lambda c: getattr(row, c, None))
        where = {c: _plain(get(c)) for c in self._key(table, via)}
        value = _plain(get(column))
        ci = None
        if interval:
            has = (lambda c: c in row) if hasattr(row, "get") else (lambda c: hasattr(row, c))
            if not (has(f"{column}_ci_low") and has(f"{column}_ci_high")):
                # a verdict on a value whose interval is not looked up says "not
                # distinguishable" where the data may tell: name the columns, or say interval=False
                raise KeyError(f"fact {key}: {_name(table)}{f' (via {via})' if via else ''} has no "
                               f"{column}_ci_low/{column}_ci_high; pass interval=False for a value without one")
            lo, hi = _plain(get(f"{column}_ci_low")), _plain(get(f"{column}_ci_high"))
            ci = (lo, hi) if lo is not None and hi is not None else None
        source = {"kind": "lookup", "table": _name(table), "via": via, "where": where, "column": column,
                  "interval": interval}
        return self._add(Fact(key, value, write_value(value, fmt, unit, ci), source, fmt, unit, ci, about))

    def aggregate(self, key: str, table: str, op: str, column: str | None = None, where: dict | None = None, *,
                  fmt: str = "num", unit: str | None = None, via: str | None = None,
                  about: tuple[str, ...] = ()) -> Fact:
        """`op` of `column` over the rows `where` selects (count needs no column)."""
        frame = _where(self.table(table, via), where or {})
        series = frame[column].dropna() if column else frame.index.to_series()
        value = _plain(AGGREGATES[op](series))
        source = {"kind": "aggregate", "table": _name(table), "via": via, "where": {k: _plain_where(v) for k, v in
                                                                             (where or {}).items()},
                  "column": column, "op": op}
        return self._add(Fact(key, value, write_value(value, fmt, unit), source, fmt, unit, None, about))

    def total(self, key: str, items: list[Fact], *, fmt: str = "int", unit: str | None = None) -> Fact:
        """The sum of other facts (counts of several studies)."""
        value = sum(item.value or 0 for item in items)
        source = {"kind": "total", "of": [item.key for item in items]}
        return self._add(Fact(key, value, write_value(value, fmt, unit), source, fmt, unit))

    def derived(self, key: str, op: str, a: Fact, b: Fact, *, fmt: str = "num", unit: str | None = None,
                about: tuple[str, ...] = ()) -> Fact:
        value = DERIVED[op](a.value, b.value)
        source = {"kind": op, "of": [a.key, b.key]}
        return self._add(Fact(key, value, write_value(value, fmt, unit), source, fmt, unit, None, about))

    def config(self, key: str, path: str, *, fmt: str = "num", unit: str | None = None) -> Fact:
        value = _dig(self.machine.get("config", {}), path)
        source = {"kind": "config", "path": path}
        return self._add(Fact(key, _plain(value), write_value(value, fmt, unit), source, fmt, unit))

    def machine_value(self, key: str, path: str, *, fmt: str = "num", unit: str | None = None,
                      scale: float = 1) -> Fact:
        value = _dig(self.machine, path)
        value = value * scale if isinstance(value, (int, float)) and scale != 1 else value
        source = {"kind": "machine", "path": path, "scale": scale}
        return self._add(Fact(key, _plain(value), write_value(value, fmt, unit), source, fmt, unit))

    def constant(self, key: str, ref: str, *, fmt: str = "num", unit: str | None = None, scale: float = 1) -> Fact:
        value = _resolve(ref) * scale
        source = {"kind": "constant", "ref": ref, "scale": scale}
        return self._add(Fact(key, _plain(value), write_value(value, fmt, unit), source, fmt, unit))

    def seed(self, key: str, file: str, quote: str, value: float, *, fmt: str = "num",
             unit: str | None = None) -> Fact:
        """A number a seed document states: `quote` is its exact text there (the check
        finds it in the file and the value in the quote)."""
        source = {"kind": "seed", "file": file, "quote": quote}
        return self._add(Fact(key, value, write_value(value, fmt, unit), source, fmt, unit))

    def literal(self, key: str, value, why: str, *, fmt: str = "int", unit: str | None = None) -> Fact:
        source = {"kind": "literal", "why": why}
        return self._add(Fact(key, _plain(value), write_value(value, fmt, unit), source, fmt, unit))

    def coverage(self, key: str, n: Fact, *, fmt: str = "pct") -> Fact:
        """The chance that the range of `n` values holds their median (`range_coverage`)."""
        value = range_coverage(n.value)
        return self._add(Fact(key, value, write_value(value, fmt), {"kind": "range_coverage", "of": [n.key]}, fmt))

    def count_of(self, key: str, items: list[Fact], equal=None, *, about: tuple[str, ...] = ()) -> Fact:
        """How many of `items` there are (with `equal`: how many have that value): the
        count of a list the text gives."""
        value = sum(1 for item in items if equal is None or item.value == equal)
        source = {"kind": "count_of", "of": [item.key for item in items], "equal": equal}
        near = [item for item in items if equal is not None and item.value == equal and item.edge]
        count = self._add(Fact(key, value, write_value(value, "int"), source, "int", None, None, about,
                               counted_edges=tuple(item.edge for item in near)))
        if len(near) > 1:  # how many its note speaks of: "7 of them decided just past their bar"
            count.near_bar = self._add(Fact(f"{key}.near_bar", len(near), write_value(len(near), "int"),
                                            {"kind": "count_near_bar", "of": [item.key for item in near]}, "int"))
        return count

    def verdict(self, key: str, a: Fact, b: Fact, *, better: str, worse: str,
                same: str = SAME, higher_is_better: bool = True, floor: tuple[Fact, ...] = ()) -> Fact:
        """How `a` compares with `b`: `better` or `worse` only when their 95% intervals do
        not overlap (and both have one) and they differ by more than the machine's own
        spread (`min_relative`), else `same`. `floor`: relative differences the two values
        themselves may hold without a finding (a cell's drift within its one run, which
        its interval does not show); the largest of them and the spread is the bar."""
        source = {"kind": "verdict", "of": [a.key, b.key]}
        return self._judged(key, a, b.value, b.ci, source, floor, b_fact=b, better=better, worse=worse, same=same,
                            higher_is_better=higher_is_better)

    def bound_verdict(self, key: str, a: Fact, bound: float, *, better: str, worse: str,
                      same: str = SAME, higher_is_better: bool = True, floor: tuple[Fact, ...] = ()) -> Fact:
        """How `a` compares with a fixed value (1.0: no speedup; 100%: full efficiency; a
        published number), with the bar of `verdict`."""
        source = {"kind": "bound_verdict", "of": [a.key], "bound": bound}
        return self._judged(key, a, bound, (bound, bound), source, floor, better=better, worse=worse, same=same,
                            higher_is_better=higher_is_better)

    def _judged(self, key: str, a: Fact, b, b_ci, source: dict, floor: tuple[Fact, ...], b_fact: Fact | None = None,
                **words) -> Fact:
        """A verdict fact (`judge`) of `a` against `b`, its bar the largest of the machine's
        spread and the floor's values. A verdict its bar alone made `same` (the intervals
        apart) holds the bar's fact as its `spread`, for the sentence to say so."""
        high = [f for f in floor if f.known and f.value > self.min_relative]
        bar = max(high, key=lambda f: f.value) if high else None
        min_relative = bar.value if bar is not None else self.min_relative
        word = judge(a.value, a.ci, b, b_ci, min_relative=min_relative, **words)
        source.update(words, min_relative=min_relative)
        if floor:
            source["floor"] = [f.key for f in floor]
        decided = None
        if within_spread(a.value, a.ci, b, b_ci, min_relative):
            decided = bar if bar is not None else (self.spread() if self.min_relative else None)
        edge = None
        if near_bar(a.value, a.ci, b, b_ci, min_relative):
            edge = self._edge(key, a, b, b_fact, min_relative, "floor" if bar is not None else "machine")
        return self._add(Fact(key, word, word, source, "text", None, None, (), kind="verdict", spread=decided,
                              edge=edge))

    def _edge(self, key: str, a: Fact, b, b_fact: Fact | None, bar_value: float, bar_from: str) -> Edge:
        """The margin and bar facts of verdict `key`, decided just past its bar, each
        written to the first digit at which the two differ and show it just past (within
        `EDGE_MARGIN` of the bar: 2.88% against 2.65%, where 2.9% against 2.6% would read
        a ninth past it)."""
        margin_value = relative_difference(a.value, b)
        fmt = next((f for f in ("pct1", "pct2") if _just_past(FORMATS[f](margin_value), FORMATS[f](bar_value))),
                   "pct3")
        verdict = f"{self.study}.{key}"
        margin = self._add(Fact(f"{key}.margin", margin_value, write_value(margin_value, fmt),
                                {"kind": "verdict_margin", "of": [verdict]}, fmt))
        bar = self._add(Fact(f"{key}.bar", bar_value, write_value(bar_value, fmt),
                             {"kind": "verdict_bar", "of": [verdict], "from": bar_from}, fmt))
        b_ci = None if b_fact is None else b_fact.ci
        sides = finer_format(a.fmt, a.unit, (a.value, a.ci), (b, b_ci), margin.text, fmt)
        a_text = self._add(Fact(f"{key}.a", a.value, write_value(a.value, sides, a.unit, a.ci),
                                {"kind": "verdict_side", "of": [verdict], "side": "a"}, sides, a.unit, a.ci,
                                a.about))
        if b_fact is None:  # a fixed mark: a fact of its own, its value the verdict's bound
            b_fact = b_text = self._add(Fact(f"{key}.mark", b, write_value(b, sides, a.unit),
                                             {"kind": "verdict_bound", "of": [verdict]}, sides, a.unit))
        else:
            b_text = self._add(Fact(f"{key}.b", b, write_value(b, sides, a.unit, b_ci),
                                    {"kind": "verdict_side", "of": [verdict], "side": "b"}, sides, a.unit, b_ci,
                                    b_fact.about))
        return Edge(margin, bar, a, b_fact, a_text, b_text, self.note_names)

    def spread(self) -> Fact:
        """The machine's own spread (`min_relative`) as a fact of this study."""
        return self.machine_value("machine_spread", SPREAD_PATH, fmt="pct1")

    def count_within_spread(self, key: str, verdicts: list[Fact], *, about: tuple[str, ...] = ()) -> Fact:
        """How many of `verdicts` say `same` only because their two values lie within the
        machine's spread, their intervals apart: the count the sentence owes the reader
        where it counts them among the ones it cannot tell apart."""
        if any(v.spread is not None and v.spread.source["kind"] != "machine" for v in verdicts):
            raise ValueError("a verdict decided by its own floor (a cell's drift) is counted apart from the spread's")
        within = [v for v in verdicts if v.spread is not None]
        source = {"kind": "count_within_spread", "of": [v.key for v in verdicts]}
        sides = ()
        if within:  # which side of what they are held to their medians lie: a direction the count hides
            sides = tuple(self._add(Fact(f"{key}.{side}", n, write_value(n, "int"), {**source, "side": side},
                                         "int", None, None, about))
                          for side, n in zip(("below", "above"), self._sides_count(within)))
        among = sum(1 for v in verdicts if v.value == v.source.get("same"))
        return self._add(Fact(key, len(within), write_value(len(within), "int"), source, "int", None, None, about,
                              spread=self.spread() if within else None, sides=sides, among=among))

    def _sides_count(self, verdicts: list[Fact]) -> tuple[int, int]:
        """How many of `verdicts` have their value below what it is held to, and how many above."""
        below = sum(1 for v in verdicts if verdict_below(v.source, lambda k: self.items[k].value))
        return below, len(verdicts) - below

    def records(self) -> dict:
        return {key: fact.record() for key, fact in sorted(self.items.items())}

    def view(self) -> "FactView":
        return FactView(self)

    def __getitem__(self, key: str) -> Fact:
        return self.items[f"{self.study}.{key}"]


class FactView:
    """The facts by their short name, for templates: `f.seq_time` or `f["rate.Ed25519"]`;
    a name the paper module did not compute fails the render."""

    def __init__(self, facts: Facts) -> None:
        self._facts = facts

    def __getitem__(self, key: str) -> Fact:
        try:
            return self._facts[key]
        except KeyError:
            raise KeyError(f"the paper module computed no fact {self._facts.study}.{key}") from None

    def __getattr__(self, key: str) -> Fact:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __contains__(self, key: str) -> bool:
        return f"{self._facts.study}.{key}" in self._facts.items


def weakest(items) -> "Fact":
    """The verdict a group of the same verdict states for all its members (items: verdict
    facts, or dicts and objects holding one as `verdict`): the first one decided just past
    its bar, else the first. Where the group has several members, the word carries the edge
    of every member decided just past its bar (`member_edges`), so that the note beside it
    gives each ("one of them", "all of them", "some of them"), not only the first's."""
    verdicts = [i if isinstance(i, Fact) else (i["verdict"] if isinstance(i, dict) else i.verdict) for i in items]
    edged = [v for v in verdicts if v.edge is not None]
    if not edged:
        return verdicts[0]
    if len(verdicts) == 1:
        return edged[0]
    return dataclasses.replace(edged[0], members=len(verdicts), member_edges=tuple(v.edge for v in edged))


def verdict_below(source: dict, value: Callable[[str], Any]) -> bool:
    """Whether a verdict's value lies below what it is held to (the other fact's value, got
    by `value(key)`, or its bound)."""
    b = value(source["of"][1]) if source["kind"] == "verdict" else source["bound"]
    return value(source["of"][0]) < b


def machine_spread(machine: dict) -> float:
    """The smallest difference a verdict may call one: the machine's own spread (the CV of a
    fixed loop's speed when the pipeline probed it), 0 when it was not measured."""
    return float(_dig(machine, SPREAD_PATH) or 0.0)


def judge(a, a_ci, b, b_ci, *, better: str, worse: str, same: str, higher_is_better: bool = True,
          min_relative: float = 0.0) -> str:
    """The verdict word: `same` unless both intervals exist and are disjoint and the two
    values differ by more than `min_relative` of the larger (a difference the machine's own
    spread can make is no finding, however tight the intervals)."""
    if not _apart(a, a_ci, b, b_ci) or _close(a, b, min_relative):
        return same
    return better if (a > b) == higher_is_better else worse


def _apart(a, a_ci, b, b_ci) -> bool:
    from parbench import stats

    return not (a is None or b is None or a_ci is None or b_ci is None
                or not stats.distinguishable(tuple(a_ci), tuple(b_ci)))


def within_spread(a, a_ci, b, b_ci, min_relative: float) -> bool:
    """Whether `judge` says `same` only for the machine's spread: both intervals exist and
    are disjoint, but the two values differ by no more than `min_relative` of the larger."""
    return _apart(a, a_ci, b, b_ci) and _close(a, b, min_relative)


def near_bar(a, a_ci, b, b_ci, min_relative: float) -> bool:
    """Whether `judge` tells the two apart by a relative difference within `EDGE_MARGIN` of
    its bar (never where no bar was measured)."""
    return (min_relative > 0 and _apart(a, a_ci, b, b_ci) and not _close(a, b, min_relative)
            and _close(a, b, min_relative * (1 + EDGE_MARGIN)))


def range_coverage(n) -> float | None:
    """The chance that the lowest and highest of `n` independent values hold the median of
    their distribution (each misses it on one side with 0.5^n): 1 - 2 * 0.5^n. An interval
    over so few repetitions is no wider than their range, so this bounds its coverage."""
    return None if n is None or n < 1 else 1 - 2 * 0.5 ** n


def written_value(text: str, unit: str | None = None) -> float | None:
    """The number a value's text writes (its median, where it gives an interval): what a
    reader computes with. `45.7% (40%–50%)` reads 0.457."""
    if unit and text.endswith(unit):
        text = text[:-len(unit)].rstrip()
    head = text.split(" (")[0].replace(",", "")
    try:
        value = float(head.removesuffix("%"))
    except ValueError:
        return None
    return value / 100 if head.endswith("%") else value


def margin_as_written(a_text: str, b_text: str, unit: str | None, margin_fmt: str) -> str | None:
    """The margin a reader computes from two values as written, written as `margin_fmt`."""
    a, b = written_value(a_text, unit), written_value(b_text, unit)
    margin = relative_difference(a, b)
    return None if margin is None else write_value(margin, margin_fmt)


def finer_format(fmt: str, unit: str | None, a: tuple, b: tuple, margin_text: str, margin_fmt: str) -> str:
    """The format, `fmt` or one with more digits (`FINER`), that writes two values,
    (value, interval) each, so that the margin a reader computes from them is the one
    written (`margin_text`, in `margin_fmt`); the finest there is where none does."""
    while True:
        texts = [write_value(value, fmt, unit, ci) for value, ci in (a, b)]
        if margin_as_written(*texts, unit, margin_fmt) == margin_text or fmt not in FINER:
            return fmt
        fmt = FINER[fmt]


def _just_past(margin_text: str, bar_text: str) -> bool:
    """Whether a margin and a bar, as written, show the margin past the bar by less than
    `EDGE_MARGIN` of it."""
    margin, bar = written_value(margin_text), written_value(bar_text)
    return bar is not None and margin is not None and bar < margin <= bar * (1 + EDGE_MARGIN)


def relative_difference(a, b) -> float | None:
    """How far apart two values lie, relative to the larger: the measure `judge` holds
    to its bar."""
    if a is None or b is None or max(abs(a), abs(b)) == 0:
        return None
    return abs(a - b) / max(abs(a), abs(b))


def _close(a, b, min_relative: float) -> bool:
    return abs(a - b) <= min_relative * max(abs(a), abs(b))


def _name(table):
    return list(table) if isinstance(table, (list, tuple)) else table


def _plain_where(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return [_plain(x) for x in v] if isinstance(v, (list, tuple)) else _plain(v)


def _dig(doc: dict, path: str):
    for part in path.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


SPAN = re.compile(r'\[(?P<text>[^\[\]]*)\]\{\.fact key="(?P<key>[^"]+)"\}')


def plain(markdown: str) -> str:
    """`markdown` with each fact's span written as the fact's text: what a caption the paper
    also shows says in Snakemake's report, where no paper check reads it."""
    return SPAN.sub(lambda m: unspan_text(m["text"]), markdown)
