"""The paper check on the fixture tables: the processed tables of a real local run
(tests/fixtures/paper_tables/local/, refreshed with tools/refresh_paper_fixtures.py), from
which every study's parts and the shared parts are rendered and held against the tables,
and every figure drawn from them is held against its data. (The smoke profile's paper is
checked by the pipeline itself, in the smoke run.)"""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from parbench import studies
from parbench.paper import check, figure_check, render_parts, render_study, templates
from parbench.paper.facts import SPAN, plain
from parbench.paper.sources import shared_parts

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "paper_tables" / "local"

pytestmark = pytest.mark.skipif(not (FIXTURES / "machine.json").exists(), reason="no fixture tables")


@pytest.fixture(scope="module")
def fixture():
    machine = json.loads((FIXTURES / "machine.json").read_text())
    tables = {p.stem: pd.read_parquet(p) for p in sorted(FIXTURES.glob("*.parquet"))}
    return machine, tables


@pytest.fixture(scope="module")
def rendered(fixture):
    """Every study's parts, facts and report tables' captions from the fixture tables."""
    machine, tables = fixture
    return {study.name: render_study(study.name, study.paper(), {t: tables[t] for t in study.paper().TABLES}, machine)
            for study in studies.registered()}


@pytest.fixture(scope="module")
def paper(fixture, rendered, tmp_path_factory):
    """The paper's generated folder, rendered from the fixture tables beside a copy of the
    paper's sources."""
    machine, tables = fixture
    root = tmp_path_factory.mktemp("paper")
    generated = root / "_generated"
    parts, facts = shared_parts(machine, tables)
    generated.mkdir(parents=True)
    for name, text in parts.items():
        (generated / name).write_text(text)
    (generated / "facts.json").write_text(json.dumps(facts))
    for study in studies.registered():
        study_parts, study_facts, _ = rendered[study.name]
        (generated / study.name).mkdir()
        for name, text in study_parts.items():
            (generated / study.name / f"{name}.md").write_text(text)
        (generated / study.name / "facts.json").write_text(json.dumps(study_facts))
    shutil.copytree(REPO / "paper" / "sections", root / "sections")
    shutil.copy(REPO / "paper" / "index.qmd", root / "index.qmd")
    return generated


def test_every_fact_holds_and_the_prose_states_nothing_else(fixture, paper):
    machine, tables = fixture
    problems = check.check_generated(paper, paper.parent / "sections", tables, machine, check.seeds_dir(),
                                     list(machine["config"]["studies"]), figures=False)
    assert problems == []


def test_every_figure_drawn_from_the_tables_holds_against_its_data(fixture, tmp_path):
    import vl_convert as vlc

    machine, tables = fixture
    problems, drawn = [], 0
    for study in studies.registered():
        for name, (function, inputs) in study.figures().items():
            if not all(i in tables for i in inputs):  # an image drawn from a raw file
                continue
            svg = vlc.vegalite_to_svg(function(*(tables[i] for i in inputs), machine).to_json())
            drawn += 1
            found = figure_check.problems(svg, name)
            if found == [f"{name}: draws no data (say it in a sentence instead of a figure)"]:
                continue  # not in the paper then: its text says why (energy on a VM, say)
            problems += found
            units = {u for i in inputs for c in ("counter_unit", "unit") if c in tables[i]
                     for u in tables[i][c].dropna().astype(str)}
            problems += figure_check.unit_problems(svg, name, units)
    assert drawn >= 20 and problems == []


def test_every_study_states_its_load_through_the_one_door(fixture):
    # the paper's machinery makes each study's Facts and states its load (how many
    # repetitions, how many measured again or disturbed); the study's paper module only
    # adds its own facts (`facts(f, tables)`)
    machine, tables = fixture
    for study in studies.registered():
        module = study.paper()
        assert callable(module.facts) and not hasattr(module, "context"), study.name
        _, facts = render_parts(study.name, module, {t: tables[t] for t in module.TABLES}, machine)
        assert {f"{study.name}.load_reps", f"{study.name}.load_disturbed"} <= set(facts), study.name
        assert facts[f"{study.name}.load_reps"]["source"]["table"] == f"{study.name}_load", study.name


