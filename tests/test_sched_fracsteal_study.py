"""The explorer's part of the sched study, Python side: the zoom's parameters, command,
estimate and config refusals, the tidy table and its summary on canned records, the
strip of frames, the figures and the paper text, and one real zoom job (the headless
build on tiny frames) with its table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from parbench import config as pbconfig
from parbench.figures.ppm import read_ppm
from parbench.studies.sched import STUDY, figures, fracsteal, fracsteal_cell, fracsteal_tables, paper, plan

REPO = Path(__file__).resolve().parents[1]


# ---- plan ---------------------------------------------------------------------------------

def test_script_frames_counts_what_renders():
    text = "# c\nview 0 0 1\nframe\nrepeat 3 move 0.1 0  # three\nzoomto 0 0 0.1 5\nrepeat 2 zoomto 0 0 1 4\n" \
           "scheme ember\niterations 9\ndrag 1 2\nzoom 2 3 4\n"
    assert fracsteal.script_frames(text) == 1 + 3 + 5 + 8 + 1 + 1
    for profile, frames in (("local", 24), ("smoke", 8)):
        assert fracsteal.frame_count(pbconfig.load(profile)) == frames


def test_threads_default_to_the_largest_thread_count():
    cfg = pbconfig.load("m4")
    assert fracsteal.threads(cfg) == 10
    assert fracsteal.threads(pbconfig.load("m4", ["sched.fracsteal.threads=3"])) == 3


def test_the_command_carries_the_profile_parameters():
    cfg = pbconfig.load("local", ["sched.fracsteal.width=200", "sched.fracsteal.strip_frames=3"])
    cmd = fracsteal.command(cfg, "bin", "out", "r.json")
    assert cmd[0] == "bin" and cmd[cmd.index("--script") + 1].endswith(cfg["sched"]["fracsteal"]["script"])
    assert cmd[cmd.index("--width") + 1] == "200" and cmd[cmd.index("--save-frames") + 1] == "3"
    assert cmd[cmd.index("--threads") + 1] == str(max(cfg["sched"]["threads"]))
    assert cmd[cmd.index("--out") + 1] == "out" and cmd[cmd.index("--json") + 1] == "r.json"
    # the rounds after the first write no frames
    later = fracsteal.command(cfg, "bin", None, "r.json")
    assert "--out" not in later and "--save-frames" not in later and later[-2:] == ["--json", "r.json"]


def test_the_zoom_parameters_leave_the_cells_alone():
    """Changing the explorer's settings reruns the zoom, never a sched cell."""
    base, changed = pbconfig.load("local"), pbconfig.load("local", ["sched.fracsteal.width=200"])
    assert fracsteal.parameters(base) != fracsteal.parameters(changed)
    for cell in plan.cells(base):
        assert plan.cell_parameters(base, cell) == plan.cell_parameters(changed, cell)
    # and the driver build does not compile fracsteal's sources
    assert not any("fracsteal" in s for s in
                   [str(p.relative_to(REPO)) for d in ("lib", "workloads", "driver")
                    for p in (REPO / "native/sched" / d).rglob("*")])


def test_estimate_and_header():
    cfg = pbconfig.load("smoke")
    one = cfg["sched"]["fracsteal"]["estimate_sec"]
    assert fracsteal.estimate_sec(cfg) == pytest.approx(fracsteal.OVERHEAD_SEC + 8 * (one / 2 + one))
    seconds = STUDY.job_seconds()
    assert seconds["sched_fracsteal_zoom"](cfg, {}) == fracsteal.estimate_sec(cfg)
    lines = STUDY.header(cfg, [("sched_fracsteal_zoom", {})])
    assert lines[-1].startswith("Explorer zoom (fracsteal): seahorse_zoom_short.fss, 8 frames of 320x180 on "
                                "ws_sync with 2 threads")
    assert "already measured" in STUDY.header(cfg, [])[-1]
    # every round of the zoom counts
    local = pbconfig.load("local")
    one = local["sched"]["fracsteal"]["estimate_sec"]
    assert fracsteal.estimate_sec(local) == pytest.approx(fracsteal.OVERHEAD_SEC + 3 * 24 * (one / 2 + one))
    assert "each also rendered sequentially, 3 rounds;" in STUDY.header(local, [("sched_fracsteal_zoom", {})])[-1]


@pytest.mark.parametrize("override, words", [
    ("sched.fracsteal.script=nope.fss", "sched.fracsteal.script: no such file 'nope.fss'"),
    ("sched.fracsteal.width=0", "sched.fracsteal.width: 0 is too small"),
    ("sched.fracsteal.height=20000", "sched.fracsteal.height: 20000 is too large"),
    ("sched.fracsteal.threads=0", "sched.fracsteal.threads: 0 is too small"),
    ("sched.fracsteal.strip_frames=13", "sched.fracsteal.strip_frames: 13 is too large; allowed: <= 12"),
    ("+sched.fracsteal.colour=1", "sched.fracsteal: unknown key 'colour'"),
])
def test_bad_fracsteal_parameters_are_refused(override, words):
    with pytest.raises(pbconfig.ConfigError) as info:
        pbconfig.load("local", [override])
    assert words in str(info.value)


