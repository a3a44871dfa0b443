"""The sigpar section: its parts rendered from the templates and facts hold against the
tables (the paper check finds nothing), every finding names its mode, and comparisons
follow the intervals."""

import json
import re

import pandas as pd
import pytest

from parbench.paper import check, render_parts
from parbench.studies.sigpar import paper

MACHINE = {
    "profile": "test",
    "config": {"sigpar": {"warmup_sec": 0.25, "duration_sec": 2.0, "analysis_window_sec": 1.5,
                          "min_ops_per_worker": 30},
               "telemetry": {"sample_interval_sec": 0.25}, "run_order_seed": 7},
    "machine": {"logical_cores": 2},
    "libraries": {"cryptography_version": "50.0.2"},
    "capabilities": {"energy": {"available": False, "reason": "no RAPL powercap (intel-rapl:0 missing)"},
                     "temperature": {"available": False, "reason": "no sensor"}},
}
RATES = {("RSA-2048", "threading", "pyca"): 100.0, ("RSA-2048", "multiprocess", "pyca"): 110.0,
         ("Ed25519", "threading", "pyca"): 900.0, ("Ed25519", "multiprocess", "pyca"): 1000.0,
         ("Ed25519", "threading", "openssl-cffi"): 950.0, ("Ed25519", "native-threads", "native"): 1000.0,
         ("RSA-2048", "native-threads", "native"): 120.0}


def cells(status="ok", spread=0.01):
    """Cells with intervals `spread` wide around each median (as three repetitions give)."""
    rows = []
    for (algorithm, mode, backend), rate in RATES.items():
        variant = f"{mode}-{backend}" if backend == "openssl-cffi" else mode
        for op in ("sign", "verify"):
            for workers, eff in ((1, 1.0), (2, 0.9 if mode != "threading" else 0.6)):
                ops = rate * workers * eff
                rows.append({
                    "algorithm": algorithm, "family": "RSA" if algorithm.startswith("RSA") else "EdDSA",
                    "operation": op, "mode": mode, "backend": backend, "variant": variant, "workers": workers,
                    "hostname": "node", "status": status, "failure": None if status == "ok" else "a check failed",
                    "repetitions": 3, "ops_per_sec": ops, "ops_per_sec_ci_low": ops * (1 - spread),
                    "ops_per_sec_ci_high": ops * (1 + spread), "ops_per_sec_reps": [ops * (1 - spread), ops,
                                                                                     ops * (1 + spread)],
                    "scaling_efficiency": eff, "scaling_efficiency_ci_low": eff - (0.02 if workers > 1 else 0),
                    "scaling_efficiency_ci_high": eff + (0.02 if workers > 1 else 0),
                    "p99_latency_ms": 1.0 * workers, "latency_samples": 150 * workers if algorithm == "RSA-2048"
                    else 1024 * workers, "p99_latency_ms_ci_low": 0.9 * workers,
                    "p99_latency_ms_ci_high": 1.1 * workers, "window_rate_cv": 0.1, "few_ops": False,
                    "ops_per_worker": 500.0, "energy_per_op_j": None, "energy_source": None,
                    "security_bits": 112 if algorithm == "RSA-2048" else 128,
                    "openssl_version": "OpenSSL 4.0.3 29 Sep 2026", "cryptography_version": "50.0.2",
                    "backend_version": "OpenSSL 4.0.3 29 Sep 2026" if backend in ("openssl-cffi", "native")
                    else "50.0.2", "disturbed_reps": 0})
    return pd.DataFrame(rows)


def load(disturbed=False):
    rows = [{"study": "sigpar", "cell": f"c{i}", "group": "threading/pyca", "rep": i % 3, "status": "ok",
             "started_unix": 1e9 + i, "elapsed_sec": 1.0, "planned_position": i, "run_id": "r",
             "load_other_cores": 0.01 * i, "load_steal_cores": 0.0, "cell_cpu_sec": 1.0,
             "disturbed": disturbed and i == 2, "attempts": 3 if disturbed and i == 2 else 1} for i in range(4)]
    frame = pd.DataFrame(rows)
    frame["attempts"] = frame["attempts"].astype("Int64")
    frame["planned_position"] = frame["planned_position"].astype("Int64")
    return frame


