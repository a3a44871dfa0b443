"""Config composition (Hydra) and validation: every bad value stops with a message that
names it and what is allowed."""

import json

import pytest

from parbench import config as pbconfig
from parbench.studies.sigpar.algorithms import CATALOG


def load(profile="local", *overrides):
    return pbconfig.load(profile, list(overrides))


def error(*overrides, profile="local"):
    with pytest.raises(pbconfig.ConfigError) as info:
        load(profile, *overrides)
    return str(info.value)


def test_profiles_compose_and_validate():
    assert {"local", "m4", "smoke"} <= set(pbconfig.list_profiles())
    for profile in ("local", "m4", "smoke"):
        cfg = load(profile)
        assert cfg["profile"] == profile
        assert cfg["sigpar"]["algorithms"]


def test_m4_is_the_seed_host():
    sp = load("m4")["sigpar"]
    assert sp["workers"] == [1, 2, 4, 6, 8, 10]
    assert (sp["duration_sec"], sp["analysis_window_sec"], sp["warmup_sec"]) == (12, 10, 1)
    tel = load("m4")["telemetry"]
    assert tel["powermetrics"]["enabled"] is True
    assert tel["cpu_affinity"]["strategy"] == "performance_first"


def test_local_worker_counts_come_from_this_machines_cores():
    cfg = load("local")
    assert cfg["sigpar"]["workers"] == pbconfig.worker_sweep(pbconfig.usable_cores())
    assert cfg["telemetry"]["cpu_affinity"]["performance_cores"] == pbconfig.available_cpus()


@pytest.mark.parametrize("cores, expected", [(1, [1]), (2, [1, 2]), (6, [1, 2, 4, 6]), (16, [1, 2, 4, 8, 16])])
def test_worker_sweep(cores, expected):
    assert pbconfig.worker_sweep(cores) == expected


def test_named_algorithm_sets():
    all_set = load("local", "algorithms=all")["sigpar"]["algorithms"]
    assert len(all_set) == 21 and "RSA-15360" not in all_set
    classical = load("local", "algorithms=classical")["sigpar"]["algorithms"]
    pqc = load("local", "algorithms=pqc")["sigpar"]["algorithms"]
    assert all(CATALOG[a].kind == "classical" for a in classical)
    assert all(CATALOG[a].kind == "pqc" for a in pqc)
    assert sorted(classical + pqc) == sorted(all_set)
    fast = load("local", "algorithms=fast")["sigpar"]["algorithms"]
    assert {CATALOG[a].family for a in fast} == {"RSA", "ECDSA", "EdDSA", "ML-DSA", "Falcon", "SPHINCS+"}
    # every set names only catalog algorithms
    for name in ("all", "classical", "pqc", "fast"):
        assert set(load("local", f"algorithms={name}")["sigpar"]["algorithms"]) <= set(CATALOG)


def test_an_explicit_list_beats_the_set():
    assert load("local", "sigpar.algorithms=[RSA-15360]")["sigpar"]["algorithms"] == ["RSA-15360"]


def test_unknown_algorithm_names_the_allowed_ones():
    msg = error("sigpar.algorithms=[RSA-1024]")
    assert "sigpar.algorithms[0]" in msg and "'RSA-1024'" in msg
    assert "RSA-2048" in msg and "SPHINCS+-SHAKE-256f-simple" in msg


def test_worker_count_below_one():
    msg = error("sigpar.workers=[1,0]")
    assert "sigpar.workers[1]" in msg and "0" in msg and ">= 1" in msg


def test_workers_must_include_one():
    assert "must include 1" in error("sigpar.workers=[2,4]")


def test_window_longer_than_duration():
    msg = error("sigpar.analysis_window_sec=30")
    assert "analysis_window_sec" in msg and "30" in msg and "duration_sec" in msg


def test_unknown_mode_and_study():
    msg = error("sigpar.modes=[threads]")
    assert "'threads'" in msg and "threading, multiprocess" in msg
    msg = error("studies=[sigpar,nosuch]")
    assert "studies[1]" in msg and "'nosuch'" in msg and "sigpar, sched" in msg


def test_misspelt_key_is_refused_with_a_suggestion():
    msg = error("+sigpar.duraton_sec=3")
    assert "unknown key 'duraton_sec'" in msg and "did you mean 'duration_sec'" in msg


def test_every_problem_is_listed_at_once():
    msg = error("sigpar.workers=[0]", "sigpar.modes=[x]")
    assert "sigpar.workers[0]" in msg and "sigpar.modes[0]" in msg


def test_unknown_algorithm_set_lists_the_options():
    msg = error("algorithms=bogus")
    assert "bogus" in msg and "classical" in msg and "pqc" in msg and "Config search path" not in msg


def test_unknown_profile():
    with pytest.raises(pbconfig.ConfigError, match="unknown profile 'nope'; allowed: .*local"):
        pbconfig.load("nope")


def test_profile_file_must_be_in_conf(tmp_path):
    outside = tmp_path / "mine.yaml"
    outside.write_text("defaults: [config]\n")
    with pytest.raises(pbconfig.ConfigError, match="must live in"):
        pbconfig.profile_from_path(outside)
    with pytest.raises(pbconfig.ConfigError, match="does not exist"):
        pbconfig.profile_from_path(tmp_path / "missing.yaml")
    assert pbconfig.profile_from_path("conf/m4.yaml") == "m4"


def test_bad_types_are_named():
    msg = error("sigpar.duration_sec=long")
    assert "sigpar.duration_sec" in msg and "'long'" in msg


