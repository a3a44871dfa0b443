"""The kem study's Python side: cell expansion, parameters and commands, config
refusals, the seed's format (writer and parser), aggregation, the paper's text and the
figures, all on canned inputs (no binary needed)."""

import copy
import re

import pandas as pd
import pytest

from parbench import config as pbconfig
from parbench.paper.facts import plain
from parbench.studies.kem import aggregate, figures, paper, plan, seed_format, study
from parbench.studies.kem import STUDY

# The seed's README block, verbatim.
README_BLOCK = """ML-KEM-512 Benchmark Results
============================
keypair cycles = 34938
encaps cycles = 38331
decaps cycles = 43913
          percentile     1    10    20    30    40    50    60    70    80    90    99
keypair percentiles: 34129 34462 34632 34754 34848 34938 35039 35154 35286 35497 37627
encaps  percentiles: 37450 37895 38046 38152 38243 38331 38443 38547 38680 38946 43106
decaps  percentiles: 43110 43420 43591 43698 43811 43913 44016 44142 44283 44510 46454
"""


# --- plan ------------------------------------------------------------------------------------

def test_cells_cover_implementations_levels_and_operations_in_order():
    cfg = pbconfig.load("m4")
    cycles = plan.cycles_cells(cfg)
    assert len(cycles) == 4 * 3 * 3 + 2  # ML-KEM implementations x levels x operations, X25519 keypair/derive
    assert cycles[0] == plan.CyclesCell("libcrux-portable", "ML-KEM-512", "keypair")
    assert [c for c in cycles if c.implementation == "x25519"] == [
        plan.CyclesCell("x25519", "X25519", "keypair"), plan.CyclesCell("x25519", "X25519", "derive")]
    sweep = plan.throughput_cells(cfg)
    assert len(sweep) == 4 * 3 * 2 * 10 * 5 and {c.operation for c in sweep} == {"encaps", "decaps"}
    assert [c.rep for c in sweep[:240]] == [0] * 240 and {c.rep for c in sweep} == set(range(5))
    assert plan.cells(cfg) == [*cycles, *sweep]


def test_smoke_and_local_profiles():
    smoke = pbconfig.load("smoke")
    assert len(plan.cycles_cells(smoke)) == 4 * 3 + 2 and len(plan.throughput_cells(smoke)) == 4
    local = pbconfig.load("local")
    assert local["kem"]["iterations"] == 1000  # the seed's default
    assert {c.parameter_set for c in plan.throughput_cells(local)} == {"ML-KEM-768"}


def test_paths():
    cell = plan.CyclesCell("libcrux-avx2", "ML-KEM-768", "decaps")
    assert cell.record("local") == "data/raw/local/kem/cycles/libcrux-avx2/ML-KEM-768_decaps.json"
    sweep = plan.ThroughputCell("liboqs", "ML-KEM-512", "encaps", 2)
    assert sweep.record("local") == "data/raw/local/kem/throughput/liboqs/ML-KEM-512_encaps_t02_r0.json"
    again = plan.ThroughputCell("liboqs", "ML-KEM-512", "encaps", 2, 2)
    assert again.record("local") == "data/raw/local/kem/throughput/liboqs/ML-KEM-512_encaps_t02_r2.json"
    assert cell.level == 768 and plan.CyclesCell("x25519", "X25519", "derive").level is None


def test_cell_parameters_change_with_what_the_cell_measures(monkeypatch):
    monkeypatch.delenv("CYCLE_COUNTER", raising=False)
    cfg = pbconfig.load("smoke")
    cell = plan.CyclesCell("libcrux-portable", "ML-KEM-512", "encaps")
    base = plan.cell_parameters(cfg, cell)
    assert base["iterations"] == 200 and base["requested"] is None
    assert plan.cell_parameters(pbconfig.load("smoke", ["kem.iterations=300"]), cell) != base
    assert plan.cell_parameters(pbconfig.load("smoke", ["kem.cycle_counter=TIMER"]), cell)["requested"] == "TIMER"
    monkeypatch.setenv("CYCLE_COUNTER", "TSC")  # the seed's variable, honoured with `auto`
    assert plan.cell_parameters(cfg, cell)["requested"] == "TSC"
    # a thread-sweep parameter does not touch a cycles cell
    assert plan.cell_parameters(pbconfig.load("smoke", ["kem.throughput.duration_sec=9"]), cell) == \
        plan.cell_parameters(cfg, cell)


def test_binary_command_and_environment(monkeypatch):
    monkeypatch.setenv("CYCLE_COUNTER", "TIMER")
    cfg = pbconfig.load("smoke")
    cmd = plan.binary_command(cfg, plan.CyclesCell("liboqs", "ML-KEM-512", "decaps"), "bin", "out.json", "oqs")
    assert cmd[:2] == ["bin", "cycles"] and cmd[cmd.index("--iterations") + 1] == "200"
    assert cmd[cmd.index("--level") + 1] == "512" and cmd[cmd.index("--liboqs") + 1] == "oqs"
    assert cmd[-2:] == ["--json", "out.json"]
    x = plan.binary_command(cfg, plan.CyclesCell("x25519", "X25519", "derive"), "bin", "o", None)
    assert "--level" not in x and "--liboqs" not in x
    t = plan.binary_command(cfg, plan.ThroughputCell("libcrux-avx2", "ML-KEM-512", "encaps", 2), "bin", "o", None)
    assert t[1] == "throughput" and t[t.index("--threads") + 1] == "2" and t[t.index("--duration-sec") + 1] == "0.3"
    assert plan.binary_environment(cfg)["CYCLE_COUNTER"] == "TIMER"
    forced = pbconfig.load("smoke", ["kem.cycle_counter=TSC"])
    assert plan.binary_environment(forced)["CYCLE_COUNTER"] == "TSC"  # the config wins over the environment
    monkeypatch.delenv("CYCLE_COUNTER")
    assert "CYCLE_COUNTER" not in plan.binary_environment(cfg)