# ---- table, summary, paper, figures on canned records ----------------------------------------

def record(times, status="ok", images=(0, 2), rounds=None):
    """A canned zoom record: `times` (parallel, sequential) per frame, in one round, or
    `rounds`: such a list per round."""
    def frames(times, rep):
        return [{"frame": i, "line": 3, "command": "zoomto -0.7453 0.1127 0.0125 2", "center_x": -0.75,
                 "center_y": 0.01 * i, "view_width": 3.5 / (i + 1), "magnification": float(i + 1), "max_iter": 1000,
                 "scheme": "seahorse", "parallel_time_s": par, "sequential_time_s": seq, "identical": True,
                 "image": f"frame_{i:04d}.ppm" if i in images and rep == 0 else None,
                 "counters": {"tasks_spawned": 40, "tasks_executed": 40, "steal_success": 5, "steal_fail_empty": 2,
                              "steal_fail_race": 0}} for i, (par, seq) in enumerate(times)]

    rounds = rounds if rounds is not None else [times]
    runs = [{"rep": rep, "fracsteal": {"frames": frames(t, rep)}, "console": [], "failure": None}
            for rep, t in enumerate(rounds)] if status == "ok" else []
    return {"profile": "test", "status": status, "failure": None if status == "ok" else "exit 1: frame 1 differs",
            "parameters": {"script": "native/sched/fracsteal/scripts/x.fss", "width": 64, "height": 36,
                           "max_iter": 1000, "threshold_pixels": 256, "threads": 4, "strip_frames": 2,
                           "repetitions": len(rounds)},
            "runs": runs, "provenance": {"cpu_model": "cpu"}}


TIMES = [(0.1, 0.3), (0.2, 0.5), (0.1, 0.5)]


def test_the_table_has_two_rows_per_frame():
    table = fracsteal_tables.frames_table(record(TIMES))
    assert list(table.columns) == fracsteal_tables.COLUMNS
    assert len(table) == 6 and (table["status"] == "ok").all() and table["verified"].all()
    par = table[table["scheduler"] == "ws_sync"]
    seq = table[table["scheduler"] == "sequential"]
    assert par["threads"].tolist() == [4, 4, 4] and seq["threads"].tolist() == [1, 1, 1]
    assert par["time_s"].tolist() == [0.1, 0.2, 0.1] and seq["time_s"].tolist() == [0.3, 0.5, 0.5]
    assert par["tasks_spawned"].tolist() == [40] * 3 and seq["tasks_spawned"].isna().all()
    assert table["cpu_model"].eq("cpu").all() and table["image"].notna().sum() == 4


ROUNDS = [[(0.1, 0.3), (0.2, 0.5)], [(0.12, 0.32), (0.22, 0.55)], [(0.11, 0.31), (0.21, 0.52)]]


def test_rounds_give_medians_with_intervals():
    table = fracsteal_tables.frames_table(record(None, rounds=ROUNDS))
    assert len(table) == 3 * 2 * 2 and sorted(table["rep"].unique().tolist()) == [0, 1, 2]
    per = fracsteal_tables.speedups(table).set_index("frame")
    assert per.loc[0, "parallel_time_s"] == pytest.approx(0.11) and per.loc[1, "sequential_time_s"] == 0.52
    assert 0.1 <= per.loc[0, "parallel_time_s_ci_low"] <= 0.11 <= per.loc[0, "parallel_time_s_ci_high"] <= 0.12
    assert per.loc[0, "ratio"] == pytest.approx(0.31 / 0.11)
    assert per.loc[0, "ratio_ci_low"] < per.loc[0, "ratio"] < per.loc[0, "ratio_ci_high"]
    s = fracsteal_tables.summary(table)
    assert s["rounds"] == 3 and s["frames"] == 2
    # the seed's summary per round (median over the frames), then the median over rounds
    assert s["parallel_median_s"] == pytest.approx(0.16) and s["sequential_median_s"] == pytest.approx(0.415)
    lo, hi = s["ratio_ci"]
    assert lo < s["ratio"] < hi
    # one round: no interval
    one = fracsteal_tables.summary(fracsteal_tables.frames_table(record(TIMES)))
    assert one["rounds"] == 1 and one["ratio_ci"] == (None, None)
    assert fracsteal_tables.speedups(fracsteal_tables.frames_table(record(TIMES)))["ratio_ci_low"].isna().all()


