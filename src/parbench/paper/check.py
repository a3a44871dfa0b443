"""The paper check: every number the paper states, every comparison it makes and every
figure it draws, held against the tables it came from.

`parbench paper-check` runs after the generated parts are written (and the test suite runs
it on the smoke profile's paper and on the fixture tables). It fails, naming each problem,
when:

- a fact (`paper/_generated/<study>/facts.json`) does not follow from its source: the
  value computed again from the Parquet table (or the config, the machine record, a
  code constant, a seed document's quote) differs, or its text does not write that value;
- a verdict says "faster"/"slower" (or the study's words for it) where the two facts'
  95% intervals overlap, or the direction disagrees with the medians;
- the prose (the generated parts and the sections' fixed text) states a number outside a
  fact, or a comparison word outside a verdict;
- a fact's sentence does not name what the fact is about (its row's algorithm,
  scheduler, runtime ...): a number quoted under another's name;
- a fact span names a fact that does not exist or shows another text than the fact's;
- a sentence runs into the next, with no space after its full stop;
- a figure or table is drawn that the text never cites;
- a verdict the machine's spread alone made "not distinguishable" (its intervals apart)
  stands in a paragraph that never gives the spread;
- a verdict is decided just past its bar but no sentence writes it, nor a count holding
  it: its footnote, which says another run could as well have decided it the other way,
  is never given.

`figure_problems` and `layout_problems` hold the figures and the rendered PDF to the same
standard (`parbench.paper.figure_check`, `parbench.paper.layout_check`).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from parbench.paper import facts as factmod
from parbench.paper.format import unspan_text
from parbench.paper.templates import COMPARISONS, FREE_NUMBER
from parbench.words import counted

# What the prose check ignores: code, tables, labels, cross-references, includes, image
# paths, HTML comments, Quarto's attribute blocks.
_STRIP = [
    (re.compile(r"```.*?```", re.S), " "),
    (re.compile(r"<!--.*?-->", re.S), " "),
    (re.compile(r"\{\{<.*?>\}\}"), " "),
    (re.compile(r"`[^`\n]*`"), " "),
    (re.compile(r"\]\([^)]*\)"), "]"),  # a link's or image's target
    (re.compile(r"\{[#.][^}]*\}"), " "),  # {#fig-x}, {.callout-note title="..."}
    (re.compile(r"@(fig|tbl|sec)-[\w-]+"), " "),
    (re.compile(r"^:::.*$", re.M), " "),
]


def _prose(markdown: str) -> str:
    """The prose of a Markdown text: tables (rows and their caption line) and code out."""
    lines = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(("|", "+-", "+=", "+:")) or stripped.startswith(": ") and "{#tbl-" in stripped:
            continue
        if stripped.startswith("---") and set(stripped) <= {"-"}:
            continue
        lines.append(line)
    text = "\n".join(lines)
    for pattern, repl in _STRIP:
        text = pattern.sub(repl, text)
    return text


def _sentences(text: str) -> list[str]:
    """Rough sentences: a full stop, semicolon or paragraph break ends one."""
    return [s for s in re.split(r"(?<=[.;:])\s+(?=[A-Z@(\[])|\n\s*\n", text) if s.strip()]


PLACE = re.compile(r"FACT(\d+)FACT")
# A sentence's stop with the next sentence's first word right after it: a template whose
# loop ends a sentence just before a block tag (Jinja drops the line break after the tag).
RUN_TOGETHER = re.compile(r"[\w)\]%][.;](?=[A-Z][a-z])")


def prose_problems(markdown: str, facts: dict, where: str) -> list[str]:
    """Numbers and comparisons of a Markdown text that are not facts, fact spans that do
    not match their fact, and facts whose sentence does not name what they are about."""
    problems = []
    spans: list[re.Match] = []

    def hold(m: re.Match) -> str:  # a fact span becomes a placeholder that has no number
        spans.append(m)
        return f" FACT{len(spans) - 1}FACT "

    prose = _prose(factmod.SPAN.sub(hold, markdown))
    for m in RUN_TOGETHER.finditer(prose):
        problems.append(f"{where}: a sentence runs into the next (no space after its stop): …{_around(prose, m)}…")
    for sentence in _sentences(prose):
        bare = PLACE.sub(" ", sentence)
        for m in FREE_NUMBER.finditer(bare):
            problems.append(f"{where}: the number {m.group(0)!r} is not a fact: …{_around(bare, m)}…")
        for m in COMPARISONS.finditer(bare):
            problems.append(f"{where}: the comparison {m.group(0)!r} is not a verdict fact: …{_around(bare, m)}…")
        lowered = bare.lower()
        for i in PLACE.findall(sentence):
            span = spans[int(i)]
            key, text = span.group("key"), unspan_text(span.group("text"))
            fact = facts.get(key)
            if fact is None:
                problems.append(f"{where}: the span names the fact {key}, which was not computed")
                continue
            if fact["text"] != text:
                problems.append(f"{where}: the span of {key} shows {text!r}, the fact says {fact['text']!r}")
            about = [a for a in fact.get("about") or [] if a]
            if about and not any(a.lower() in lowered for a in about):
                problems.append(f"{where}: {key} ({text}) is about {' / '.join(about)}, which its sentence does "
                                f"not name: …{bare.strip()[:200]}…")
    return problems


def _around(text: str, m: re.Match, width: int = 60) -> str:
    return text[max(0, m.start() - width):m.end() + width].replace("\n", " ")


# --- facts against their sources -----------------------------------------------------------------

def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


class Sources:
    """What facts are computed from: the tables, the machine record, the seed documents."""

    def __init__(self, tables: dict[str, pd.DataFrame], machine: dict, seeds_dir: Path) -> None:
        self.tables = tables
        self.machine = machine
        self.seeds_dir = seeds_dir
        self._derived: dict[tuple, pd.DataFrame] = {}

    def table(self, name, via: str | None) -> pd.DataFrame:
        return factmod.table_of(self.tables, name, via, self._derived)


def recompute(fact: dict, src: Sources, all_facts: dict) -> tuple[object, tuple | None]:
    """(value, interval) of a fact computed again from its source."""
    s = fact["source"]
    kind = s["kind"]
    if kind == "lookup":
        rows = factmod._where(src.table(s["table"], s.get("via")), s["where"])
        if len(rows) != 1:
            raise LookupError(f"{len(rows)} rows of {s['table']} match {s['where']} (one expected)")
        row = rows.iloc[0]
        ci = None
        if s.get("interval"):
            lo, hi = (factmod._plain(row.get(f"{s['column']}_ci_low")),
                      factmod._plain(row.get(f"{s['column']}_ci_high")))
            ci = (lo, hi) if lo is not None and hi is not None else None
        return factmod._plain(row[s["column"]]), ci
    if kind == "aggregate":
        frame = factmod._where(src.table(s["table"], s.get("via")), s["where"])
        series = frame[s["column"]].dropna() if s["column"] else frame.index.to_series()
        return factmod._plain(factmod.AGGREGATES[s["op"]](series)), None
    if kind in factmod.DERIVED:
        a, b = (all_facts[k]["value"] for k in s["of"])
        return factmod.DERIVED[kind](a, b), None
    if kind == "config":
        return factmod._plain(factmod._dig(src.machine.get("config", {}), s["path"])), None
    if kind == "machine":
        value = factmod._dig(src.machine, s["path"])
        scale = s.get("scale", 1)
        return factmod._plain(value * scale if isinstance(value, (int, float)) and scale != 1 else value), None
    if kind == "total":
        return sum(all_facts[k]["value"] or 0 for k in s["of"]), None
    if kind == "constant":
        return factmod._plain(factmod._resolve(s["ref"]) * s.get("scale", 1)), None
    if kind == "seed":
        text = (src.seeds_dir / s["file"]).read_text(errors="replace")
        if s["quote"] not in text:
            raise LookupError(f"the seed {s['file']} does not say {s['quote']!r}")
        if isinstance(fact["value"], str):  # a name the seed gives (its machine's CPU)
            if fact["value"] not in s["quote"]:
                raise LookupError(f"the quote {s['quote']!r} does not hold {fact['value']!r}")
            return fact["value"], None
        numbers = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.?\d*", s["quote"])]
        if not any(_same(n, fact["value"]) for n in numbers):
            raise LookupError(f"the quote {s['quote']!r} does not hold the value {fact['value']}")
        return fact["value"], None
    if kind == "literal":
        return fact["value"], None
    if kind == "count_of":
        return sum(1 for k in s["of"] if s["equal"] is None or all_facts[k]["value"] == s["equal"]), None
    if kind == "count_near_bar":  # the verdicts a count's note names, each still decided just past its bar
        return sum(1 for k in s["of"] if all_facts[k].get("near_bar")), None
    if kind == "count_within_spread":
        within = [k for k in s["of"] if all_facts[k]["within_spread"]]
        if "side" in s:
            below = sum(1 for k in within if factmod.verdict_below(all_facts[k]["source"],
                                                                   lambda key: all_facts[key]["value"]))
            return below if s["side"] == "below" else len(within) - below, None
        return len(within), None
    if kind == "range_coverage":
        return factmod.range_coverage(all_facts[s["of"][0]]["value"]), None
    if kind == "verdict_margin":
        (a, _), (b, _) = _sides(all_facts[s["of"][0]]["source"], all_facts)
        return factmod.relative_difference(a, b), None
    if kind == "verdict_bound":
        return all_facts[s["of"][0]]["source"]["bound"], None
    if kind == "verdict_side":
        return _sides(all_facts[s["of"][0]]["source"], all_facts)[0 if s["side"] == "a" else 1]
    if kind == "verdict_bar":
        return verdict_bar(all_facts[s["of"][0]]["source"], all_facts, src), None
    # a verdict's spread from the machine record, never from the fact (which could have been
    # written with another)
    if kind in ("verdict", "bound_verdict"):
        (a, a_ci), (b, b_ci) = _sides(s, all_facts)
        return factmod.judge(a, a_ci, b, b_ci, better=s["better"], worse=s["worse"], same=s["same"],
                             higher_is_better=s["higher_is_better"], min_relative=verdict_bar(s, all_facts, src)), None
    raise ValueError(f"unknown source kind {kind!r}")


def _sides(s: dict, all_facts: dict) -> tuple[tuple, tuple]:
    """A verdict's two sides, (value, interval) each: its two facts, or its fact and the bound."""
    a = all_facts[s["of"][0]]
    if s["kind"] == "verdict":
        b = all_facts[s["of"][1]]
        return (a["value"], a["ci"]), (b["value"], b["ci"])
    return (a["value"], a["ci"]), (s["bound"], (s["bound"], s["bound"]))