def test_liboqs_ids_follow_the_configured_levels():
    assert plan.liboqs_ids(pbconfig.load("smoke")) == ["KEM_ml_kem_512"]
    assert plan.liboqs_ids(pbconfig.load("local")) == ["KEM_ml_kem_1024", "KEM_ml_kem_512", "KEM_ml_kem_768"]
    no_oqs = pbconfig.load("smoke", ["kem.implementations=[libcrux-portable]"])
    assert plan.liboqs_ids(no_oqs) == []
    sweep_only = pbconfig.load("smoke", ["kem.implementations=[x25519]", "kem.throughput.implementations=[liboqs]",
                                         "kem.throughput.levels=[1024]"])
    assert plan.liboqs_ids(sweep_only) == ["KEM_ml_kem_1024"]


@pytest.mark.parametrize("override, words", [
    ("kem.levels=[256]", "kem.levels[0]: 256 is not allowed; allowed: 512, 768, 1024"),
    ("kem.implementations=[libcrux-sse]", "'libcrux-sse' is not allowed; allowed: libcrux-portable"),
    ("kem.cycle_counter=RDTSC", "'RDTSC' is not allowed; allowed: auto, PERF_CYCLES, PMU_CYCLES, MAC_CYCLES"),
    ("kem.iterations=0", "kem.iterations: 0 is too small"),
    ("kem.operations=[derive]", "'derive' is not allowed; allowed: keypair, encaps, decaps"),
    ("kem.throughput.implementations=[x25519]", "'x25519' is not allowed"),
    ("kem.throughput.threads=[2]", "kem.throughput.threads: [2] lacks 1"),
    ("kem.throughput.duration_sec=0", "kem.throughput.duration_sec"),
    ("kem.repetitions=0", "kem.repetitions: 0 is too small"),
])
def test_bad_kem_parameters_are_refused(override, words):
    with pytest.raises(pbconfig.ConfigError) as info:
        pbconfig.load("smoke", [override])
    assert words in str(info.value)


def test_the_header_counts_cells_and_names_the_counter(monkeypatch):
    monkeypatch.delenv("CYCLE_COUNTER", raising=False)
    cfg = pbconfig.load("smoke")
    jobs = [("kem_cell", {"implementation": "libcrux-avx2", "parameter_set": "ML-KEM-512", "operation": "encaps"}),
            ("kem_throughput", {"implementation": "libcrux-avx2", "parameter_set": "ML-KEM-512",
                                "operation": "encaps", "threads": "2"})]
    lines = STUDY.header(cfg, jobs)
    assert lines[0].startswith("ML-KEM CYCLE BENCHMARK (kem)")
    assert "Cycle counter: the best available" in lines[2]
    assert "Cells to measure: 2 of 18 (16 already measured)" in lines[-1]
    forced = STUDY.header(pbconfig.load("smoke", ["kem.cycle_counter=TIMER"]), [])
    assert "Cycle counter: TIMER" in forced[2]


# --- the seed's format -----------------------------------------------------------------------

def readme_statistics():
    parsed = seed_format.parse(README_BLOCK)["ML-KEM-512"]
    return [(op, parsed["medians"][op], parsed["percentiles"][op]) for op in ("keypair", "encaps", "decaps")]


def test_the_writer_reproduces_the_seeds_block_exactly():
    assert seed_format.block_from_statistics("ML-KEM-512", readme_statistics()) == README_BLOCK


def test_the_writer_from_samples_uses_the_seeds_median_and_percentile_rules():
    sample = list(range(1, 11))
    assert seed_format.median(sample) == 6 and seed_format.percentile(sample, 1) == 1
    assert seed_format.percentile(sample, 99) == 10 and seed_format.percentile(sample, 100) == 10
    # a 100-element sample whose percentile ranks hold the README's values
    rows = readme_statistics()
    ops = []
    for op, _, pcts in rows:
        sample = [0] * 100
        ranks = list(seed_format.PERCENTILES)
        for i in range(100):
            below = [p for p in ranks if p <= i]
            sample[i] = pcts[below[-1]] if below else pcts[1]
        ops.append((op, sample))
    assert seed_format.block("ML-KEM-512", ops) == README_BLOCK


def test_the_parser_reads_the_seeds_block_and_skips_the_preamble():
    text = seed_format.preamble("avx2", 5000, "Cycle counter: TSC") + "\n" + README_BLOCK
    parsed = seed_format.parse(text)
    assert list(parsed) == ["ML-KEM-512"]
    assert parsed["ML-KEM-512"]["medians"] == {"keypair": 34938, "encaps": 38331, "decaps": 43913}
    assert parsed["ML-KEM-512"]["percentiles"]["decaps"][99] == 46454


@pytest.mark.parametrize("broken, words", [
    (README_BLOCK.replace("=" * 28, "-" * 28), "not underlined"),
    (README_BLOCK.replace(" 99\n", "\n", 1), "percentile columns"),
    (README_BLOCK.replace(" 46454", ""), "decaps has 10 percentiles"),
    (README_BLOCK.replace("decaps cycles = 43913\n", ""), "medians for"),
])
def test_the_parser_refuses_a_broken_block(broken, words):
    with pytest.raises(seed_format.SeedFormatError, match=words):
        seed_format.parse(broken)


def test_wide_values_widen_every_column_and_still_parse():
    sample = [100_000 + i for i in range(100)]
    text = seed_format.block("ML-KEM-1024", [("decaps", sample)])
    lines = text.splitlines()
    assert len(lines[1]) == len("ML-KEM-1024 Benchmark Results")
    assert len(lines[3]) == len(lines[4]) and lines[4].endswith(" 100099")
    assert seed_format.parse(text)["ML-KEM-1024"]["medians"]["decaps"] == 100_050


# --- aggregation -----------------------------------------------------------------------------

TSC = {"name": "TSC", "unit": "tsc_ticks", "describe": "TSC ticks from rdtscp", "forced": False,
       "core_cycles": False, "tsc_hz": 2.0e9, "tsc_invariant": True, "ns_per_tick": 0.5, "read_overhead": 40}
PERF = {"name": "PERF_CYCLES", "unit": "cycles", "describe": "core cycles", "forced": True, "core_cycles": True,
        "tsc_hz": 2.0e9, "tsc_invariant": True, "ns_per_tick": None, "read_overhead": 900}