def zoom_part(table):
    """The explorer's part of the paper from its table, and its check's problems."""
    from parbench.paper import templates
    from parbench.paper.check import Sources, fact_problems, prose_problems, seeds_dir
    from parbench.paper.facts import Facts

    tables = {"sched_fracsteal_frames": table}
    f = Facts("sched", tables, paper.KEYS, {})
    ctx = paper.fracsteal(f, table)
    from parbench.paper import place_figure
    from parbench.studies.sched import STUDY

    figure = lambda name: place_figure(STUDY, name, f, {"profile": "test", "config": {}})  # noqa: E731
    text = templates.render(templates.sections_dir() / "sched", "fracsteal",
                            {"figure": figure, "disturbed_cells": [], **ctx, "f": f.view()})
    facts = f.records()
    problems = fact_problems(facts, Sources(tables, {}, seeds_dir())) + prose_problems(text, facts, "fracsteal")
    return text, problems


def test_the_paper_gives_intervals_and_flags_a_tie():
    text, problems = zoom_part(fracsteal_tables.frames_table(record(None, rounds=ROUNDS)))
    assert problems == []
    assert "then the median over the rounds with its interval" in text and "[3]{.fact" in text
    assert "a frame took [0.16 (" in text and '[above]{.fact key="sched.zoom.ratio_vs_1"} parity' in text
    tie = [[(0.3, 0.25)], [(0.3, 0.35)], [(0.3, 0.3)]]  # sequential as fast, within the rounds' spread
    text, problems = zoom_part(fracsteal_tables.frames_table(record(None, rounds=tie)))
    assert problems == [] and "[not distinguishable on this machine from]" in text
    spec = json.dumps(figures.fracsteal_times(fracsteal_tables.frames_table(record(None, rounds=ROUNDS)), {})
                      .to_dict())
    assert "errorbar" in spec and "median of 3 rounds" in spec and "faster" not in spec


def test_a_failed_zoom_is_one_row_of_nulls():
    table = fracsteal_tables.frames_table(record([], status="failed"))
    assert len(table) == 1 and table["status"].iloc[0] == "failed"
    assert table["time_s"].isna().all() and "differs" in table["failure"].iloc[0]
    assert fracsteal_tables.summary(table) is None


def test_summary_uses_medians_over_the_frames():
    s = fracsteal_tables.summary(fracsteal_tables.frames_table(record(TIMES)))
    assert s["frames"] == 3 and s["threads"] == 4
    assert s["parallel_median_s"] == pytest.approx(0.1) and s["sequential_median_s"] == pytest.approx(0.5)
    assert s["ratio"] == pytest.approx(5.0)
    assert s["ratio_min"] == pytest.approx(2.5) and s["ratio_max"] == pytest.approx(5.0)
    assert s["magnification_max"] == 3.0 and s["all_identical"]


def test_the_paper_text_comes_from_the_table():
    text, problems = zoom_part(fracsteal_tables.frames_table(record(TIMES)))
    assert problems == []
    assert "{#fig-sched-fracsteal-strip}" in text and "{#fig-sched-fracsteal-times}" in text
    # the seed's frame times are quotes of the seed, beside this run's
    assert "about [0.08 s]{.fact" in text and "about [0.3 s]{.fact" in text and "[24]{.fact" in text
    assert "With synchronizing work stealing on [4]{.fact" in text and "a frame took [0.1 s]{.fact" in text
    assert "sequentially [0.5 s]{.fact" in text and "a ratio of [5]{.fact" in text
    # one round: no interval, so no verdict but "not distinguishable"
    assert "[not distinguishable on this machine from]" in text and "from [2.5]{.fact" in text
    failed, problems = zoom_part(fracsteal_tables.frames_table(record([], status="failed")))
    assert problems == [] and "failed its check" in failed and "[exit 1: frame 1 differs]{.fact" in failed
    assert "{#fig-sched-fracsteal" not in failed


def ppm(path: Path, w: int, h: int, value: int) -> Path:
    path.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + bytes([value]) * (w * h * 3))
    return path


def test_the_strip_puts_shrunk_frames_side_by_side(tmp_path):
    frames = [ppm(tmp_path / f"f{i}.ppm", 64, 36, v) for i, v in enumerate((10, 200))]
    w, h, rgb = fracsteal_cell.strip_image(frames, 2, 6)
    assert (w, h) == (32 + 6 + 32, 18)
    row = rgb[:w * 3]
    assert row[:3] == bytes([10] * 3) and row[32 * 3:33 * 3] == bytes([255] * 3) and row[-3:] == bytes([200] * 3)
    assert fracsteal.strip_scale(1280) == 7 and fracsteal.strip_scale(100) == 1


