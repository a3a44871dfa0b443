"""A study is a plug-in (docs/adding-a-study.md): its own package, rules file, config
group, paper section and report captions, known elsewhere only through the registry.
These tests check that every registered study has its places and that they agree, and
that the shared parts name no study."""

import re
from pathlib import Path

import pytest

from parbench import config as pbconfig
from parbench import paths, pipeline, studies
from parbench.paper import templates

SHARED_PARTS = ("headline", "limitations")
REPO = Path(__file__).resolve().parents[1]
NAMES = studies.names()

# The shared parts: none of them may name a study (the registry is the only place that does).
SHARED = [
    "Snakefile", "workflow/rules/common.smk", "workflow/rules/build.smk", "workflow/rules/machine.smk",
    "workflow/rules/paper.smk", "workflow/rules/study.smk", "paper/index.qmd", "src/parbench/pipeline.py", "src/parbench/config.py",
    "src/parbench/cli.py", "src/parbench/rerun.py", "src/parbench/paths.py", "src/parbench/progress.py",
    "src/parbench/probe.py", "src/parbench/figures/__init__.py", "src/parbench/paper/__init__.py",
    "src/parbench/paper/sources.py", "src/parbench/paper/format.py", "src/parbench/native/liboqs.py",
    "src/parbench/studies/base.py",
]


@pytest.fixture(params=NAMES)
def study(request):
    return studies.get(request.param)


def test_the_registry_lists_each_study_once_and_in_paper_order():
    assert NAMES == list(dict.fromkeys(NAMES))
    assert NAMES[:2] == ["sigpar", "sched"]
    with pytest.raises(KeyError, match="unknown study 'nosuch'; registered: sigpar, sched"):
        studies.get("nosuch")


def own_rules(study) -> str:
    """The study's rules file; a study on the runner's rules may have none (study.smk makes
    its rules)."""
    path = REPO / "workflow/rules" / f"{study.name}.smk"
    return path.read_text() if path.is_file() or not study.benchmark.RUNNER_RULES else ""


def test_each_study_has_its_places(study):
    name = study.name
    assert (REPO / "src/parbench/studies" / name / "__init__.py").is_file()
    assert (REPO / "src/parbench/studies" / name / "config.schema.yaml").is_file()
    # a study on the runner's rules: a default and the smoke test's cells (docs/adding-a-study.md)
    options = ("default", "smoke") if study.benchmark.RUNNER_RULES else ("default", "local", "m4", "smoke")
    for option in options:
        assert (REPO / "conf" / name / f"{option}.yaml").is_file(), option
    assert (REPO / paths.paper_section(name)).is_file()
    if not study.benchmark.RUNNER_RULES:
        assert (REPO / "workflow/rules" / f"{name}.smk").is_file()
    assert study.title and study.summary


def test_names_are_prefixed_with_the_study(study):
    prefix = f"{study.name}_"
    assert all(figure.startswith(prefix) for figure in study.figures())
    assert all(command.startswith(f"{study.name}-") for command in study.commands)
    assert study.cell_rule.startswith(prefix) and study.cell_rule in study.job_seconds
    rules = own_rules(study)
    for rule in re.findall(r"^rule (\w+):", rules, re.M):
        assert rule.startswith(prefix), rule
    if not study.benchmark.RUNNER_RULES:
        assert f"rule {study.cell_rule}:" in rules


def test_the_section_includes_every_generated_part_in_order(study):
    module = study.paper()
    section = (REPO / paths.paper_section(study.name)).read_text()
    assert section.startswith(f"# {study.title} {{#sec-{study.name}}}")
    included = re.findall(r"\{\{< include _generated/" + study.name + r"/(\w+)\.md >\}\}", section)
    # the headline and the limitations go to the paper's summary and limitations sections
    assert included == [f for f in module.FRAGMENTS if f not in SHARED_PARTS]
    assert set(SHARED_PARTS) <= set(module.FRAGMENTS)
    assert set(module.TABLES) and f"{study.name}_load" in module.TABLES
    assert set(module.REPORT_TABLES) or study.benchmark.RUNNER_RULES  # optional on the runner's rules
    for part in module.FRAGMENTS:  # every generated part is a template beside the section
        assert (REPO / paths.PAPER_SECTIONS / study.name / f"{part}.md").is_file(), part