def cycles_record(imp, pset, op, samples, status="ok", counter=TSC, failure=None):
    s = sorted(samples)
    return {
        "profile": "test", "status": status, "failure": failure, "elapsed_sec": 0.5, "provenance": {},
        "cell": {"implementation": imp, "parameter_set": pset, "operation": op},
        "parameters": {"iterations": len(samples)},
        "result": {"counter": counter, "library": {"name": "libcrux-ml-kem", "version": "0.0.11"},
                   "checks": {"pairs_checked": len(samples), "secrets_mismatched": 0,
                              "tamper_checked": len(samples), "tamper_accepted": 0, "errors": 0},
                   "samples": samples if status == "ok" else [],
                   "median": seed_format.median(s) if s and status == "ok" else None,
                   "percentiles": {str(p): seed_format.percentile(s, p) for p in seed_format.PERCENTILES}
                   if s and status == "ok" else None},
    }


def throughput_record(imp, op, threads, per_thread_ops, status="ok"):
    return {
        "profile": "test", "status": status, "failure": None, "elapsed_sec": 2.0, "provenance": {},
        "cell": {"implementation": imp, "parameter_set": "ML-KEM-768", "operation": op, "threads": threads},
        "parameters": {},
        "result": {"warmup_sec": 0.5, "duration_sec": 2.0, "clock": "CLOCK_MONOTONIC",
                   "library": {"name": "libcrux-ml-kem", "version": "0.0.11"},
                   "checks": {"pairs_checked": 8, "secrets_mismatched": 0, "tamper_checked": 8, "tamper_accepted": 0,
                              "errors": 0},
                   "per_thread": [{"thread": i, "cpu": i, "pin_error": None, "ops_in_window": n, "ops_total": n + 5,
                                   "window_sec": 2.0} for i, n in enumerate(per_thread_ops)]},
    }


PROBE = {"profile": "test", "requested": None, "arch": "x86_64", "os": "linux",
         "preference": ["PMU_CYCLES", "PERF_CYCLES", "MAC_CYCLES", "TSC", "TIMER"],
         "selected": TSC, "provenance": {},
         "counters": [{"name": "PERF_CYCLES", "unit": "cycles", "describe": "core cycles", "available": False,
                       "reason": "perf_event_open: not supported"},
                      {"name": "PMU_CYCLES", "unit": "cycles", "describe": "core cycles", "available": False,
                       "reason": "perf_event_open: not supported"},
                      {"name": "MAC_CYCLES", "unit": "cycles", "describe": "kperf", "available": False,
                       "reason": "kperf is macOS-only"},
                      {"name": "TSC", "unit": "tsc_ticks", "describe": "TSC ticks", "available": True, "reason": None},
                      {"name": "TIMER", "unit": "ns", "describe": "ns", "available": True, "reason": None}]}


@pytest.fixture
def records():
    cycles = []
    for op, base in (("keypair", 40000), ("encaps", 42000), ("decaps", 50000)):
        cycles.append(cycles_record("libcrux-portable", "ML-KEM-512", op, [base * 2 + i for i in range(100)]))
        cycles.append(cycles_record("libcrux-avx2", "ML-KEM-512", op, [base + i for i in range(100)]))
        cycles.append(cycles_record("libcrux-neon", "ML-KEM-512", op, [], status="unavailable",
                                    failure="NEON is an aarch64 (arm64) instruction set; this CPU is x86_64"))
    cycles.append(cycles_record("x25519", "X25519", "keypair", [60000 + i for i in range(100)]))
    cycles.append(cycles_record("x25519", "X25519", "derive", [90000 + i for i in range(100)]))
    sweep = [throughput_record("libcrux-avx2", "encaps", 1, [20000]),
             throughput_record("libcrux-avx2", "encaps", 2, [19000, 17000]),
             throughput_record("libcrux-avx2", "decaps", 1, [16000]),
             throughput_record("libcrux-avx2", "decaps", 2, [16000, 16000])]
    return cycles, sweep


def test_every_row_records_its_counter_and_never_calls_tsc_ticks_cycles(records):
    tables = aggregate.study_tables(*records, PROBE)
    cycles = tables["cycles"].set_index(["implementation", "operation"])
    avx = cycles.loc[("libcrux-avx2", "encaps")]
    assert avx["counter"] == "TSC" and avx["counter_unit"] == "tsc_ticks"
    assert avx["median_ticks"] == 42050 and pd.isna(avx["median_cycles"])
    assert avx["median_ns"] == pytest.approx(42050 * 0.5)
    assert tables["percentiles"]["counter_unit"].eq("tsc_ticks").all()
    assert tables["samples"]["cycles"].isna().all() and len(tables["samples"]) == 8 * 100
    neon = cycles.loc[("libcrux-neon", "encaps")]
    assert neon["status"] == "unavailable" and pd.isna(neon["median_ticks"]) and "aarch64" in neon["failure"]
    # a core-cycle counter fills the cycles columns and leaves time unknown
    perf = aggregate.study_tables([cycles_record("libcrux-avx2", "ML-KEM-512", "encaps", [5, 6, 7], counter=PERF)],
                                  [], PROBE)["cycles"].iloc[0]
    assert perf["median_cycles"] == 6 and pd.isna(perf["median_ns"]) and perf["counter_unit"] == "cycles"


def test_the_median_carries_its_bootstrap_interval_over_the_calls(records):
    cycles = aggregate.study_tables(*records, PROBE)["cycles"].set_index(["implementation", "operation"])
    avx = cycles.loc[("libcrux-avx2", "encaps")]  # samples 42000 .. 42099
    assert 42000 <= avx["median_ci_low_ticks"] < avx["median_ticks"] < avx["median_ci_high_ticks"] <= 42099
    assert avx["median_ci_low_ns"] == pytest.approx(avx["median_ci_low_ticks"] * 0.5)
    assert pd.isna(avx["median_ci_low_cycles"])  # TSC ticks are not core cycles
    assert pd.isna(cycles.loc[("libcrux-neon", "encaps"), "median_ci_low_ticks"])  # unavailable: no interval