def test_the_figures_draw_the_zoom_or_say_why_not(tmp_path):
    table = fracsteal_tables.frames_table(record(TIMES))
    strip = tmp_path / "sched_fracsteal_strip.ppm"
    w, h, rgb = fracsteal_cell.strip_image([ppm(tmp_path / "a.ppm", 64, 36, 50), ppm(tmp_path / "b.ppm", 64, 36, 90)],
                                           1, fracsteal.STRIP_GAP)
    strip.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + rgb)
    spec = figures.fracsteal_strip(table, str(strip), {}).to_dict()
    labels = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"][0]
    texts = [row["label"] for row in spec["datasets"][labels["data"]["name"]]]
    assert texts[0].startswith("frame 0, 1x\n0.100 s parallel\n0.300 s sequential") and len(texts) == 2
    times = figures.fracsteal_times(table, {}).to_dict()
    assert len(times["vconcat"]) == 2
    failed = fracsteal_tables.frames_table(record([], status="failed"))
    assert "failed its check" in json.dumps(figures.fracsteal_strip(failed, str(strip), {}).to_dict())
    assert "failed its check" in json.dumps(figures.fracsteal_times(failed, {}).to_dict())


# ---- a real zoom job -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def headless(tmp_path_factory):
    out = tmp_path_factory.mktemp("fracsteal-study-build")
    proc = subprocess.run(["make", "-j2", "-C", str(REPO / fracsteal.SOURCE_DIR), f"OUT_DIR={out}", "headless"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "fracsteal-headless"


@pytest.mark.native
def test_a_real_zoom_job_and_its_table(headless, tmp_path):
    """`parbench sched-fracsteal` in a scratch folder (data goes there; conf and the script
    come from the checkout), then `parbench sched-fracsteal-aggregate`."""
    env = dict(os.environ, PARBENCH_ROOT=str(REPO))
    overrides = ["sched.fracsteal.width=64", "sched.fracsteal.height=36", "sched.fracsteal.strip_frames=3",
                 "sched.fracsteal.threshold_pixels=128", "sched.repetitions=2"]
    proc = subprocess.run([sys.executable, "-m", "parbench", "sched-fracsteal", "--profile", "smoke", "--binary",
                           str(headless), *overrides], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == ("  fracsteal  zoom: seahorse_zoom_short.fss, 8 frames of 64x36, ws_sync with 2 threads, "
                        "2 rounds")
    # the seed's summary lines, per round
    assert "  fracsteal  round 1 of 2:" in lines and "  fracsteal  round 2 of 2:" in lines
    assert sum(line.startswith("  fracsteal  Parallel version is ") for line in lines) == 2
    assert lines[-1].startswith("  fracsteal  Parallel version is ")
    rec = json.loads((tmp_path / fracsteal.RECORD.format(profile="smoke")).read_text())
    assert rec["status"] == "ok" and [r["rep"] for r in rec["runs"]] == [0, 1]
    assert all(r["fracsteal"]["verified"] is True and len(r["fracsteal"]["frames"]) == 8 for r in rec["runs"])
    assert rec["parameters"]["width"] == 64 and rec["script_text"].startswith("# seahorse_zoom_short.fss")
    assert rec["provenance"]["config_hash"]
    # the first round writes the strip's frames, the second none
    assert "--out" in rec["runs"][0]["command"] and "--out" not in rec["runs"][1]["command"]
    console = (tmp_path / fracsteal.CONSOLE.format(profile="smoke")).read_text().splitlines()
    assert sum(line.startswith("frame ") for line in console) == 2 * 8 and "# round 2 of 2" in console
    w, h, _ = read_ppm(tmp_path / fracsteal.STRIP.format(profile="smoke"))
    assert (w, h) == (3 * 64 + 2 * fracsteal.STRIP_GAP, 36)
    frames_dir = tmp_path / fracsteal.FRAMES_DIR.format(profile="smoke")
    assert sorted(p.name for p in frames_dir.glob("*.ppm")) == ["frame_0000.ppm", "frame_0004.ppm", "frame_0007.ppm"]
    history = list((tmp_path / fracsteal.HISTORY.format(profile="smoke")).iterdir())
    assert len(history) == 1 and {p.name for p in history[0].iterdir()} == {"zoom.json", "zoom.txt", "frames.csv"}

    out = tmp_path / "processed"
    proc = subprocess.run([sys.executable, "-m", "parbench", "sched-fracsteal-aggregate", "--out-dir", str(out),
                           str(tmp_path / fracsteal.RECORD.format(profile="smoke"))], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_parquet(out / "sched_fracsteal_frames.parquet")
    assert len(table) == 2 * 16 and table["verified"].all() and (table["time_s"] > 0).all()
    assert table["time_s"].nunique() > 16  # measured, not a constant
    assert table.groupby("rep").size().tolist() == [16, 16]
    assert "frames, median" in proc.stdout