def verdict_bar(s: dict, all_facts: dict, src: Sources) -> float:
    """The smallest relative difference a verdict may call one: the machine's spread from
    its record, or a larger floor the verdict names (its cells' own drift), as stated."""
    floors = [all_facts[k]["value"] for k in s.get("floor", []) if all_facts[k]["value"] is not None]
    return max([factmod.machine_spread(src.machine), *floors])


def verdict_within_spread(s: dict, all_facts: dict, src: Sources) -> bool:
    """Whether a verdict's source says `same` only for its bar (its intervals apart), the
    spread from the machine record, as `recompute` judges it."""
    (a, a_ci), (b, b_ci) = _sides(s, all_facts)
    return factmod.within_spread(a, a_ci, b, b_ci, verdict_bar(s, all_facts, src))


def verdict_near_bar(s: dict, all_facts: dict, src: Sources) -> bool:
    """Whether a verdict's source tells its two values apart just past its bar, the spread
    from the machine record, as `recompute` judges it."""
    (a, a_ci), (b, b_ci) = _sides(s, all_facts)
    return factmod.near_bar(a, a_ci, b, b_ci, verdict_bar(s, all_facts, src))


def fact_problems(facts: dict, src: Sources) -> list[str]:
    """Every fact computed again from its source; a fact built from other facts (a ratio,
    a verdict, a count) from their values as computed again, not as the paper states
    them, so that a verdict follows the tables, not the text."""
    problems = []
    fresh: dict[str, dict] = {}

    def compute(key: str, seen: tuple = ()) -> dict | None:
        if key in fresh:
            return fresh[key]
        fact = facts.get(key)
        if fact is None or key in seen:
            return None
        deps = [*(fact["source"].get("of") or []), *(fact["source"].get("floor") or [])]
        for dep in deps:
            if compute(dep, seen + (key,)) is None:
                problems.append(f"{key}: built from {dep}, which cannot be computed")
                fresh[key] = None
                return None
        view = {**facts, **{k: {**facts[k], **v} for k, v in fresh.items() if v is not None}}
        try:
            value, ci = recompute(fact, src, view)
        except (KeyError, LookupError, ValueError, TypeError) as exc:
            problems.append(f"{key}: cannot be computed from its source {fact['source']}: {exc}")
            fresh[key] = None
            return None
        if fact["source"]["kind"] not in ("lookup", "verdict_side"):
            ci = tuple(fact["ci"]) if fact.get("ci") else None
        elif ci is not None:
            ci = tuple(ci)
        fresh[key] = {"value": value, "ci": ci}
        if fact["kind"] == "verdict":
            fresh[key]["within_spread"] = verdict_within_spread(fact["source"], view, src)
            fresh[key]["near_bar"] = verdict_near_bar(fact["source"], view, src)
        return fresh[key]

    for key, fact in facts.items():
        got = compute(key)
        if got is None:
            continue
        value, ci = got["value"], got["ci"]
        if not _same(value, fact["value"]):
            problems.append(f"{key}: the paper says {fact['value']!r}, its source gives {value!r}")
            continue
        if "within_spread" in got and got["within_spread"] != fact.get("within_spread", False):
            problems.append(f"{key}: the paper {'notes' if fact.get('within_spread') else 'does not note'} that "
                            f"the machine's spread alone decided this verdict; its source says otherwise")
            continue
        if "near_bar" in got and got["near_bar"] != fact.get("near_bar", False):
            problems.append(f"{key}: the paper {'notes' if fact.get('near_bar') else 'does not note'} that "
                            f"this verdict was decided just past its bar; its source says otherwise")
            continue
        expected_ci = tuple(fact["ci"]) if fact.get("ci") else None
        if not _same(ci, expected_ci):
            problems.append(f"{key}: the paper's interval {expected_ci} is not its source's {ci}")
            continue
        if fact["kind"] == "number":
            text = factmod.write_value(value, fact["fmt"], fact["unit"], ci)
            if text != fact["text"]:
                problems.append(f"{key}: the paper writes {fact['text']!r} for {value!r}, which reads {text!r}")
    return problems + margin_problems(facts)


