"""The sched study's Python side: cell expansion, the driver command, aggregation
(speedups, steal rates, task balance, the seed's console lines) and the image."""

import pandas as pd
import pytest

from parbench import config as pbconfig
from parbench.figures import ppm
from parbench.studies.sched import aggregate, plan


def test_cells_cover_schedulers_peers_and_the_sequential_baseline_once():
    cfg = pbconfig.load("m4")
    cells = plan.cells(cfg)
    quick = [c for c in cells if c.workload == "quicksort"]
    mandel = [c for c in cells if c.workload == "mandelbrot"]
    assert len(quick) == 1 + 5 * 10 and len(mandel) == 1 + 3 * 10
    assert [c for c in cells if c.scheduler == "sequential"] == [
        plan.SchedCell("quicksort", "sequential", 1), plan.SchedCell("mandelbrot", "sequential", 1)]
    assert not any(c.scheduler in plan.PEERS for c in mandel)
    assert cells[0] == plan.SchedCell("quicksort", "sequential", 1)


def test_paths_keep_the_seeds_two_digit_thread_numbers():
    assert plan.SchedCell("quicksort", "ws", 2).outputs("local")["record"] == "data/raw/local/sched/quicksort/ws_t02.json"


def test_driver_command_carries_the_profile_parameters():
    cfg = pbconfig.load("local", ["sched.quicksort.size=1234", "sched.backoff.max_ns=9999"])
    cmd = plan.driver_command(cfg, plan.SchedCell("quicksort", "ws", 2), "drv", "out.json")
    assert cmd[:6] == ["drv", "quicksort", "--scheduler", "ws", "--threads", "2"]
    assert cmd[cmd.index("--size") + 1] == "1234" and cmd[cmd.index("--backoff-max-ns") + 1] == "9999"
    assert cmd[cmd.index("--reps") + 1] == str(cfg["sched"]["repetitions"])
    m = plan.driver_command(cfg, plan.SchedCell("mandelbrot", "lifo", 1), "drv", None, image_path="x.ppm", frames=1)
    assert "--json" not in m and m[m.index("--image") + 1] == "x.ppm" and m[m.index("--frames") + 1] == "1"


def test_cell_parameters_follow_the_workload():
    cfg = pbconfig.load("local")
    q = plan.cell_parameters(cfg, plan.SchedCell("quicksort", "ws", 1))
    m = plan.cell_parameters(cfg, plan.SchedCell("mandelbrot", "ws", 1))
    assert q["size"] == cfg["sched"]["quicksort"]["size"] and "width" not in q
    assert m["width"] == cfg["sched"]["mandelbrot"]["width"] and "size" not in m
    longer = pbconfig.load("local", ["sched.mandelbrot.frames=9"])
    assert plan.cell_parameters(longer, plan.SchedCell("quicksort", "ws", 1)) == q


@pytest.mark.parametrize("override, words", [
    ("sched.threads=[0]", "sched.threads[0]: 0 is too small"),
    ("sched.quicksort.size=0", "sched.quicksort.size: 0 is too small"),
    ("sched.mandelbrot.threshold_pixels=0", "sched.mandelbrot.threshold_pixels: 0 is too small"),
    ("sched.schedulers=[fifo]", "'fifo' is not allowed; allowed: lifo, ws, ws_sync"),
    ("sched.backoff.min_ns=500000", "larger than sched.backoff.max_ns"),
])
def test_bad_sched_parameters_are_refused(override, words):
    with pytest.raises(pbconfig.ConfigError) as info:
        pbconfig.load("local", [override])
    assert words in str(info.value)