def render(frame=None, load_frame=None):
    tables = {"sigpar_cells": cells() if frame is None else frame,
              "sigpar_load": load() if load_frame is None else load_frame}
    parts, facts = render_parts("sigpar", paper, tables, MACHINE)
    return parts, facts, tables


def problems(parts, facts, tables):
    return check.study_problems("sigpar", parts, facts, tables, MACHINE)


def plain(text: str) -> str:
    """The text as the reader sees it (fact spans as their text)."""
    return re.sub(r'\[([^\[\]]*)\]\{\.fact key="[^"]+"\}', r"\1", text)


def test_every_part_holds_against_the_tables():
    parts, facts, tables = render()
    assert set(parts) == set(paper.FRAGMENTS)
    assert problems(parts, facts, tables) == []


def test_a_tampered_fact_is_caught():
    parts, facts, tables = render()
    changed = tables["sigpar_cells"].copy()
    changed.loc[0, "ops_per_sec"] += 1  # the table moved under the text
    assert any("RSA-2048" in p for p in check.fact_problems(facts, check.Sources(
        {**tables, "sigpar_cells": changed}, MACHINE, check.seeds_dir())))


def test_every_throughput_finding_names_its_mode_and_ranks_only_apart_intervals():
    text = plain(render()[0]["throughput"])
    assert "in threading mode Ed25519 (900 (891–909) ops/s) was ahead of RSA-2048" in text
    assert "in multiprocess mode Ed25519 (1,000 (990–1,010) ops/s) was ahead of RSA-2048" in text
    # with overlapping intervals, no ranking
    wide = cells(spread=0.95)
    text = plain(render(wide)[0]["throughput"])
    assert "was not distinguishable on this machine from RSA-2048" in text and "ahead of" not in text


def test_the_native_runner_is_compared_not_assumed_to_bound():
    text = plain(render()[0]["throughput"])
    # Ed25519 threading pyca 900 and openssl-cffi 950 against native 1000: below it;
    # RSA-2048 threading pyca 100 against native 120: below it
    # a count of zero reads as a word ("in none", not "in 0")
    assert re.search(r"below the runner's in 6, not distinguishable on this machine from it in none and above it "
                     r"in none", text), text
    # all in one group: said once ("in all 6"), not as two groups of none
    parts, facts, tables = render(cells(spread=0.2))
    assert problems(parts, facts, tables) == []
    assert "the Python backend's rate was not distinguishable on this machine from the runner's in all 6" \
        in plain(parts["throughput"]), plain(parts["throughput"])
    faster = cells()
    faster.loc[(faster["algorithm"] == "Ed25519") & (faster["backend"] == "pyca") & (faster["mode"] == "threading"),
               ["ops_per_sec", "ops_per_sec_ci_low", "ops_per_sec_ci_high"]] = [1500.0, 1490.0, 1510.0]
    text = plain(render(faster)[0]["throughput"])
    assert "through pyca (1,500 (1,490–1,510) ops/s) was faster than the native runner" in text
    assert "the runner does not bound the Python backend" in text


def test_efficiency_and_threads_against_processes_per_mode():
    parts = {k: plain(v) for k, v in render()[0].items()}
    assert "multiprocess cells reached a median efficiency of 90%" in parts["efficiency"]
    assert "threading cells reached a median efficiency of 60%" in parts["efficiency"]
    # below the seed's threshold with the whole interval (0.58-0.62 < 0.70)
    assert "Below the seed's threshold of 70% for \"investigate\"" in parts["efficiency"]
    # threads / processes at 2 workers: 0.6 x 900 x 2 / (0.9 x 1000 x 2) = 0.60 for Ed25519 pyca
    assert "Ed25519 sign through pyca, 0.60 (0.59–0.61)" in parts["gil"] and "4 lie below it" in parts["gil"]
    assert "energy per operation is null" in parts["energy"] and "intel-rapl:0" in parts["energy"]