def margin_problems(facts: dict) -> list[str]:
    """A verdict's margin that its two values, as its note writes them, do not give: the
    reader computes it from those digits (`facts.finer_format`)."""
    problems = []
    for key, fact in facts.items():
        if fact["source"]["kind"] != "verdict_margin":
            continue
        verdict = fact["source"]["of"][0]
        a, b = facts.get(f"{verdict}.a"), facts.get(f"{verdict}.b") or facts.get(f"{verdict}.mark")
        if a is None or b is None:
            problems.append(f"{key}: the note of {verdict} does not write its two values")
            continue
        got = factmod.margin_as_written(a["text"], b["text"], a["unit"], fact["fmt"])
        if got != fact["text"] and a["fmt"] in factmod.FINER:
            problems.append(f"{key}: its values as written, {a['text']!r} and {b['text']!r}, differ by {got}, "
                            f"not {fact['text']!r}; write them to a digit more")
    return problems


# --- a paper's generated folder ----------------------------------------------------------------

def check_generated(generated: Path, sections: Path, tables: dict[str, pd.DataFrame], machine: dict,
                    seeds_dir: Path, studies: list[str], figures: bool = True) -> list[str]:
    """Every problem of the paper's generated parts (one folder per study, plus the shared
    parts at the top) and of the sections' fixed prose."""
    src = Sources(tables, machine, seeds_dir)
    problems: list[str] = []
    all_facts: dict = {}
    for folder in [generated, *[generated / s for s in studies]]:
        path = folder / "facts.json"
        if path.exists():
            all_facts.update(json.loads(path.read_text()))
    problems += fact_problems(all_facts, src)
    texts = {}
    for folder in [generated, *[generated / s for s in studies]]:
        for md in sorted(folder.glob("*.md")):
            texts[str(md)] = md.read_text()
            problems += prose_problems(texts[str(md)], all_facts, str(md))
    if figures:
        problems += figures_problems(generated, tables, studies)
    for qmd in sorted([sections.parent / "index.qmd", *[sections / f"{s}.qmd" for s in studies]]):
        if qmd.exists():
            text = fixed_prose(qmd)
            texts[str(qmd)] = text
            problems += prose_problems(text, all_facts, str(qmd))
    return problems + whole_text_problems(texts, all_facts)