def test_cells_whose_intervals_overlap_are_not_ranked(records):
    cycles, sweep = copy.deepcopy(records)
    # liboqs encaps within the AVX2 code's spread: the two cannot be told apart
    cycles.append(cycles_record("liboqs", "ML-KEM-512", "encaps", [42010 + i for i in range(100)]))
    cycles.append(cycles_record("liboqs", "ML-KEM-512", "decaps", [90000 + i for i in range(100)]))
    tables, parts, facts = render((cycles, sweep))
    assert facts["kem.oqs_vs_simd.ML-KEM-512.encaps"]["value"] == paper.SAME
    assert facts["kem.oqs_vs_simd.ML-KEM-512.decaps"]["value"] == "slower than"
    assert facts["kem.lowest_encaps.ML-KEM-512"]["value"] == paper.SAME  # libcrux-avx2's median is lower
    text = parts["cycles"]
    assert "liboqs was [not distinguishable on this machine from]" in text and "ML-KEM-512 encaps ([1.000 (" in text
    assert "[slower than]" in text
    assert check(tables, parts, facts) == []
    seed = paper.seed_table_frame(tables["kem_cycles"], tables["kem_percentiles"])
    assert "95% CI" in seed.columns and seed["95% CI"].str.contains("–").all()


def test_percentile_rows_follow_the_seed(records):
    pc = aggregate.study_tables(*records, PROBE)["percentiles"]
    one = pc[(pc["implementation"] == "libcrux-avx2") & (pc["operation"] == "decaps")]
    assert one["percentile"].tolist() == list(seed_format.PERCENTILES)
    assert one.set_index("percentile").loc[99, "value_ticks"] == 50099


def test_scaling_efficiency_against_one_thread(records):
    sweep = aggregate.study_tables(*records, PROBE)["throughput"].set_index(["operation", "threads"])
    assert sweep.loc[("encaps", 1), "ops_per_sec"] == 10000
    assert sweep.loc[("encaps", 2), "ops_per_sec"] == 18000
    assert sweep.loc[("encaps", 2), "scaling_efficiency"] == pytest.approx(0.9)
    assert sweep.loc[("decaps", 2), "scaling_efficiency"] == pytest.approx(1.0)
    assert sweep["pinned"].all()
    threads = aggregate.study_tables(*records, PROBE)["threads"]
    two = threads[(threads["operation"] == "encaps") & (threads["threads"] == 2)]
    assert len(threads) == 6 and two["ops_per_sec"].tolist() == [9500, 8500]


def test_the_counter_table(records):
    counters = aggregate.study_tables(*records, PROBE)["counters"].set_index("counter")
    assert counters.loc["TSC", "selected"] and not counters.loc["TIMER", "selected"]
    assert counters.loc["PERF_CYCLES", "reason"] == "perf_event_open: not supported"
    assert counters.loc["PMU_CYCLES", "preference"] == 1


def test_the_seed_results_file(records):
    text = aggregate.seed_results(records[0])
    assert "Running ML-KEM benchmarks with avx2 implementation\nIterations per test: 100\nCycle counter: TSC" in text
    assert "ML-KEM-512 encaps: unavailable: NEON is an aarch64" in text
    parsed = seed_format.parse(text)
    assert set(parsed) == {"ML-KEM-512", "X25519"}  # titles repeat per implementation; the last wins
    blocks = text.count("ML-KEM-512 Benchmark Results")
    assert blocks == 2  # portable and avx2; neon unavailable
    assert "\n".join(text.split("avx2 implementation")[1].splitlines()[4:13]) == seed_format.block_from_statistics(
        "ML-KEM-512", [(op, b + 50, {p: b + min(p, 99) for p in seed_format.PERCENTILES})
                       for op, b in (("keypair", 40000), ("encaps", 42000), ("decaps", 50000))]).rstrip("\n")


# --- the paper and the figures ---------------------------------------------------------------

MACHINE = {"profile": "test", "machine": {"logical_cores": 2},
           "config": {"kem": {"iterations": 100, "throughput": {"warmup_sec": 0.5, "duration_sec": 2.0}}}}


def paper_tables(records):
    tables = aggregate.study_tables(*records, PROBE)
    return {f"kem_{name}": frame for name, frame in tables.items()}


def render(records, machine=MACHINE):
    """The kem section's generated parts and facts from canned records."""
    from parbench.paper import render_parts

    tables = paper_tables(records)
    parts, facts = render_parts("kem", paper, tables, machine)
    return tables, parts, facts


def check(tables, parts, facts, machine=MACHINE):
    """Every problem the paper check finds in the kem parts and the section's fixed prose."""
    from parbench.paper.check import study_problems

    return study_problems("kem", parts, facts, tables, machine)


def with_load(record, other_cores, disturbed=False, attempt=1, started=0.0):
    """A record as measured inside a LoadMeter (parbench.disturbance)."""
    record = copy.deepcopy(record)
    record.update(started_unix=started, load={"other_cores": other_cores, "steal_cores": 0.0, "cell_cpu_sec": 0.5},
                  disturbed=disturbed, attempt=attempt, earlier_attempts=[])
    return record


def full_records(records):
    """The fixture with liboqs, a repeated sweep of two implementations and a load on
    every record, one sweep repetition disturbed after its last attempt."""
    cycles, _ = copy.deepcopy(records)
    for op, base in (("keypair", 30000), ("encaps", 40000), ("decaps", 60000)):
        cycles.append(cycles_record("liboqs", "ML-KEM-512", op, [base + 3 * i for i in range(100)]))
    sweep = repeated_sweep({"libcrux-avx2": {1: [30000, 31000, 30500], 2: [60000, 61000, 59000]},
                            "liboqs": {1: [10000, 11000, 10500], 2: [18000, 19000, 17000]}})
    cycles = [with_load(r, 0.01 * i, started=i) for i, r in enumerate(cycles)]
    sweep = [with_load(r, 0.02, started=100 + i) for i, r in enumerate(sweep)]
    sweep[-1] = with_load(sweep[-1], 0.6, disturbed=True, attempt=3, started=200)
    return cycles, sweep