def test_every_figure_has_a_caption_in_the_report(study):
    # its one caption, in the study's captions.yml beside its templates: one per figure,
    # and none for a figure the study does not declare
    assert list(study.benchmark.captions()) == [figure.name for figure in study.benchmark.FIGURES]
    sources = "".join(p.read_text() for p in (REPO / paths.PAPER_SECTIONS / study.name).glob("*.md"))
    for figure in study.benchmark.FIGURES:
        assert study.benchmark.captions()[figure.name].strip(), figure.name
        assert figure.label.startswith(f"fig-{study.name}-"), figure.name
    # a template places a figure by its name alone: its label and caption are the declared ones
    assert re.findall(r"figure\(([^)]*)\)", sources) == [f'"{name}"' for name in
                                                        re.findall(r'figure\("(\w+)"\)', sources)]
    assert not (REPO / "workflow/report" / study.name / "figures.rst").exists()
    # what its aggregate writes (the generic rule registers it), and what its own rules do
    tables = [(study.name, f"{t}.parquet") for t in study.benchmark.table_names()]
    tables += [(study.name, file) for file in study.benchmark.SEED_FILES]
    if not study.benchmark.RUNNER_RULES:
        rules = own_rules(study)
        assert "report(" not in rules.replace("table_report(", "")  # registered through table_report only
        tables += re.findall(r'table_report\("(\w+)", f?"([^"]+)"', rules)
    assert all(owner == study.name for owner, _ in tables)
    for _, file in tables:
        stem = file.rsplit(".", 1)[0].replace("{sched_fracsteal.TABLE}", "sched_fracsteal_frames")
        # a study's own caption (common.smk's table_caption), or the one every load table shares
        caption = "load.rst" if stem == f"{study.name}_load" else f"{study.name}/{stem.removeprefix(study.name + '_')}.rst"
        assert (REPO / "workflow/report" / caption).is_file(), caption


# Markup in a caption: it is plain text in the image's alt text (Markdown) and in the
# report's caption (reStructuredText), and a bracket would hide a figure from the paper check.
MARKUP = re.compile(r"[\[\]*`|\\]|::|\w_\b")


def test_a_caption_says_what_the_run_s_config_decides(study):
    """What a caption names in braces is filled for the run's config (the level of the
    intervals): the report, the chart's description and the paper say the same."""
    cfg = pbconfig.load("smoke")
    for figure in study.benchmark.FIGURES:
        caption = study.benchmark.caption(figure.name, cfg)
        assert "{" not in caption and "}" not in caption, figure.name
        assert study.benchmark.report_caption(figure.name, cfg).startswith(caption)
        written = study.benchmark.captions()[figure.name]
        assert "95%" not in written, figure.name  # the level is the run's, never written in
        # a caption describes the chart: a comparison is a verdict of the paper's text
        assert not templates.COMPARISONS.search(written), (figure.name, templates.COMPARISONS.search(written))
        assert not MARKUP.search(written), figure.name
    if study.name == "gil":
        drawn = study.benchmark.caption("gil_wall_time", pbconfig.load("smoke", ["gil.confidence=0.9"]))
        assert "its 90% percentile-bootstrap interval" in drawn
    if study.name == "sigpar":  # the latency sample is the run's, not the config key's name
        drawn = study.benchmark.caption("sigpar_latency", pbconfig.load("smoke", ["sigpar.max_latency_samples=4096"]))
        assert "over up to 4,096 latencies per worker" in drawn


def test_every_paper_table_has_one_caption(study):
    """A report table's caption is written once, under `tables:` in the study's
    captions.yml: the HTML table's caption and the report's (`parbench paper-fragments`
    fills both from it, tests/test_paper_fixtures.py), never a file of the workflow's."""
    assert sorted(study.benchmark.table_captions()) == sorted(study.paper().REPORT_TABLES)
    for table in study.paper().REPORT_TABLES:
        written = study.benchmark.table_captions()[table]
        assert written.strip() and "95%" not in written and not MARKUP.search(written), table
        assert not (REPO / "workflow/report" / study.name / f"{table.removeprefix(study.name + '_')}.rst").exists()
    assert not (REPO / "workflow/report" / study.name / "paper_tables.rst").exists()


def test_the_shared_rules_are_made_for_every_study_and_no_study_writes_its_own(study):
    rules = own_rules(study)
    for rule in ("aggregate", "figure", "paper"):
        assert f"rule {study.name}_{rule}:" not in rules
        assert f'f"{{_study.name}}_{rule}"' in (REPO / "workflow/rules/study.smk").read_text()


def test_a_study_rules_file_names_no_other_study(study):
    rules = own_rules(study)
    for other in NAMES:
        if other != study.name:
            assert not re.search(rf"\b{other}\b", rules), other


@pytest.mark.parametrize("path", SHARED)
def test_the_shared_parts_name_no_study(path):
    code = (REPO / path).read_text()
    # comments and docstrings may give a study as an example; code may not name one
    code = re.sub(r"#.*", "", code)
    code = re.sub(r'"""(?:.|\n)*?"""', "", code)
    for name in NAMES:
        assert not re.search(rf"""["'/.]{name}\b|\b{name}["'./]""", code), name