def test_a_ratio_below_parity_is_given_with_its_repetitions_range_and_both_modes_cpu_use():
    # RSA-2048 verify in threads at 2 workers: repetitions at 100, 120 and 150 ops/s
    # (median 120) against processes at 198, threads busy 83% of the time
    split = cells()
    cell = (split["algorithm"] == "RSA-2048") & (split["operation"] == "verify") & (split["mode"] == "threading") \
        & (split["workers"] == 2)
    split.loc[cell, ["ops_per_sec", "ops_per_sec_ci_low", "ops_per_sec_ci_high"]] = [120.0, 100.0, 150.0]
    split.loc[cell, "ops_per_sec_reps"] = pd.Series([[100.0, 120.0, 150.0]] * int(cell.sum()),
                                                    index=split.index[cell])
    split["avg_cpu_utilization"] = 0.99
    split.loc[cell, "avg_cpu_utilization"] = 0.83
    parts, facts, tables = render(split)
    assert problems(parts, facts, tables) == []
    text = plain(parts["gil"])
    assert re.search(r"RSA-2048 verify through pyca, 0\.61 \([^)]*\) \(its threading repetitions from 100 ops/s "
                     r"to 150 ops/s, against the processes' median of 198 ops/s; the threads kept their CPU busy 83% "
                     r"of the time, the processes 99%: were every busy second as productive in both, the idle time alone "
                     r"would make a ratio of 0\.84\)", text), text  # 0.83 / 0.99
    # every ratio below parity is given so; without CPU readings, the range alone
    assert text.count("its threading repetitions from") == text.split("Below parity:")[1].count(" through ")
    bare = plain(render()[0]["gil"])
    assert "its threading repetitions from" in bare and "kept their CPU busy" not in bare


def test_the_latency_part_says_how_many_samples_its_p99s_rest_on():
    parts, facts, tables = render()
    assert problems(parts, facts, tables) == []
    assert "The p99s compared rest on 150 to 2,048 latency samples a cell" in plain(parts["latency"])
    # a table from before the column: no such sentence
    bare = cells().drop(columns=["latency_samples"])
    parts, facts, tables = render(bare)
    assert problems(parts, facts, tables) == [] and "latency samples a cell" not in plain(parts["latency"])