def test_the_kem_section_holds_against_its_tables(records):
    """The whole paper check on the kem section from canned tables: every fact recomputed
    from its source, no number or comparison outside a fact (the generated parts and the
    section's fixed prose), every template clean, every figure's panels, legend and units
    held against its data."""
    import vl_convert as vlc

    from parbench.paper import figure_check, templates
    from parbench.paper.check import prose_problems

    tables, parts, facts = render(full_records(records))
    assert list(parts) == paper.FRAGMENTS
    assert check(tables, parts, facts) == []
    section = templates.sections_dir()
    assert prose_problems((section / "kem.qmd").read_text(), facts, "kem.qmd") == []
    assert [p for t in sorted((section / "kem").glob("*.md")) for p in templates.lint(t)] == []
    for name, (fn, inputs) in STUDY.figures().items():
        svg = vlc.vegalite_to_svg(fn(*(tables[i] for i in inputs), MACHINE).to_json())
        units = {u for i in inputs for u in tables[i].get("counter_unit", pd.Series(dtype=str)).dropna()}
        assert figure_check.problems(svg, name) == [], name
        assert figure_check.unit_problems(svg, name, units) == [], name
    # the disturbed repetition is named, counted and drawn
    assert "liboqs ML-KEM-768 decaps 2t" in parts["setup"] and facts["kem.load_disturbed"]["value"] == 1
    point = tables["kem_throughput"].set_index(["implementation", "threads"]).loc[("liboqs", 2)]
    assert point["disturbed_reps"] == 1
    assert "an open red diamond marks a point with a repetition that stayed disturbed" in parts["throughput"]
    # X25519's OpenSSL is the system's, not the one the signatures study builds: two versions
    # in one paper, each said where it stands
    assert ("X25519 calls the libcrypto the system has" in parts["setup"]) == \
        ("x25519" in set(tables["kem_cycles"]["implementation"]))


def text_of(part: str) -> str:
    """A generated part without its figures (their captions)."""
    return "\n".join(line for line in part.splitlines() if not line.startswith("!["))


def test_the_paper_names_the_counter_and_its_unit(records):
    tables, parts, facts = render(records)
    assert check(tables, parts, facts) == []
    setup = parts["setup"]
    assert "**TSC** counter" in setup and "not core cycles" in setup
    assert "PERF_CYCLES ([perf_event_open: not supported]" in setup
    assert "libcrux-neon: [NEON is an aarch64" in setup
    cycles = text_of(parts["cycles"])  # the caption names every unit a counter may have
    assert "TSC ticks per call" in cycles and "core cycles" not in cycles
    # the AVX2 code took half the portable code's count, beyond both intervals
    assert facts["kem.simd_vs_portable.count.faster"]["value"] == 3
    half = facts["kem.ratio.libcrux-avx2.keypair.over.libcrux-portable.keypair.ML-KEM-512"]
    assert half["value"] == pytest.approx(40050 / 80050) and half["ci"][0] <= half["value"] <= half["ci"][1]
    assert half["text"].startswith("0.500 (")
    seed = parts["seed_table"]
    assert "{#tbl-kem-seed}" in seed and "ML-KEM-512 Benchmark Results" in seed and "libcrux-avx2" in seed
    # the unit names its counter once ("TSC ticks", never "TSC ticks of the TSC counter")
    assert "**TSC ticks**, although the seed's format calls them cycles" in seed and "TSC counter" not in seed
    assert "the seed's percentiles, in TSC ticks." in seed and "(TSC)" not in seed  # the caption, likewise
    # the sentence that names the unit stays on the page of the block it describes
    # (this run's numbers in the seed's format, never called the seed's own: those are the
    # published table's)
    assert seed.lstrip().startswith('::: {.block breakable="false"}\nThis run\'s output, in the seed\'s format')
    assert "(the numbers the seed's README gives are in @tbl-kem-published)" in seed
    # one repetition: no interval, so the efficiency is not ranked against full
    assert facts["kem.eff.libcrux-avx2.ML-KEM-768.encaps.t2"]["text"] == "90.0%"
    assert facts["kem.eff_vs_full.libcrux-avx2.ML-KEM-768.encaps"]["value"] == paper.SAME
    assert "{#tbl-kem-published}" in parts["published"] and "34,938 cycles" in parts["published"]
    headline = parts["headline"]
    assert headline.startswith("**Key exchange (@sec-kem).**")
    # a ratio of TSC ticks is one of core cycles only at one clock rate, which is said
    assert "a ratio of core cycles only if the core's clock kept one rate through both cells" in headline
    # the efficiencies' range across implementations never reads as an interval
    assert "it lay between" not in parts["throughput"]
    assert re.search(r"threads (it was |the implementations' efficiencies ranged from )\[", parts["throughput"])
    assert facts["kem.seed_decaps_over_encaps"]["text"] == "1.146"  # 43,913 / 38,331
    assert facts["kem.headline_vs_seed.libcrux-avx2"]["value"] == "above"  # 50,050 / 42,050 = 1.190
    limitations = parts["limitations"]
    assert limitations.startswith("- **Key exchange** (@sec-kem): this machine offers no core-cycle counter")
    assert "libcrux-neon cannot run on this CPU" in limitations and "logical cores" in limitations


def test_the_titles_name_the_unit_of_the_data_and_a_wrong_one_is_caught(records):
    import vl_convert as vlc

    from parbench.paper import figure_check

    tables = paper_tables(records)
    chart = figures.cycles(tables["kem_cycles"], tables["kem_percentiles"], MACHINE)
    svg = vlc.vegalite_to_svg(chart.to_json())
    assert figure_check.unit_problems(svg, "kem_cycles", {"tsc_ticks"}) == []
    wrong = vlc.vegalite_to_svg(chart.properties(title="Cycles per call by parameter set").to_json())
    problems = figure_check.unit_problems(wrong, "kem_cycles", {"tsc_ticks"})
    assert problems and "speaks of cycles but the data is in tsc_ticks" in problems[0]