def test_each_study_section_of_the_config_is_validated(study):
    schema = pbconfig.schema()
    assert study.name in schema["required"] and study.name in schema["properties"]
    assert schema["properties"][study.name]["additionalProperties"] is False
    with pytest.raises(pbconfig.ConfigError, match=r"unknown key 'nosuch'.*allowed keys"):
        pbconfig.load("smoke", [f"+{study.name}.nosuch=1"])


def test_profiles_compose_the_study_option_named_after_them(tmp_path):
    conf = REPO / "conf"
    assert pbconfig.study_option("sigpar", "smoke", conf) == "smoke"
    assert pbconfig.study_option("sigpar", "mine", conf) == "default"
    smoke = pbconfig.load("smoke")
    assert smoke["sigpar"]["algorithms"] == ["ECDSA-P256", "ML-DSA-44"] and smoke["sched"]["threads"] == [1, 2]


def test_a_profile_may_override_a_study_inline_and_wins_over_its_group(tmp_path):
    conf = tmp_path / "conf"
    import shutil

    shutil.copytree(REPO / "conf", conf)
    (conf / "mine.yaml").write_text("defaults: [config, _self_]\ndescription: mine\n"
                                    "sigpar:\n  workers: [1, 3]\n  duration_sec: 4.0\n  analysis_window_sec: 3.0\n")
    cfg = pbconfig.load("mine", conf_dir=conf)
    assert cfg["sigpar"]["workers"] == [1, 3] and cfg["sigpar"]["duration_sec"] == 4.0
    assert cfg["sigpar"]["warmup_sec"] == 1.0  # the rest from conf/sigpar/default.yaml


def test_the_cells_of_all_studies_run_shuffled_together():
    cfg = pbconfig.load("smoke")
    priorities = pipeline.cell_priorities(cfg)
    order = [key for key, _ in sorted(priorities.items(), key=lambda kv: -kv[1])]
    studies_in_order = [s for s, _ in order]
    assert set(studies_in_order) == set(NAMES)
    # not study by study: some study's cells come both before and after another's
    assert studies_in_order != sorted(studies_in_order, key=NAMES.index)
    one = pbconfig.load("smoke", ["studies=[sched]"])
    assert {s for s, _ in pipeline.cell_priorities(one)} == {"sched"}


def test_the_header_and_estimate_come_from_each_active_study(capsys):
    cfg = pbconfig.load("smoke")
    sigpar_cell = {"algorithm": "Ed25519", "operation": "sign", "variant": "threading", "workers": "2", "rep": "0"}
    jobs = [("sigpar_cell", sigpar_cell), ("sched_cell", {"workload": "quicksort", "scheduler": "ws", "threads": "2"}),
            ("sched_build", {}), ("sigpar_aggregate", {}), ("all", {})]
    seconds = pipeline.run_estimate_sec(cfg, jobs)
    expected = (studies.get("sigpar").job_seconds["sigpar_cell"](cfg, sigpar_cell)
                + studies.get("sched").job_seconds["sched_cell"](cfg, jobs[1][1])
                + studies.get("sched").job_seconds["sched_build"](cfg, {}) + pipeline.OTHER_JOB_SEC)
    assert seconds == pytest.approx(expected)
    pipeline.start_run(cfg, jobs, [])
    out = capsys.readouterr().out
    assert "PARALLELISM THROUGHPUT BENCHMARK (sigpar)" in out and "SCHEDULER BENCHMARK (sched)" in out
    assert out.index("(sigpar)") < out.index("(sched)")
    assert "Cells to measure: 1 of 32 (31 already measured)" in out


def test_liboqs_is_built_for_what_the_studies_ask():
    assert pipeline.liboqs_ids(pbconfig.load("smoke")) == ["KEM_ml_kem_512", "SIG_ml_dsa_44"]
    assert pipeline.liboqs_ids(pbconfig.load("smoke", ["studies=[sched]"])) == []


def test_a_cell_is_read_from_its_jobs_wildcards_each_field_typed_as_declared():
    from types import SimpleNamespace

    from parbench.studies.kem.plan import CyclesCell, ThroughputCell
    from parbench.studies.sched.plan import SchedCell

    cell = SchedCell.from_wildcards(SimpleNamespace(workload="quicksort", scheduler="ws", threads="2", rep="1"))
    assert cell == SchedCell("quicksort", "ws", 2, 1) and isinstance(cell.threads, int)
    # a field no wildcard names keeps its default (cycles cells have no repetition wildcard)
    assert CyclesCell.from_wildcards(SimpleNamespace(implementation="liboqs", parameter_set="ML-KEM-512",
                                                     operation="encaps")).rep == 0
    point = ThroughputCell.from_wildcards(SimpleNamespace(implementation="liboqs", parameter_set="ML-KEM-768",
                                                          operation="decaps", threads="2", rep="0", extra="x"))
    assert (point.threads, point.rep) == (2, 0)