def fixed_prose(qmd: Path) -> str:
    """A section's (or the paper's) own text, without its front matter."""
    return re.sub(r"\A---.*?\n---\n", "", qmd.read_text(), flags=re.S)


def study_problems(study: str, parts: dict[str, str], facts: dict, tables: dict[str, pd.DataFrame],
                   machine: dict) -> list[str]:
    """What `check_generated` finds in one study's parts as rendered ({part: Markdown},
    not yet written) with its facts, and in its section's fixed prose: the study's tests
    hold every data shape they render to it."""
    problems = fact_problems(facts, Sources(tables, machine, seeds_dir()))
    texts = study_texts(study, parts)
    for where, text in texts.items():
        problems += prose_problems(text, facts, where)
    return problems + whole_text_problems(texts, facts)


def study_texts(study: str, parts: dict[str, str]) -> dict[str, str]:
    """Every text of one study's section ({where: Markdown}): its rendered parts and its
    `.qmd`'s fixed prose, which the paper holds together to what it owes as a whole."""
    from parbench.paper.templates import sections_dir

    qmd = sections_dir() / f"{study}.qmd"
    return {**parts, qmd.name: fixed_prose(qmd)}


def whole_text_problems(texts: dict[str, str], facts: dict) -> list[str]:
    """What the paper's texts owe as a whole ({where: Markdown}), not sentence by sentence:
    every figure and table cited, every verdict decided just past its bar noted, and the
    spread given beside every verdict it alone decided."""
    return uncited_problems(texts) + unnoted_edge_problems(texts, facts) + unnoted_spread_problems(texts, facts)