def test_a_failed_cell_is_listed_not_reported(records):
    cycles, sweep = copy.deepcopy(records)
    cycles[1] = cycles_record("libcrux-avx2", "ML-KEM-512", "keypair", [], status="failed",
                              failure="3 of 100 tampered inputs gave the original secret")
    tables, parts, facts = render((cycles, sweep))
    assert check(tables, parts, facts) == []
    assert "Cells that failed their checks" in parts["setup"]
    assert "cycles libcrux-avx2 ML-KEM-512 keypair: [3 of 100 tampered inputs" in parts["setup"]
    seed = paper.seed_table_frame(tables["kem_cycles"], tables["kem_percentiles"])
    assert "keypair" not in seed["operation"].tolist()


def test_a_part_without_data_says_so_instead_of_drawing(records):
    cycles, _ = copy.deepcopy(records)
    tables, parts, facts = render((cycles, []))
    assert check(tables, parts, facts) == []
    assert "![" not in parts["throughput"] and "No thread-sweep point passed" in parts["throughput"]
    assert "thread sweep" not in parts["limitations"]


def test_every_figure_draws_from_canned_tables(records):
    tables = paper_tables(records)
    for name, (fn, inputs) in STUDY.figures().items():
        chart = fn(*(tables[i] for i in inputs), MACHINE)
        spec = chart.to_dict()
        assert spec, name
    empty = {k: v.iloc[0:0] for k, v in tables.items()}
    for name, (fn, inputs) in STUDY.figures().items():
        assert "no " in str(fn(*(empty[i] for i in inputs), MACHINE).to_dict()), name
    assert "TSC ticks" in str(figures.cycles(tables["kem_cycles"], tables["kem_percentiles"], MACHINE).to_dict())


def test_failures_of_this_run_name_the_cell_and_how_to_measure_it_again(tmp_path, monkeypatch):
    import json

    cfg = pbconfig.load("smoke")
    monkeypatch.chdir(tmp_path)
    first, second = plan.cycles_cells(cfg)[:2]
    for cell, run in ((first, "run-1"), (second, "run-0")):
        path = tmp_path / cell.record("smoke")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"run_id": run, "status": "failed", "failure": "1 of 5 shared-secret pairs "
                                                                                    "did not match"}))
    from parbench.studies.kem import STUDY

    lines = STUDY.failures(cfg, "run-1")
    assert lines == [f"FAILED: kem {first.label}: 1 of 5 shared-secret pairs did not match (measure it again: "
                     f"snakemake report --configfile conf/smoke.yaml --forcerun {first.record('smoke')})"]


# --- repetitions -----------------------------------------------------------------------------

def repeated_sweep(rates):
    """Thread-sweep records of libcrux-avx2 and liboqs decaps, rates[imp][threads] one
    total per repetition (split over the threads)."""
    out = []
    for imp, points in rates.items():
        for threads, totals in points.items():
            for rep, total in enumerate(totals):
                record = throughput_record(imp, "decaps", threads, [total * 2.0 / threads] * threads)
                record["cell"]["rep"] = rep
                out.append(record)
    return out


def test_the_sweep_is_the_median_of_repetitions_with_bootstrap_intervals(records):
    from parbench.stats import bootstrap_median_ci, bootstrap_ratio_ci

    sweep = repeated_sweep({"libcrux-avx2": {1: [10000, 11000, 10500], 2: [18000, 19000, 17000]}})
    tables = aggregate.study_tables(records[0], sweep, PROBE)
    reps = tables["throughput_reps"]
    assert len(reps) == 6 and sorted(reps["rep"].unique()) == [0, 1, 2]
    assert sorted(tables["threads"]["rep"].unique()) == [0, 1, 2]
    two = tables["throughput"].set_index("threads").loc[2]
    assert two["repetitions"] == 3 and two["ops_per_sec"] == pytest.approx(18000)
    assert (two["ops_per_sec_ci_low"], two["ops_per_sec_ci_high"]) == \
        pytest.approx(bootstrap_median_ci([18000, 19000, 17000]))
    assert two["speedup_vs_one_thread"] == pytest.approx(18000 / 10500)
    low, high = bootstrap_ratio_ci([18000, 19000, 17000], [10000, 11000, 10500])
    assert (two["scaling_efficiency_ci_low"], two["scaling_efficiency_ci_high"]) == pytest.approx((low / 2, high / 2))
    assert two["pairs_checked"] == 3 * 8  # the checks add up over the repetitions


def test_the_linear_lines_are_drawn_over_the_measured_ones(records):
    """An implementation that scales linearly has its line where its linear line is: drawn
    under it, or in its own colour, the dashes the subtitle names would not show."""
    sweep = repeated_sweep({"libcrux-avx2": {1: [10000, 11000, 10500], 2: [20000, 22000, 21000]}})
    tables = aggregate.study_tables(records[0], sweep, PROBE)
    spec = figures.throughput(tables["throughput"], MACHINE).to_dict()
    layers = spec["spec"]["layer"]
    lines = [i for i, layer in enumerate(layers) if layer["encoding"].get("y", {}).get("field") == "ops_per_sec"
             and layer["mark"]["type"] == "line"]
    [linear] = [i for i, layer in enumerate(layers) if layer["encoding"].get("y", {}).get("field") == "linear"]
    assert lines and linear > max(lines)
    assert "color" not in layers[linear]["encoding"] and layers[linear]["mark"]["strokeDash"]
    assert "dashed grey: linear scaling" in str(spec["title"])