def record(workload, scheduler, threads, times, status="ok", steals=(10, 3, 1), tasks=None):
    per_worker = [] if scheduler in ("sequential", "openmp", "tbb") else [
        {"worker": w, "tasks_executed": (tasks or [50] * threads)[w], "steal_success": steals[0],
         "steal_fail_empty": steals[1], "steal_fail_race": steals[2]} for w in range(threads)]
    return {
        "profile": "test", "status": status, "failure": None if status == "ok" else "no libtbb-dev",
        "cell": {"workload": workload, "scheduler": scheduler, "threads": threads},
        "parameters": {"size": 1000, "width": 64, "height": 32},
        "driver": None if status != "ok" else {"verified": True, "reps": [
            {"rep": i + 1, "time_s": t, "verified": True,
             "counters": {"tasks_spawned": 100, "per_worker": per_worker}} for i, t in enumerate(times)]},
        "elapsed_sec": 1.0, "provenance": {},
    }


@pytest.fixture
def records():
    return [record("quicksort", "sequential", 1, [8.0, 8.2, 7.9]),
            record("quicksort", "ws", 1, [8.4, 8.6, 8.5]),
            record("quicksort", "ws", 2, [4.4, 4.0, 4.2], tasks=[60, 40]),
            record("quicksort", "tbb", 1, [], status="unavailable"),
            record("mandelbrot", "sequential", 1, [0.4]),
            record("mandelbrot", "ws_sync", 2, [0.25])]


def test_speedups_use_medians_of_the_repetitions(records):
    s = aggregate.study_tables(records)["summary"].set_index(["workload", "scheduler", "threads"])
    ws2 = s.loc[("quicksort", "ws", 2)]
    assert ws2["median_time_s"] == 4.2 and ws2["min_time_s"] == 4.0 and ws2["max_time_s"] == 4.4
    assert ws2["speedup_vs_sequential"] == pytest.approx(8.0 / 4.2)
    assert ws2["speedup_vs_one_thread"] == pytest.approx(8.5 / 4.2)
    assert ws2["efficiency"] == pytest.approx(8.0 / 4.2 / 2)
    assert s.loc[("mandelbrot", "ws_sync", 2), "speedup_vs_sequential"] == pytest.approx(1.6)


def test_counters_steal_rate_and_task_balance(records):
    s = aggregate.study_tables(records)["summary"].set_index(["workload", "scheduler", "threads"])
    ws2 = s.loc[("quicksort", "ws", 2)]
    assert ws2["steal_success"] == 20 and ws2["steal_fail_empty"] == 6 and ws2["steal_fail_race"] == 2
    assert ws2["steal_success_rate"] == pytest.approx(20 / 28)
    assert ws2["task_share_cv"] == pytest.approx(0.2)  # 60 and 40 around a mean of 50
    assert ws2["tasks_executed"] == 100


def test_an_unavailable_peer_is_noted_not_measured(records):
    tables = aggregate.study_tables(records)
    tbb = tables["summary"].set_index("scheduler").loc["tbb"]
    assert tbb["status"] == "unavailable" and "libtbb-dev" in tbb["failure"]
    assert pd.isna(tbb["median_time_s"]) and pd.isna(tbb["speedup_vs_sequential"])
    assert len(tables["runs"]) == 3 + 3 + 3 + 1 + 1 + 1


def test_console_blocks_in_the_seeds_format(records):
    tables = aggregate.study_tables(records)
    text = aggregate.console_blocks(tables["summary"], records)
    assert "[01] Time taken: 8.500000 seconds" in text
    assert "[02] Time taken: 4.200000 seconds" in text
    assert "Minimum time taken: 4.200000 seconds for cores = 2" in text
    assert "[01] unavailable: no libtbb-dev" in text
    assert text.index("quicksort --scheduler sequential") < text.index("mandelbrot --scheduler sequential")


def test_ppm_to_png(tmp_path):
    rgb = bytes(range(2 * 3 * 3))  # 3x2 pixels
    path = tmp_path / "x.ppm"
    path.write_bytes(b"P6\n# comment\n3 2\n255\n" + rgb)
    assert ppm.read_ppm(path) == (3, 2, rgb)
    png = ppm.png_bytes(3, 2, rgb)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"IHDR" in png and png.endswith(b"IEND\xaeB`\x82")
    path.write_bytes(b"P3\n1 1\n255\n0 0 0")
    with pytest.raises(ValueError, match="not a binary 8-bit PPM"):
        ppm.read_ppm(path)