LABEL = re.compile(r"\{#((?:fig|tbl)-[\w-]+)")
CITED = re.compile(r"@((?:fig|tbl)-[\w-]+)")


def uncited_problems(texts: dict[str, str]) -> list[str]:
    """A figure or table the text never cites ({where: Markdown}): a reader is never sent to
    it, nor told what it shows of the argument."""
    cited = {label for text in texts.values() for label in CITED.findall(text)}
    return [f"{where}: {label} is drawn but the text never cites it (@{label})"
            for where, text in texts.items() for label in LABEL.findall(text) if label not in cited]


def unnoted_edge_problems(texts: dict[str, str], facts: dict) -> list[str]:
    """A verdict decided just past its bar whose note no text gives (its margin written
    nowhere): the text left it unsaid, or said it only through what it decided (a runtime
    left out of a list of those not distinguishable), so the reader never learns that
    another run could as well have decided it the other way. Write the verdict, or a
    count that holds it; a verdict no text needs is not computed."""
    written = {m.group("key") for text in texts.values() for m in factmod.SPAN.finditer(text)}
    return [f"{fact['source']['of'][0]}: decided just past its bar, but no text writes it or a count holding it, "
            f"so its note ({key}) is never given"
            for key, fact in facts.items() if fact["source"]["kind"] == "verdict_margin" and key not in written]


def unnoted_spread_problems(texts: dict[str, str], facts: dict) -> list[str]:
    """A verdict the machine's spread (or a cell's drift) alone made "not distinguishable",
    or a count of such verdicts, written in a paragraph that never gives that spread: its
    two intervals lie apart, so the reader who looks at them reads the verdict as wrong, or
    takes it for the intervals' (`shared/_spread.md` writes the note beside it)."""
    problems = []
    for where, text in texts.items():
        for paragraph in re.split(r"\n\s*\n", text):
            keys = [m.group("key") for m in factmod.SPAN.finditer(paragraph)]
            given = {k for k in keys if (facts.get(k) or {}).get("source", {}).get("path") == factmod.SPREAD_PATH}
            for key in dict.fromkeys(keys):
                bars = _spread_bars(facts.get(key), facts)
                if bars is not None and not given and not bars & set(keys):
                    what = "was decided" if facts[key]["kind"] == "verdict" else "counts verdicts decided"
                    problems.append(f"{where}: {key} ({facts[key]['text']}) {what} by the spread alone, the intervals "
                                    f"apart, but its paragraph never gives the spread (shared/_spread.md)")
    return problems