def test_the_paper_ranks_implementations_only_when_intervals_tell_them_apart(records):
    apart = repeated_sweep({"libcrux-avx2": {1: [30000, 31000, 30500], 2: [60000, 61000, 59000]},
                            "liboqs": {1: [10000, 11000, 10500], 2: [18000, 19000, 17000]}})
    tables, parts, facts = render((records[0], apart))
    assert check(tables, parts, facts) == []
    assert facts["kem.sweep_rank.ML-KEM-768.decaps.t2"]["value"] == "faster than"
    assert "libcrux-avx2 ([60,000 (" in parts["throughput"] and "was [faster than]" in parts["throughput"]
    close = repeated_sweep({"libcrux-avx2": {1: [10000, 11000, 10500], 2: [18000, 19500, 17000]},
                            "liboqs": {1: [10000, 11000, 10500], 2: [18500, 19000, 17500]}})
    tables, parts, facts = render((records[0], close))
    assert check(tables, parts, facts) == []
    assert facts["kem.sweep_rank.ML-KEM-768.decaps.t2"]["value"] == paper.SAME
    assert "[not distinguishable on this machine from]" in parts["throughput"]
    assert facts["kem.repetitions"]["value"] == 3


def test_where_the_sweep_and_the_cost_per_call_disagree_the_paper_says_how_they_differ(records):
    """liboqs slower than libcrux-avx2 per call, the two not distinguishable in the sweep
    at one thread: set side by side, with how each was measured; where they agree, nothing."""
    cycles, _ = copy.deepcopy(records)
    cycles.append(cycles_record("libcrux-avx2", "ML-KEM-768", "decaps", [50000 + i for i in range(100)]))
    cycles.append(cycles_record("liboqs", "ML-KEM-768", "decaps", [62000 + i for i in range(100)]))
    close = repeated_sweep({"libcrux-avx2": {1: [10000, 11000, 10500]}, "liboqs": {1: [10100, 10900, 10600]}})
    tables, parts, facts = render((cycles, close))
    assert check(tables, parts, facts) == []
    assert facts["kem.oqs_vs_simd.ML-KEM-768.decaps"]["value"] == "slower than"
    assert facts["kem.sweep_rank.ML-KEM-768.decaps.t1"]["value"] == paper.SAME
    text = parts["throughput"]
    assert ('The cost per call (@sec-kem-cycles) compares these two differently on ML-KEM-768 decaps: it found '
            'liboqs [slower than]{.fact key="kem.oqs_vs_simd.ML-KEM-768.decaps"} libcrux-avx2') in text
    assert "cannot tell which of these differences" in text
    agree = repeated_sweep({"libcrux-avx2": {1: [30000, 31000, 30500]}, "liboqs": {1: [10000, 11000, 10500]}})
    tables, parts, facts = render((cycles, agree))
    assert check(tables, parts, facts) == [] and "compares these two differently" not in parts["throughput"]


def test_the_load_table_covers_cycles_cells_and_sweep_repetitions(records):
    cycles, sweep = full_records(records)
    cycles[0] = with_load(cycles[0], 0.7, disturbed=True, attempt=3)
    tables = aggregate.study_tables(cycles, sweep, PROBE)
    load = tables["load"]
    assert len(load) == len(cycles) + len(sweep) and set(load["study"]) == {"kem"}
    assert set(load["group"]) == {"libcrux-portable", "libcrux-avx2", "libcrux-neon", "liboqs", "x25519"}
    assert "libcrux-portable ML-KEM-512 keypair" in set(load["cell"]) and "liboqs ML-KEM-768 decaps 2t" in set(
        load["cell"])
    assert load.set_index(["cell", "rep"]).index.is_unique  # the paper's key of the table
    assert load["disturbed"].sum() == 2 and load["attempts"].max() == 3
    first = tables["cycles"].set_index(["implementation", "operation"]).loc[("libcrux-portable", "keypair")]
    assert bool(first["disturbed"])
    assert tables["throughput"]["disturbed_reps"].tolist() == [0, 0, 0, 1]


def test_the_console_line_names_the_repetition():
    record = throughput_record("liboqs", "decaps", 2, [100, 100])
    record["kind"] = "throughput"
    record["cell"]["rep"] = 1
    assert study.progress_line(record, 3).endswith("ops/s [rep 2/3]")
    assert study.progress_line(record, 1).endswith("ops/s")


def test_a_wrapped_panel_titled_with_another_panels_name_is_caught(records):
    """The cost figure puts two panels a row (a wrapped facet): the figure check holds
    each panel's title against the operation its bars carry."""
    import re

    import vl_convert as vlc

    from parbench.paper import figure_check

    tables = paper_tables(records)
    svg = vlc.vegalite_to_svg(figures.cycles(tables["kem_cycles"], tables["kem_percentiles"], MACHINE).to_json())
    assert figure_check.problems(svg, "kem_cycles") == []
    # swap two panel titles, as a header sorted apart from its data would
    swapped = re.sub(r">(keypair|encaps)</text>", lambda m: ">" + {"keypair": "encaps", "encaps": "keypair"}[
        m.group(1)] + "</text>", svg)
    problems = figure_check.problems(swapped, "kem_cycles")
    assert any("the panel titled 'encaps' draws operation ['keypair']" in p for p in problems), problems


def test_with_a_core_cycle_counter_the_counts_are_core_cycles(records):
    cycles, sweep = copy.deepcopy(records)
    for r in cycles:
        r["result"]["counter"] = PERF
    probe = copy.deepcopy(PROBE)
    probe["selected"] = PERF
    for c in probe["counters"]:
        if c["name"] == "PERF_CYCLES":
            c.update(available=True, reason=None)
    tables = {f"kem_{name}": frame for name, frame in aggregate.study_tables(cycles, sweep, probe).items()}
    from parbench.paper import render_parts

    parts, facts = render_parts("kem", paper, tables, MACHINE)
    assert check(tables, parts, facts) == []
    cycles = text_of(parts["cycles"])  # the caption names every unit a counter may have
    assert "core cycles per call" in cycles and "TSC" not in cycles
    assert " ns" not in cycles  # core cycles do not convert to time
    assert "as many core cycles" in parts["headline"]
    assert "no core-cycle counter" not in parts["limitations"] and "core cycles of the PERF_CYCLES" in parts[
        "limitations"]
    assert "although the seed's format calls them cycles" not in parts["seed_table"]


def test_a_cells_drift_within_its_run_is_measured_and_bars_a_ranking():
    from parbench.studies.kem.aggregate import half_drift

    # the second half of the calls 3% slower than the first: the interval over all calls
    # is narrow, the drift is not
    assert half_drift([100.0] * 500 + [103.0] * 500) == pytest.approx(0.03, rel=0.02)
    assert half_drift([100.0, 101.0] * 500) == 0.0 and half_drift([100.0]) is None