def test_a_table_the_paper_and_the_report_both_show_has_one_caption(rendered):
    """A report table's caption is its captions.yml template filled from the study's facts:
    plain text in the report, and, where the paper shows the same table
    (`table_caption(name)` in a template), the very caption the paper gives it, with the
    paper's fact spans."""
    shared = 0
    for study in studies.registered():
        parts, _, captions = rendered[study.name]
        assert sorted(captions) == sorted(study.paper().REPORT_TABLES), study.name
        sources = "".join(p.read_text() for p in (REPO / "paper" / "sections" / study.name).glob("*.md"))
        for name, caption in captions.items():
            assert caption.strip() and not SPAN.search(caption), name
            assert not any(mark in caption for mark in ("{", "}", "[", "]", "`", "*")), (name, caption)
            if f'table_caption("{name}")' in sources:
                assert any(caption in plain(part) for part in parts.values()), name
                shared += 1
    assert shared >= 7  # kem's two, dispatch's five


def test_a_table_caption_names_no_number_of_its_own():
    # a table's caption is a template of the paper: its numbers are facts
    for study in studies.registered():
        for name, written in study.benchmark.table_captions().items():
            where = f"paper/sections/{study.name}/captions.yml: {name}"
            assert templates.lint_text(written, where) == []
            assert "95%" not in written, where
            assert "{confidence}" not in written, where  # the figures' form; a table's is {{ f.confidence }}


def test_the_level_of_a_table_caption_is_the_runs(fixture):
    machine, tables = fixture
    machine = {**machine, "config": {**machine["config"], "gil": {**machine["config"]["gil"], "confidence": 0.9}}}
    study = studies.get("gil")
    _, _, captions = render_study("gil", study.paper(), {t: tables[t] for t in study.paper().TABLES}, machine)
    assert "its 90% bootstrap interval" in captions["gil_speedup_table"]


def test_a_template_naming_a_table_caption_not_written_fails(fixture, tmp_path, monkeypatch):
    machine, tables = fixture
    study = studies.get("kem")
    sections = tmp_path / "sections"
    shutil.copytree(REPO / "paper" / "sections", sections)
    published = sections / "kem" / "published.md"
    published.write_text(published.read_text().replace('table_caption("kem_published_table")',
                                                       'table_caption("kem_nothing")'))
    monkeypatch.setattr(templates, "sections_dir", lambda: sections)
    with pytest.raises(templates.TemplateError, match="kem_nothing has no caption under tables:"):
        render_study("kem", study.paper(), {t: tables[t] for t in study.paper().TABLES}, machine)


def test_the_limitations_say_the_spread_was_probed_on_one_thread_of_a_virtual_machine(fixture):
    machine, tables = fixture
    parts, facts = shared_parts(machine, tables)
    limits = next(text for name, text in parts.items() if name.startswith("limitations"))
    assert check.fact_problems(facts, check.Sources(tables, machine, check.seeds_dir())) == []
    assert "was probed with one thread while nothing else ran" in limits
    # how often the range of the fewest repetitions holds the median: 1 - 2 * 0.5^n
    n = facts["paper.fewest_reps"]["value"]
    assert facts["paper.fewest_reps_coverage"]["value"] == pytest.approx(1 - 2 * 0.5 ** n)
    assert re.search(rf"the range of \[{n}\]\{{[^}}]*\}} repetitions holds it with a chance of \[\d+%\]", limits), limits
    # the fewest repetitions named for one study only where another planned more
    reps = {s: (machine["config"].get(s) or {}).get("repetitions") for s in ("sigpar", "sched", "dispatch", "kem", "gil")}
    reps = {s: r for s, r in reps.items() if isinstance(r, int)}
    every = len(set(reps.values())) == 1
    assert (" in every study (" in limits) == every and ("no fewer in any other" in limits) != every, (reps, limits)
    # a stall as slow as the slowest slice, in a repetition not much longer than a slice
    assert re.search(r"its slowest slice ran at \[\d+%\]\{[^}]*\} of the median speed, and a stall like that within "
                     r"a repetition lasting not much longer than a slice", limits), limits
    assert ("The machine is virtual" in limits) == bool(machine["machine"].get("virtualized"))
    steady = {**machine, "machine": {**machine["machine"], "virtualized": False}}
    assert "The machine is virtual" not in next(t for n, t in shared_parts(steady, tables)[0].items()
                                                if n.startswith("limitations"))