def _spread_bars(fact: dict | None, facts: dict) -> set[str] | None:
    """The floors (a cell's drift) that may stand for the spread beside a verdict the spread
    alone decided, or beside a count of such verdicts; None for any other fact."""
    if fact is None:
        return None
    if fact["kind"] == "verdict":
        return set(fact["source"].get("floor") or []) if fact.get("within_spread") else None
    if fact["source"]["kind"] != "count_of" or fact["source"].get("equal") is None:
        return None
    counted = [facts.get(k) or {} for k in fact["source"]["of"]]
    counted = [c for c in counted if c.get("within_spread") and c["value"] == fact["source"]["equal"]]
    return {k for c in counted for k in c["source"].get("floor") or []} if counted else None


# --- the command --------------------------------------------------------------------------------

def seeds_dir() -> Path:
    """The seed documents the facts quote (docs/seeds/)."""
    from parbench import project

    return project.root() / "docs" / "seeds"


def main(args) -> int:
    from parbench import paths
    from parbench.records import finish_check

    machine = json.loads(Path(args.machine).read_text())
    tables = {Path(p).stem: pd.read_parquet(p) for p in args.tables}
    generated = Path(args.generated)
    sections = Path(args.sections or paths.PAPER_SECTIONS)
    studies = list(machine["config"]["studies"])
    problems = check_generated(generated, sections, tables, machine, seeds_dir(), studies)
    facts = sum(len(json.loads(p.read_text())) for p in [generated / "facts.json",
                                                        *[generated / s / "facts.json" for s in studies]]
                if p.exists())
    return finish_check(args.out, {"facts": facts}, problems,
                        f"parbench paper-check: {counted(len(problems), 'problem')} in the paper's text:",
                        f"parbench paper-check: {facts} facts hold against the tables; no number or comparison "
                        f"outside them")


def add_commands(sub) -> None:
    p = sub.add_parser("paper-check", help="hold the paper's every number and comparison against its tables")
    p.add_argument("--machine", required=True, help="machine.json of the run")
    p.add_argument("--generated", default="paper/_generated", help="the paper's generated folder")
    p.add_argument("--sections", help="the sections' folder (default paper/sections)")
    p.add_argument("--out", help="write the result as JSON here")
    p.add_argument("tables", nargs="*", help="the processed Parquet tables the facts read")
    p.set_defaults(func=main)


# a caption may hold fact spans (`[95%]{.fact key="..."}`): brackets one level deep
FIGURE_REF = re.compile(r"!\[(?:[^\[\]]|\[[^\[\]]*\])*\]\((?P<path>[^)]+\.svg)\)\{#(?P<label>fig-[\w-]+)")


def figures_problems(generated: Path, tables: dict[str, pd.DataFrame], studies: list[str]) -> list[str]:
    """Every figure the paper shows, held against its data (`figure_check`): it draws
    data, its panels' labels are the data under them, its legend lists only what it draws,
    and its titles name the units its tables are in."""
    from parbench import studies as registry
    from parbench.paper import figure_check

    inputs = {name: spec[1] for s in studies for name, spec in registry.get(s).figures().items()}
    width = figure_check.text_width_pt(generated.parent / "_quarto.yml")
    problems = []
    for md in sorted(generated.rglob("*.md")):
        for m in FIGURE_REF.finditer(md.read_text()):
            path = (generated.parent / m.group("path")).resolve()
            name = path.stem
            if not path.exists():
                problems.append(f"{md}: the figure {m.group('path')} does not exist")
                continue
            svg = path.read_text()
            problems += figure_check.problems(svg, name)
            problems += figure_check.type_problems(svg, name, width)
            units = set()
            for table in inputs.get(name, []):
                frame = tables.get(table)
                if frame is not None:
                    for column in ("counter_unit", "unit"):
                        if column in frame:
                            units |= set(frame[column].dropna().astype(str))
            problems += figure_check.unit_problems(svg, name, units)
    return problems