def test_a_command_stops_on_a_bad_profile_naming_itself_and_the_allowed_ones():
    with pytest.raises(SystemExit) as info:
        pbconfig.load_for_command("sched-cell", "nosuch")
    assert str(info.value).startswith("parbench sched-cell: unknown profile 'nosuch'; allowed: local, m4, smoke")
    assert pbconfig.load_for_command("sched-cell", "smoke")["profile"] == "smoke"


# --- the composed config kept in data/cache/config/ ------------------------------------------

@pytest.fixture
def conf_copy(tmp_path):
    """A copy of conf/ in a folder of its own (its kept configs go beside it)."""
    import shutil

    from parbench import project

    conf = tmp_path / "conf"
    shutil.copytree(project.conf_dir(), conf)
    return conf


def kept_files(conf):
    return sorted((conf.parent / pbconfig.COMPOSED_CACHE).glob("*.json"))


def no_hydra(monkeypatch):
    def refuse(*args):
        raise AssertionError("composed with Hydra, where the kept config was expected")

    monkeypatch.setattr(pbconfig, "_compose", refuse)


def test_a_composed_config_is_kept_and_read_back_as_it_was(conf_copy, monkeypatch):
    first = pbconfig.load("smoke", ["sigpar.workers=[1]"], conf_dir=conf_copy)
    assert len(kept_files(conf_copy)) == 1
    no_hydra(monkeypatch)
    assert pbconfig.load("smoke", ["sigpar.workers=[1]"], conf_dir=conf_copy) == first


@pytest.mark.parametrize("change", ["file", "override", "cores", "studies"])
def test_anything_composition_reads_composes_it_again(conf_copy, monkeypatch, change):
    pbconfig.load("smoke", conf_dir=conf_copy)
    overrides = []
    if change == "file":
        path = conf_copy / "sigpar" / "smoke.yaml"
        path.write_text(path.read_text().replace("duration_sec: 0.8", "duration_sec: 0.9"))
    elif change == "override":
        overrides = ["sigpar.duration_sec=0.9"]
    elif change == "cores":  # the resolvers read this machine's CPUs
        monkeypatch.setattr(pbconfig, "available_cpus", lambda: list(range(7)))
    else:  # which studies compose, and the aliases of their overrides, are the code's
        import dataclasses

        before = pbconfig.composed_key("smoke", [], conf_copy.resolve())
        assert [p.stem for p in kept_files(conf_copy)] == [before]
        registered = pbconfig.studies.registered()
        renamed = [dataclasses.replace(s, override_aliases={"algos": "sigpar/algorithms"}) if s.name == "sigpar"
                   else s for s in registered]
        monkeypatch.setattr(pbconfig.studies, "registered", lambda: renamed)
        assert pbconfig.composed_key("smoke", [], conf_copy.resolve()) != before
        monkeypatch.setattr(pbconfig.studies, "registered", lambda: registered)
        monkeypatch.setattr(pbconfig.studies, "names", lambda: ["sigpar"])
        assert pbconfig.composed_key("smoke", [], conf_copy.resolve()) != before
        return
    cfg = pbconfig.load("smoke", overrides, conf_dir=conf_copy)
    assert len(kept_files(conf_copy)) == 2
    if change == "cores":
        assert cfg["telemetry"]["cpu_affinity"]["performance_cores"] == list(range(7))
    else:
        assert cfg["sigpar"]["duration_sec"] == 0.9


def test_a_config_reading_the_environment_is_never_kept(conf_copy, monkeypatch):
    override = "description=${oc.env:PARBENCH_TEST_TEXT}"
    monkeypatch.setenv("PARBENCH_TEST_TEXT", "first")
    assert pbconfig.load("smoke", [override], conf_dir=conf_copy)["description"] == "first"
    monkeypatch.setenv("PARBENCH_TEST_TEXT", "second")
    assert pbconfig.load("smoke", [override], conf_dir=conf_copy)["description"] == "second"
    assert kept_files(conf_copy) == []


@pytest.mark.parametrize("override, kept", [
    ("description=${now:%Y}", False), ("description=${hydra:runtime.cwd}", False),
    ("sigpar.workers=${worker_sweep:4}", True), ("sigpar.workers=[1,2]", True)])
def test_only_parbench_s_own_resolvers_are_kept(conf_copy, override, kept):
    # parbench's read this machine or the registry, both in the key; any other may read
    # the clock, the environment or the working folder
    assert (pbconfig.composed_key("smoke", [override], conf_copy.resolve()) is not None) == kept


def test_a_kept_config_cut_short_is_composed_again(conf_copy):
    cfg = pbconfig.load("smoke", conf_dir=conf_copy)
    (kept,) = kept_files(conf_copy)
    kept.write_text(kept.read_text()[:100])
    assert pbconfig.load("smoke", conf_dir=conf_copy) == cfg
    assert kept.read_text() == json.dumps(cfg)


def test_a_kept_config_is_still_validated_on_every_load(conf_copy):
    pbconfig.load("smoke", conf_dir=conf_copy)
    (kept,) = kept_files(conf_copy)
    doc = json.loads(kept.read_text())
    doc["sigpar"]["workers"] = [0]
    kept.write_text(json.dumps(doc))
    with pytest.raises(pbconfig.ConfigError, match=r"sigpar.workers\[0\]"):
        pbconfig.load("smoke", conf_dir=conf_copy)


def test_a_bad_override_is_refused_every_time_and_never_kept(conf_copy):
    for _ in range(2):
        with pytest.raises(pbconfig.ConfigError, match="no_such_key"):
            pbconfig.load("smoke", ["sigpar.no_such_key=1"], conf_dir=conf_copy)
    assert kept_files(conf_copy) == []