def test_the_counters_step_and_read_are_said_where_they_shape_the_counts(records):
    from parbench.studies.kem.aggregate import tick_step

    assert tick_step([26, 52, 78 * 3]) == 26 and tick_step([100, 101]) == 1 and tick_step([]) is None
    # the fixture's counts step by one tick: only the read is said
    tables, parts, facts = render(records)
    assert check(tables, parts, facts) == []
    text = re.sub(r'\[([^\[\]]*)\]\{\.fact key="[^"]+"\}', r"\1", parts["setup"])
    assert "Every count includes one read of the counter, not subtracted: 40 TSC ticks here" in text, text
    assert "advanced in steps" not in text
    assert "never reaches beyond" not in text  # one repetition: no interval to speak of
    # a counter that advances 26 ticks at a time, as a virtual TSC may
    cycles, sweep = records
    stepped = [dict(r, result=dict(r["result"], samples=[26 * x for x in r["result"]["samples"]]))
               if r["status"] == "ok" and r["result"].get("samples") else r for r in cycles]
    tables, parts, facts = render((stepped, sweep))
    assert check(tables, parts, facts) == []
    assert 'The counter advanced in steps of [26]{.fact key="kem.step.min"} TSC ticks here' in parts["setup"]


def test_cycles_verdicts_take_the_cells_drift_as_a_floor_and_the_setup_states_it(records):
    tables, parts, facts = render(records)
    assert check(tables, parts, facts) == []
    verdicts = [v for k, v in facts.items() if v["kind"] == "verdict" and ".lowest_encaps." in k]
    assert verdicts and all(len(v["source"]["floor"]) == 2 for v in verdicts)
    # the headline's ratio against the seed's is barred by its two cells' drift too
    seed = [v for k, v in facts.items() if ".headline_vs_seed." in k]
    assert seed and all(len(v["source"]["floor"]) == 2 for v in seed)
    assert "Within its one run, the medians of a cell's first and second half of calls differed by" in parts["setup"]
    assert "ranked only where they differ by more than either one's drift" in parts["setup"]



def test_where_the_seeds_ratio_lies_between_backends_the_headline_names_its_default(records):
    cycles, sweep = records
    # libcrux-avx2's decapsulation at 1.05 times its encapsulation, below the seed's 1.146;
    # the portable code's at 1.19, above it
    low = [cycles_record("libcrux-avx2", "ML-KEM-512", "decaps", [44000 + i for i in range(100)])
           if r["cell"]["implementation"] == "libcrux-avx2" and r["cell"]["operation"] == "decaps" else r
           for r in cycles]
    tables, parts, facts = render((low, sweep))
    assert check(tables, parts, facts) == []
    head = parts["headline"]
    assert "its ratio lies between those of libcrux-avx2 and libcrux-portable here" in head, head
    assert "The seed's README names the portable code its default; if the example ran that, the portable code's " \
           "ratio on ML-KEM-512 here, [1.190" in head
    assert '[above]{.fact key="kem.headline_vs_seed.libcrux-portable"} the example\'s.' in head


def test_backends_the_spread_alone_keeps_from_the_seeds_ratio_say_so_where_they_are_stated(records):
    # on a machine with a 10% spread, avx2's 1.05 and portable's 1.19 both lie within it of
    # the seed's 1.146, their intervals apart: the list read "libcrux-avx2, its median
    # within ..., libcrux-portable, its median within ... could not be told apart"; then a
    # second sentence stated both ratios and verdicts again with the spread, the first
    # without it
    cycles, sweep = records
    low = [cycles_record("libcrux-avx2", "ML-KEM-512", "decaps", [44000 + i for i in range(100)])
           if r["cell"]["implementation"] == "libcrux-avx2" and r["cell"]["operation"] == "decaps" else r
           for r in cycles]
    tables, parts, facts = render((low, sweep), {**MACHINE, "cpu_stability": {"cv": 0.10}})
    assert check(tables, parts, facts, {**MACHINE, "cpu_stability": {"cv": 0.10}}) == []
    head = plain(parts["headline"])
    assert re.search(r"libcrux-avx2 took 1\.0\d+ \([^)]*\) times .* from the ratio of the seed's example, 1\.146 \(.*\), its "
                     r"median within the machine's 10(\.0)?% spread of the seed's ratio; libcrux-portable took "
                     r"1\.19\d* \([^)]*\) times, not distinguishable, by this run's interval and this machine's spread, "
                     r"from the seed's, its median within the machine's 10(\.0)?% spread of it\.", head), head
    assert head.count("1.146") == 1 and "could not be told apart" not in head, head


def test_the_seeds_table_says_when_a_cell_it_shows_drifted_within_its_run(records):
    # libcrux-avx2's ML-KEM-512 keypair: its second half of calls 15% above its first (14% of the
    # median), on a machine whose spread is 2%: its interval over the calls is narrow, its drift not
    cycles, sweep = records
    machine = {**MACHINE, "cpu_stability": {"cv": 0.02}}
    drifting = [cycles_record("libcrux-avx2", "ML-KEM-512", "keypair", [20000.0 + i for i in range(50)]
                              + [23000.0 + i for i in range(50)])
                if (r["cell"]["implementation"], r["cell"]["parameter_set"], r["cell"]["operation"])
                == ("libcrux-avx2", "ML-KEM-512", "keypair") else r for r in cycles]
    tables, parts, facts = render((drifting, sweep), machine)
    assert check(tables, parts, facts, machine) == []
    seed = plain(parts["seed_table"])
    assert re.search(r"Within its one run, the medians of the first and the second half of the keypair calls of libcrux-avx2 "
                     r"differed by 1[345]\.\d% of their cell's median, where the machine's spread is 2\.0%: a drift the "
                     r"interval over the calls does not show\.", seed), seed
    steady = render(records, machine)[1]["seed_table"]
    assert "Within its one run" not in steady