def test_the_method_says_when_the_stability_check_was_measured_again_or_stayed_disturbed(fixture):
    # the spread is every verdict's bar: a reader must know when the machine was busy
    # while it was measured
    machine, tables = fixture
    stab = machine["cpu_stability"]
    assert "something else kept" not in plain(shared_parts(machine, tables)[0]["run.md"])
    again = {**machine, "cpu_stability": {**stab, "attempt": 2, "disturbed": False}}
    run = plain(shared_parts(again, tables)[0]["run.md"])
    assert "on its attempt number 2: something else kept the machine busy during the earlier ones" in run, run
    busy = {**machine, "cpu_stability": {**stab, "attempt": 3, "disturbed": True, "load": {"other_cores": 1.87}}}
    parts, facts = shared_parts(busy, tables)
    assert ("though in every one of its 3 attempts something else kept the machine busy (1.87 cores on average "
            "in the last), so that spread may be that load's rather than the machine's") in plain(parts["run.md"])
    limits = plain(next(text for name, text in parts.items() if name.startswith("limitations")))
    assert "was probed with one thread while something else kept the machine busy" in limits
    src = check.Sources(tables, busy, check.seeds_dir())
    assert check.fact_problems(facts, src) == []


def test_the_method_counts_a_repetition_measured_again_that_then_could_not_run(fixture):
    """Celery's repetition was measured again for load, then could not start: the Method
    counted two repetitions measured again, among those that measured, and not that one."""
    machine, tables = fixture
    load = tables["dispatch_load"]
    failed = pd.DataFrame([{**load.iloc[0].to_dict(), "status": "unavailable", "attempts": 2}])
    cut = {**tables, "dispatch_load": pd.concat([load[load["status"] == "ok"], failed], ignore_index=True)}
    parts, facts = shared_parts(machine, cut)
    assert facts["paper.load_retried_failed"]["value"] == 1
    run = parts["run.md"]
    assert re.search(r"and \[1\]\{[^}]*\} more was measured again and then could not run at all", run), run
    clean = {**tables, "dispatch_load": load[load["status"] == "ok"]}
    assert "could not run at all" not in shared_parts(machine, clean)[0]["run.md"]


def test_reproducing_names_the_commit_that_measured_and_the_one_that_wrote_the_text(fixture):
    machine, tables = fixture
    parts, _ = shared_parts(machine, tables)
    measured = machine["git"]["git_commit"][:12]
    text = parts["reproduce.md"]
    assert f"at commit `{measured}`" in text and "make paper PROFILE=" in text and "Redis" in text
    written = re.search(r"commit `([0-9a-f]{12})` wrote this text", text)
    assert written is None or written.group(1) != measured


def test_the_m1s_published_times_stand_beside_the_portable_code_measured_here(fixture):
    """An M1 never runs AVX2: its PERFORMANCE.md times stood beside libcrux-avx2 alone."""
    from parbench.studies.kem.paper import published_table

    machine, tables = fixture
    table = published_table(tables["kem_cycles"])
    m1 = table[table["published"].str.endswith("µs")]
    assert len(m1) and m1["measured here"].str.contains(r"\(libcrux-portable\)").all(), m1["measured here"].tolist()


def test_a_studys_note_names_speak_of_its_key_columns(fixture):
    # a renamed key column would leave its NOTE_NAMES entry naming nothing, and the notes
    # would go back to the row's identifiers unnoticed
    machine, tables = fixture
    for study in studies.registered():
        module = study.paper()
        keys = {c for columns in module.KEYS.values() for c in columns}
        assert set(getattr(module, "NOTE_NAMES", {})) <= keys, study.name
        for column, words in getattr(module, "NOTE_NAMES", {}).items():
            found = {v for t in module.TABLES if t in tables and column in tables[t] for v in tables[t][column].unique()}
            if callable(words):  # a function of a row's key values names some row of a table with the column
                rows = [row for t, columns in module.KEYS.items() if column in columns and t.split("|")[0] in tables
                        for row in tables[t.split("|")[0]][[c for c in columns if c in tables[t.split("|")[0]]]]
                        .to_dict("records")]
                named = [words(row) for row in rows]
                assert all(n is None or isinstance(n, str) for n in named) and any(named), (study.name, column)
                continue
            assert words is None or set(words) & found, (study.name, column)