def test_a_median_below_the_seeds_threshold_alone_names_the_threshold():
    # every threading cell at 65% with an interval holding 70%: none is below the
    # threshold with its whole interval, so the sentence naming them names it itself
    unsure = cells()
    top = (unsure["mode"] == "threading") & (unsure["workers"] == 2)
    unsure.loc[top, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = [0.65, 0.5,
                                                                                                         0.9]
    parts, facts, tables = render(unsure)
    assert problems(parts, facts, tables) == []
    text = plain(parts["efficiency"])
    assert "for \"investigate\", with the whole interval" not in text
    assert "Below the seed's threshold of 70% for \"investigate\" by the median but not distinguishable from it" \
        in text


def test_the_summary_tables_fit_the_page_with_the_interval_under_the_median():
    parts = render()[0]
    assert "{#tbl-sigpar-summary-threads}" in parts["summary"] and "{#tbl-sigpar-summary-processes}" in parts["summary"]
    # a grid table: the median, a hard line break, its interval on the next line
    assert "| 100\\" in parts["summary"] and "(99–101)" in parts["summary"]


def test_a_run_where_nothing_passed_says_so_instead_of_failing():
    parts, facts, tables = render(cells(status="failed"))
    assert "did not pass" in plain(parts["setup"])
    assert problems(parts, facts, tables) == []
    assert paper.report_tables({"sigpar_cells": cells(status="failed")})["sigpar_summary"].empty


def test_a_disturbed_repetition_is_named():
    parts, facts, tables = render(load_frame=load(disturbed=True))
    assert "stayed disturbed after every attempt" in plain(parts["setup"])
    assert problems(parts, facts, tables) == []


def test_a_repetition_measured_again_says_how_busy_its_earlier_attempts_found_the_machine():
    frame = load()
    frame.loc[1, "attempts"] = 2
    parts, facts, tables = render(load_frame=frame)
    text = plain(parts["setup"])
    # a table from before the column: the count alone
    assert "1 of 4 repetitions was measured again because the machine was too busy elsewhere;" in text, text
    frame["earlier_other_cores_max"] = [None, 0.97, None, None]
    parts, facts, tables = render(load_frame=frame)
    assert problems(parts, facts, tables) == []
    assert ("was measured again because the machine was too busy elsewhere (its earlier attempts with up to "
            "0.97 cores busy outside it)") in plain(parts["setup"])


def test_the_load_table_keeps_the_most_load_of_a_records_earlier_attempts():
    from parbench.disturbance import earlier_load, load_table

    again = {"status": "ok", "attempt": 3, "load": {"other_cores": 0.01},
             "earlier_attempts": [{"attempt": 1, "load": {"other_cores": 0.97}},
                                  {"attempt": 2, "load": {"other_cores": 0.44}}]}
    once = {"status": "ok", "attempt": 1, "load": {"other_cores": 0.02}, "earlier_attempts": []}
    assert earlier_load(again) == 0.97 and earlier_load(once) is None and earlier_load({}) is None
    table = load_table("sigpar", [again, once], lambda r: "c", lambda r: "g")
    assert table["earlier_other_cores_max"].tolist()[0] == 0.97 and pd.isna(table["earlier_other_cores_max"][1])
    assert table["earlier_other_cores_max"].dtype == float


def test_the_headline_sets_the_seeds_example_beside_ours_and_names_the_backend():
    parts = {k: plain(v) for k, v in render()[0].items()}
    # the fixture has no CFFI cell for RSA-2048 in processes: pyca stands in, and says so
    assert ("RSA-2048 signing in processes (pyca; the seed's approach, OpenSSL called through CFFI, was not "
            "measured) reached an efficiency of 90.0% (88.0%–92.0%)") in parts["headline"]
    assert "output-format example" in parts["headline"]
    assert "124.3 ops/s on one worker and 247.8 ops/s on two, an efficiency of 99.7%" in parts["headline"]
    # the example's rates are not this machine's: the one-worker cell beside it, and how many times it
    assert re.search(r"does not say that the example was measured, and its rates say more of a machine than of the "
                     r"code: one process here signed RSA-2048 at 110 \([^)]*\) ops/s, 0\.9 times the example's "
                     r"one-worker rate, so only the example's efficiency is set beside this run's\.",
                     parts["headline"]), parts["headline"]
    # beside a shortfall, the same operation with no Python at all
    assert ("Here two pyca processes did not reach twice one's throughput; the native runner, signing RSA-2048 in "
            "threads of one process with no Python at all, reached 90.0% (88.0%–92.0%), below full "
            "efficiency.") in parts["headline"]
    assert "logical cores" in parts["limitations"]
    # the test machine declares no performance and efficiency cores; the seed's 10 s window
    assert "Its cores are of one kind, so the seed's order of workers" in parts["limitations"]
    assert "The seed's analysis window is 10 s, this run's 1.5 s" in parts["limitations"]


def test_the_headline_takes_the_seeds_cffi_approach_when_it_ran():
    frame = cells()
    cffi = frame[(frame["algorithm"] == "RSA-2048") & (frame["mode"] == "multiprocess")].copy()
    cffi["backend"], cffi["variant"] = "openssl-cffi", "multiprocess-openssl-cffi"
    cffi.loc[cffi["workers"] == 2, ["scaling_efficiency", "scaling_efficiency_ci_low",
                                    "scaling_efficiency_ci_high"]] = [0.8, 0.78, 0.82]
    parts, facts, tables = render(pd.concat([frame, cffi], ignore_index=True))
    said = plain(parts["headline"])
    assert "(openssl-cffi, OpenSSL called through CFFI as the seed does) reached an efficiency of 80.0%" in said
    assert problems(parts, facts, tables) == []


def test_the_headline_prints_the_seeds_efficiency_and_ours_apart():
    """The interval's top, 99.66%, and the seed's 99.68% both printed 99.7%, as if the
    seed's lay inside the interval."""
    from parbench.paper.format import pct_format

    assert pct_format(0.997, 0.9534, 0.9991) == "pct2" and pct_format(0.97, 0.95) == "pct" and pct_format(1.0) == "pct"
    # below one percent: dispatch's efficiency range read "from 1%" beside a member's 0.69%
    assert pct_format(0.0069, 2.87) == "pct2" and pct_format(0.011, 2.87) == "pct"
    frame = cells()
    mp = (frame["algorithm"] == "RSA-2048") & (frame["mode"] == "multiprocess") & (frame["workers"] == 2)
    cut = frame.copy()
    cut.loc[mp, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = \
        [0.9661, 0.9601, 0.9966]
    parts, facts, tables = render(cut)
    said = plain(parts["headline"])
    assert "96.61% (96.01%–99.66%)" in said and "an efficiency of 99.68%" in said, said
    assert problems(parts, facts, tables) == []


def test_a_native_runner_at_full_efficiency_is_judged_against_the_processes_too():
    """The native runner's 98.6%, not distinguishable from full, read as above the processes'
    96.6% below it, though the two were not told apart."""
    frame = cells()
    native = (frame["algorithm"] == "RSA-2048") & (frame["variant"] == "native-threads") & (frame["workers"] == 2)
    assert native.any()
    for full, processes, said in (((0.99, 0.97, 1.01), (0.9, 0.89, 0.91), "above the processes' 90.0%"),
                                  ((0.99, 0.96, 1.01), (0.97, 0.96, 0.98), "not distinguishable on this machine "
                                                                           "from the processes' 97.0%")):
        cut = frame.copy()
        cut.loc[native, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = full
        mp = (cut["algorithm"] == "RSA-2048") & (cut["mode"] == "multiprocess") & (cut["workers"] == 2)
        cut.loc[mp, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = processes
        parts, facts, tables = render(cut)
        headline = plain(parts["headline"])
        assert "not distinguishable on this machine from full efficiency and " + said in headline, headline
        assert problems(parts, facts, tables) == []


@pytest.mark.parametrize("part", ["throughput", "efficiency", "latency", "gil", "backends"])
def test_the_figures_are_labelled_and_referenced(part):
    text = render()[0][part]
    assert "![" in text and "{#fig-sigpar-" in text and "@fig-sigpar-" in text


@pytest.mark.parametrize("draw", ["scaling", "latency"])
def test_the_legends_show_each_modes_dash_and_its_point(draw):
    """Keyed on one field, Vega-Lite merged the dash and shape legends into one of filled
    shapes: the lines' dashes were in no legend."""
    import vl_convert as vlc

    from parbench.paper import figure_check
    from parbench.studies.sigpar import figures

    svg = vlc.vegalite_to_svg(getattr(figures, draw)(cells(), MACHINE).to_json())
    assert ">mode (backend), line<" in svg and ">mode (backend), point<" in svg
    # each mode's dash drawn in the legend as a stroke, beside its name (the prefix cut)
    entries = re.findall(r'role-legend-symbol"[^>]*><path [^>]*stroke-dasharray="([^"]+)"[^>]*/></g>'
                         r'<g class="mark-text role-legend-label"[^>]*><text [^>]*>([^<]+)</text>', svg)
    dashes = {name: dash.split(",") for dash, name in entries}
    assert dashes == {v: [str(n) for n in figures.VARIANT_DASHES[v]] for v in set(cells()["variant"])}
    assert figure_check.problems(svg, draw) == []


def test_the_report_table_is_written_with_its_one_caption(tmp_path):
    """`parbench paper-fragments` writes the report's table as HTML under its caption from
    captions.yml, a CSV, and the same caption for Snakemake's report (RST)."""
    import json
    from types import SimpleNamespace

    from parbench import paper as paper_cli
    from parbench import studies

    for name, frame in (("sigpar_cells", cells()), ("sigpar_load", load())):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    (tmp_path / "machine.json").write_text(json.dumps(MACHINE))
    args = SimpleNamespace(study="sigpar", machine=str(tmp_path / "machine.json"), out_dir=str(tmp_path / "parts"),
                           tables_dir=str(tmp_path / "tables"),
                           tables=[str(tmp_path / f"{n}.parquet") for n in ("sigpar_cells", "sigpar_load")])
    assert paper_cli.fragments(args) == 0
    tables = {"sigpar_cells": cells(), "sigpar_load": load()}
    _, _, captions = paper_cli.render_study("sigpar", studies.get("sigpar").paper(), tables, MACHINE)
    caption = captions["sigpar_summary"]
    # the level is the facts', as plain text: no fact span outside the paper
    assert "its 95% bootstrap interval" in caption and ".fact" not in caption
    html = (tmp_path / "tables" / "sigpar_summary.html").read_text()
    assert f"<caption>{caption.replace(chr(39), '&#x27;')}</caption>" in html
    assert (tmp_path / "tables" / "sigpar_summary.rst").read_text().startswith(caption)
    assert "1 worker, ops/s" in (tmp_path / "tables" / "sigpar_summary.csv").read_text()


def _panel_axes(spec: dict) -> dict:
    """(family, operation) -> the y axis's numbers and its domain, from the chart's
    spec: a row per family (its title), a panel per operation (the top row's titles)."""
    operations = [panel["title"]["text"] for panel in spec["vconcat"][0]["hconcat"]]
    axes = {}
    for row in spec["vconcat"]:
        for op, panel in zip(operations, row["hconcat"]):
            y = panel["layer"][0]["encoding"]["y"]
            axes[(row["title"]["text"], op)] = (y["axis"]["values"], y["scale"]["domain"])
    return axes


def test_each_panel_is_numbered_over_its_own_values_alone():
    """One facet shared one list of numbers: a panel drew its neighbours' too (1.2 beside
    1.25) and could end with data past its last number. Each panel now has its own."""
    from parbench.figures import panel_log_scale
    from parbench.studies.sigpar import figures

    data = cells()
    # RSA's latencies a little apart from Ed25519's, overlapping them
    data.loc[data["family"] == "RSA", ["p99_latency_ms", "p99_latency_ms_ci_low", "p99_latency_ms_ci_high"]] *= 1.25
    axes = _panel_axes(figures.latency(data, MACHINE).to_dict())
    assert set(axes) == {(f, op) for f in ("RSA", "EdDSA") for op in ("sign", "verify")}
    for (family, op), (values, domain) in axes.items():
        rows = data[(data["family"] == family) & (data["operation"] == op)]
        own = rows[["p99_latency_ms", "p99_latency_ms_ci_low", "p99_latency_ms_ci_high"]].to_numpy().ravel()
        scale, axis = panel_log_scale(own, height=figures.PANEL_HEIGHT)
        assert values == axis.to_dict()["values"] and domain == scale.to_dict()["domain"]
        # every value drawn lies inside the axis, no further from a number than its ends
        assert domain[0] <= own.min() and own.max() <= domain[1]
    assert axes[("RSA", "sign")][0] != axes[("EdDSA", "sign")][0]


def test_each_panel_draws_what_its_titles_name():
    """The panels are drawn one by one: the figure check holds each row's family and each
    column's operation against the marks under them, as a facet's headers."""
    import vl_convert as vlc

    from parbench.paper import figure_check
    from parbench.studies.sigpar import figures

    svg = vlc.vegalite_to_svg(figures.scaling(cells(), MACHINE).to_json())
    titles = [title for title, _ in figure_check.concat_titles(svg)]
    assert titles == ["RSA", "sign", "verify", "EdDSA"]
    assert figure_check.problems(svg, "scaling") == []


def test_the_modes_are_drawn_apart_at_each_worker_count():
    """At one place, the modes' bars lay on one line and read as one bar, and a point could
    hide another (SPHINCS+ sign's native-threads under threading)."""
    from parbench.figures import PANEL_END_PX
    from parbench.studies.sigpar import figures

    data = cells()
    drawn, domain = figures.dodged(data, [1, 2])
    places = drawn.groupby(["workers", "variant"])[figures.DRAWN_X].unique()
    assert all(len(p) == 1 for p in places)  # one place per variant and worker count
    for workers, group in drawn.groupby("workers"):
        by_variant = group.groupby("variant")[figures.DRAWN_X].first()
        assert by_variant.is_unique and abs(by_variant.mean() - workers) < 1e-9
        # in the variants' order, a few pixels apart
        ordered = [by_variant[v] for v in figures.VARIANT_ORDER if v in by_variant]
        assert ordered == sorted(ordered)
        # the scale's padding takes PANEL_END_PX off each end of the panel's width
        inner = figures.PANEL_WIDTH - 2 * PANEL_END_PX
        px = (ordered[1] - ordered[0]) * inner / (domain[1] - domain[0])
        assert px == pytest.approx(figures.DODGE_PX)
    assert domain[0] <= drawn[figures.DRAWN_X].min() and drawn[figures.DRAWN_X].max() <= domain[1]
    spec = figures.scaling(data, MACHINE).to_dict()
    x = spec["vconcat"][0]["hconcat"][0]["layer"][0]["encoding"]["x"]
    assert x["field"] == figures.DRAWN_X and x["scale"]["domain"] == domain
    # the outermost points clear the panel's frame (on its edge they were half outside)
    assert x["scale"]["padding"] == PANEL_END_PX
    # the worker counts are what the axis numbers and the tooltip names
    assert spec["vconcat"][-1]["hconcat"][0]["layer"][0]["encoding"]["x"]["axis"]["values"] == [1, 2]
    assert "workers" in json.dumps(spec["vconcat"][0]["hconcat"][0]["layer"][0]["encoding"]["tooltip"])


def test_the_seeds_own_expectations_of_an_efficiency_are_judged():
    """The seed reads above 85% in threads as the GIL released, and expects SPHINCS+ at 0.65
    to 0.8; the paper tested only its 70% "investigate"."""
    parts, facts, tables = render()
    said = plain(parts["efficiency"])
    # the fixture's threading cells reach 60% at 2 workers: every one below the mark
    n = facts["sigpar.gil_released_n"]["value"]
    assert n > 0 and facts["sigpar.gil_released_above"]["value"] == 0
    assert "The seed reads an efficiency above 85% in threading mode at two to four threads as the GIL released. " \
           f"Here, in threading and threading-openssl-cffi mode at 2 workers, none of the {n} cells lay above that " \
           "mark beyond its interval and the machine's spread, and " in said, said
    # no cell near full efficiency: the count of those not told from it goes unsaid, not "0 are"
    assert "Of the 14 cells, 14 lie below full efficiency and none above it, beyond their intervals" in said, said
    assert " 0 are not distinguishable" not in said
    assert "The seed expects SPHINCS+" not in said  # the fixture has none
    assert problems(parts, facts, tables) == []


def test_a_p99_that_fell_and_an_undivided_verdict_are_said_in_full():
    # Ed25519 sign through pyca in threads: its p99 fell from 1.0 ms to 0.5 ms at 2 workers,
    # and the cell is named; every cell at full efficiency reads "all", with no "0 lie below"
    data = cells()
    fell = (data["algorithm"] == "Ed25519") & (data["operation"] == "sign") & (data["variant"] == "threading") \
        & (data["workers"] == 2)
    data.loc[fell, ["p99_latency_ms", "p99_latency_ms_ci_low", "p99_latency_ms_ci_high"]] = [0.5, 0.45, 0.55]
    parts, facts, tables = render(data)
    assert problems(parts, facts, tables) == []
    text = plain(parts["latency"])
    assert "It fell beyond both in 1: Ed25519 sign in threading mode, from 1 (0.9–1.1) ms to 0.5 (0.45–0.55) ms." \
        in text, text
    full = cells()
    two = full["workers"] == 2
    full.loc[two, ["ops_per_sec", "ops_per_sec_ci_low", "ops_per_sec_ci_high"]] = \
        full.loc[two, ["ops_per_sec", "ops_per_sec_ci_low", "ops_per_sec_ci_high"]].to_numpy() / \
        full.loc[two, ["scaling_efficiency"]].to_numpy()
    full.loc[two, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = [1.0, 0.98, 1.02]
    full["ops_per_sec_reps"] = [[r * 0.99, r, r * 1.01] for r in full["ops_per_sec"]]
    parts, facts, tables = render(full)
    assert problems(parts, facts, tables) == []
    eff = plain(parts["efficiency"])
    # "none is distinguishable" says it all: no "and none lies beyond its interval" after it
    assert re.search(r"Of the \d+ cells, none is distinguishable on this machine from full efficiency[^.]*\.", eff), eff
    assert "none lies beyond" not in eff
    assert "0 lie below it" not in eff and "0 lie below it" not in plain(parts["gil"])


def test_the_setup_names_the_liboqs_c_library_beside_liboqs_pythons_own_version():
    # liboqs-python 0.16.0.1 ran on liboqs 0.13.0: the binding's version is not the library's
    data = cells()
    data["liboqs_version"] = None
    data["liboqs_python_version"] = "0.16.0.1"
    ed = data["algorithm"] == "Ed25519"
    data.loc[ed & (data["backend"] == "pyca"), "backend"] = "liboqs-python"  # standing in for a post-quantum cell
    data.loc[data["backend"].isin(["liboqs-python", "native"]), "liboqs_version"] = "0.13.0"
    parts, facts, tables = render(data)
    assert problems(parts, facts, tables) == []
    assert ("The post-quantum algorithms ran on the liboqs C library 0.13.0, built by the pipeline from its pinned "
            "source, called through liboqs-python 0.16.0.1 (whose own version is not the library's) and by the "
            "native runner.") in plain(parts["setup"])
    assert "liboqs C library" not in plain(render()[0]["setup"])


def test_a_python_backend_the_spread_alone_keeps_from_the_native_runner_is_counted():
    # pyca's Ed25519 at 900 ops/s against the runner's 1,000 with intervals 1% wide: 10% apart,
    # within a 12% spread, the intervals apart; the count of such comparisons stood unsaid
    machine = {**MACHINE, "cpu_stability": {"cv": 0.12}}
    tables = {"sigpar_cells": cells(), "sigpar_load": load()}
    parts, facts = render_parts("sigpar", paper, tables, machine)
    found = check.fact_problems(facts, check.Sources(tables, machine, check.seeds_dir()))
    assert found == [] and all(check.prose_problems(t, facts, n) == [] for n, t in parts.items())
    text = plain(parts["throughput"])
    n = facts["sigpar.vs_native_within_spread"]["value"]
    assert n >= 1 and re.search(rf"not distinguishable on this machine from it in \d+ "
                                rf"\(((all )?{n}( of them)? )?only because (its median lies|their medians lie) "
                                r"within the machine's 12(\.0)?% spread of the runner's rate", text), text


def test_the_setup_names_the_modes_an_extra_backend_runs_in():
    # "threading-openssl-cffi mode" stood in the text with no word on what it names
    text = plain(render()[0]["setup"])
    assert ("(the classical algorithms in the Python modes also through openssl-cffi, named threading-openssl-cffi "
            "mode below, where threading and multiprocess mode name the cells through pyca)") in text, text


def test_the_headline_says_when_the_spread_alone_kept_its_efficiency_from_full():
    # 97.9% (97.3%–99.2%) was "not distinguishable from full efficiency" with no word that
    # its interval lies below full, within a 4% spread
    frame = cells()
    two = (frame["algorithm"] == "RSA-2048") & (frame["mode"] == "multiprocess") & (frame["workers"] == 2)
    frame.loc[two, ["scaling_efficiency", "scaling_efficiency_ci_low", "scaling_efficiency_ci_high"]] = \
        [0.979, 0.973, 0.992]
    machine = {**MACHINE, "cpu_stability": {"cv": 0.04}}
    tables = {"sigpar_cells": frame, "sigpar_load": load()}
    parts, facts = render_parts("sigpar", paper, tables, machine)
    assert check.fact_problems(facts, check.Sources(tables, machine, check.seeds_dir())) == []
    assert re.search(r"from one to two workers, not distinguishable on this machine from full efficiency, its median "
                     r"within the machine's 4(\.0)?% spread of it\.", plain(parts["headline"])), parts["headline"]


def test_a_python_backend_faster_than_the_runner_reads_less_not_a_negative_more():
    """"openssl-cffi ... a median −1.73 µs more per operation": a backend whose median rate
    lay above the native runner's took less time per operation, and the text says so."""
    frame = cells()
    faster = (frame["backend"] == "openssl-cffi") & (frame["workers"] == 1)
    for column in ("ops_per_sec", "ops_per_sec_ci_low", "ops_per_sec_ci_high"):
        frame.loc[faster, column] = frame.loc[faster, column] * 1050 / 950
    frame.loc[faster, "ops_per_sec_reps"] = frame.loc[faster, "ops_per_sec_reps"].map(lambda r: [x * 1050 / 950
                                                                                                 for x in r])
    parts, facts, tables = render(frame)
    assert problems(parts, facts, tables) == []
    text = plain(parts["backends"])
    # 1e6/1050 - 1e6/1000 = -47.6 µs
    assert "openssl-cffi reached a median 105% of the native runner's rate" in text, text
    assert "a median 47.6 µs less per operation" in text and "-47.6" not in text and "−47.6" not in text, text
    assert "pyca reached" in text and "µs more per operation" in text  # pyca's path still took more


def test_no_cell_above_the_seeds_mark_reads_as_none_beyond_the_interval_not_a_zero_count():
    """"0 of the 18 cells lay above that mark" read as every efficiency below 85%, though 12
    medians lay above it (their intervals holding it): none lay above it beyond its interval."""
    text = plain(render()[0]["efficiency"])
    assert ("at 2 workers, none of the 6 cells lay above that mark beyond its interval and the machine's spread, "
            "and RSA-2048 sign in threading mode (60% (58%–62%))") in text, text
    assert "0 of the" not in text
