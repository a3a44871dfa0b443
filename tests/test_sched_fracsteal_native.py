"""fracsteal, the seed's fractal explorer (native/sched/fracsteal): its builds and its
scripted mode.

Builds into pytest temporary directories (never into the source tree), then runs the
headless build on small pictures: the stdout lines, frames.csv, the JSON report, the
frames written, every frame identical to its sequential render, the scheduler's counters
adding up, the view moves (a zoom keeps the point under the cursor in place), bad
arguments and scripts (exit 2, value and line named), a window asked of a build without
SDL2 (exit 3, Debian package named), and the scripted mode under AddressSanitizer + UBSan
and ThreadSanitizer (`make asan`, `make tsan`). The window itself is driven in
tests/test_sched_fracsteal_window.py.

Run from the repository root:  .venv/bin/python -m pytest tests/test_sched_fracsteal_native.py
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import assert_clean

REPO = Path(__file__).resolve().parents[1]
FRACSTEAL_DIR = REPO / "native" / "sched" / "fracsteal"
TOUR = FRACSTEAL_DIR / "scripts" / "tour.fss"
TOUR_FRAMES = 17

_missing = [tool for tool in ("make", "gcc") if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(bool(_missing), reason=f"native toolchain missing: {', '.join(_missing)} not on PATH"),
]

FRAME_LINE = re.compile(
    r"^frame (\d+): parallel (\d+\.\d{6}) s on (\d+) threads?, sequential (\d+\.\d{6}) s \((\d+\.\d\d)x, "
    r"identical\); view (\S+) (\S+) (\S+), (\d+) iterations, scheme (\w+)$")


def make(out_dir: Path, target: str, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-j2", "-C", str(FRACSTEAL_DIR), f"OUT_DIR={out_dir}", *extra, target],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fracsteal-build")


@pytest.fixture(scope="module")
def headless(out_dir: Path) -> Path:
    assert_clean(make(out_dir, "headless"), "make headless")
    path = out_dir / "fracsteal-headless"
    assert path.is_file()
    return path


def run(binary: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout)


def script(tmp_path: Path, text: str, name: str = "s.fss") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def frames_csv(folder: Path) -> list[dict]:
    with open(folder / "frames.csv", newline="") as fh:
        return list(csv.DictReader(fh))


SMALL = ["--width", "96", "--height", "64", "--threshold", "64", "--max-iter", "300"]


# ---- the scripted mode ---------------------------------------------------------------

@pytest.fixture(scope="module")
def tour(headless: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("tour")
    proc = run(headless, "--script", str(TOUR), *SMALL, "--threads", "3", "--out", str(tmp / "frames"),
               "--json", str(tmp / "report.json"))
    return {"proc": proc, "dir": tmp / "frames", "json": json.loads((tmp / "report.json").read_text())}


def test_every_frame_is_identical_to_its_sequential_render(tour: dict) -> None:
    proc = tour["proc"]
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == TOUR_FRAMES + 3, proc.stdout
    for i, line in enumerate(lines[:TOUR_FRAMES]):
        m = FRAME_LINE.match(line)
        assert m, line
        assert int(m.group(1)) == i and int(m.group(3)) == 3
    assert lines[-3].startswith("Frame time, parallel (pbs_mandel_render_parallel on ws_sync, 3 threads): ")
    assert lines[-2].startswith("Frame time, sequential (pbs_mandel_render_seq): ")
    assert re.match(r"^Parallel version is \d+\.\d\d times (faster|slower) than the sequential version$", lines[-1])


def test_the_json_report_has_every_frame_with_counters(tour: dict) -> None:
    doc = tour["json"]
    assert doc["schema"] == "fracsteal/1" and doc["scheduler"] == "ws_sync"
    assert (doc["threads"], doc["width"], doc["height"], doc["threshold"]) == (3, 96, 64, 64)
    assert doc["frame_count"] == TOUR_FRAMES and len(doc["frames"]) == TOUR_FRAMES
    assert doc["verified"] is True
    for f in doc["frames"]:
        assert f["identical"] is True
        assert f["parallel_time_s"] > 0 and f["sequential_time_s"] > 0
        counters = f["counters"]
        # 96 x 64 in tasks of at most 64 pixels: at least 96 leaves, every spawned task ran
        assert counters["tasks_spawned"] >= 96
        assert counters["tasks_executed"] == counters["tasks_spawned"]
    parallel = sorted(f["parallel_time_s"] for f in doc["frames"])
    assert doc["parallel_median_s"] == pytest.approx(parallel[len(parallel) // 2], rel=1e-6)
    assert doc["speedup"] == pytest.approx(doc["sequential_median_s"] / doc["parallel_median_s"], rel=1e-6)
    assert [f["scheme"] for f in doc["frames"]][6:11] == ["seahorse", "ember", "glacier", "glacier", "orchid"]
    assert [f["max_iter"] for f in doc["frames"]][6:11] == [300, 64, 64, 64, 300]


def test_frames_and_csv_are_written(tour: dict) -> None:
    rows = frames_csv(tour["dir"])
    assert [int(r["frame"]) for r in rows] == list(range(TOUR_FRAMES))
    assert all(r["identical"] == "true" for r in rows)
    assert rows[0]["command"] == "frame" and rows[1]["command"] == "move 0.1 0"
    assert rows[8]["command"] == "repeat 2 zoom 1.25 40 30" and rows[9]["command"] == rows[8]["command"]
    header = b"P6\n96 64\n255\n"
    for r in rows:
        data = (tour["dir"] / r["image"]).read_bytes()
        assert data.startswith(header) and len(data) == len(header) + 96 * 64 * 3
    # the colour scheme is applied to what is written: ember is not the workload's palette
    seahorse = (tour["dir"] / rows[6]["image"]).read_bytes()
    ember = (tour["dir"] / rows[7]["image"]).read_bytes()
    assert seahorse != ember


def point_under(row: dict, px: float, py: float, w: int = 96, h: int = 64) -> tuple[float, float]:
    cx, cy, width = float(row["center_x"]), float(row["center_y"]), float(row["view_width"])
    scale = width / w
    return cx - width / 2 + px * scale, cy + scale * h / 2 - py * scale


def test_moves_and_zooms_change_the_view_as_the_keys_do(tour: dict) -> None:
    rows = frames_csv(tour["dir"])
    home, right, up, dragged, centre, at_pixel, back = rows[:7]
    assert (float(home["center_x"]), float(home["center_y"]), float(home["view_width"])) == (-0.75, 0.0, 3.5)
    assert float(right["center_x"]) == pytest.approx(-0.75 + 0.35) and float(right["center_y"]) == 0.0
    assert float(up["center_y"]) == pytest.approx(0.1 * 3.5 * 64 / 96)  # up: a tenth of the height
    # a drag 12 px left and 5 px down moves the view 12 px right and 5 px up
    scale = 3.5 / 96
    assert float(dragged["center_x"]) == pytest.approx(float(up["center_x"]) + 12 * scale)
    assert float(dragged["center_y"]) == pytest.approx(float(up["center_y"]) + 5 * scale)
    assert float(centre["view_width"]) == pytest.approx(3.5 / 1.25)
    assert float(centre["center_x"]) == pytest.approx(float(dragged["center_x"]))
    # zoom 2 toward pixel (10, 20): the point under that pixel's centre stays where it is
    assert float(at_pixel["view_width"]) == pytest.approx(float(centre["view_width"]) / 2)
    assert point_under(at_pixel, 10.5, 20.5) == pytest.approx(point_under(centre, 10.5, 20.5), abs=1e-15)
    assert point_under(back, 10.5, 20.5) == pytest.approx(point_under(at_pixel, 10.5, 20.5), abs=1e-15)
    # the glide ends exactly on its target
    assert (float(rows[14]["center_x"]), float(rows[14]["center_y"]), float(rows[14]["view_width"])) == (
        -0.7453, 0.1127, 0.0125)
    widths = [float(r["view_width"]) for r in rows[10:15]]
    assert widths == sorted(widths, reverse=True)


def test_save_frames_spreads_them_evenly(headless: Path, tmp_path: Path) -> None:
    proc = run(headless, "--script", str(TOUR), *SMALL, "--threads", "2", "--out", str(tmp_path / "f"),
               "--save-frames", "4")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "f").glob("*.ppm")) == [
        "frame_0000.ppm", "frame_0005.ppm", "frame_0011.ppm", "frame_0016.ppm"]
    rows = frames_csv(tmp_path / "f")
    assert len(rows) == TOUR_FRAMES and sum(1 for r in rows if r["image"]) == 4


def test_one_thread_renders_the_same_frames(headless: Path, tmp_path: Path, tour: dict) -> None:
    proc = run(headless, "--script", str(TOUR), *SMALL, "--threads", "1", "--out", str(tmp_path / "one"))
    assert proc.returncode == 0, proc.stderr
    for name in ("frame_0000.ppm", "frame_0010.ppm", "frame_0016.ppm"):
        assert (tmp_path / "one" / name).read_bytes() == (tour["dir"] / name).read_bytes()


# ---- refusals --------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "expected"), [
    (["--threads", "0"], "--threads must be >= 1 (got 0)"),
    (["--threads", "300"], "--threads must be <= 256 (got 300)"),
    (["--width", "wide"], "--width must be a non-negative integer (got 'wide')"),
    (["--width=wide"], "--width must be a non-negative integer (got 'wide')"),
    (["--scheme="], "--scheme must not be empty"),
    (["--save-frames", "2"], "--save-frames needs --script"),
    (["--width", "20000"], "--width must be <= 16384 (got 20000)"),
    (["--max-iter", "0"], "--max-iter must be >= 1 (got 0)"),
    (["--threshold", "-4"], "--threshold must be >= 1 (got -4)"),
    (["--scheme", "plasma"], "--scheme must be one of seahorse, ember, glacier, orchid, mono (got 'plasma')"),
    (["--bogus", "1"], "unknown option '--bogus'"),
    (["--threads"], "--threads needs a value"),
    (["--out", "x"], "--out needs --script"),
    (["--json", "x.json"], "--json needs --script"),
    (["--width", "16384", "--height", "16384"], "--width * --height must be <= 67108864 pixels (got 268435456)"),
    (["frames"], "unexpected argument 'frames'"),
])
def test_bad_arguments_exit_2(headless: Path, args: list[str], expected: str) -> None:
    proc = run(headless, *args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert expected in proc.stderr and proc.stderr.startswith("fracsteal: ")
    assert proc.stdout == ""


@pytest.mark.parametrize(("text", "expected"), [
    ("frame\nspin 3\n", ":2: unknown command 'spin'; allowed: view, iterations, scheme, frame, move"),
    ("zoom -2\n", ":1: zoom: F must be > 0"),
    ("zoom 2 96 10\n", ":1: zoom: the pixel (96, 10) is outside the 96x64 picture; allowed: 0 <= X < 96"),
    ("zoom 2 5\n", ":1: zoom takes F or F X Y (got 2 arguments)"),
    ("move 0.1\n", ":1: move takes DX DY (got 1 argument)"),
    ("drag left 2\n", ":1: drag: DX must be a finite number (got 'left')"),
    ("view 0 0 0\n", ":1: view: WIDTH must be between 1e-13 and 16 (got 0)"),
    ("iterations 0\n", ":1: iterations: N must be an integer from 1 to 100000000 (got '0')"),
    ("scheme plasma\n", ":1: scheme: unknown scheme 'plasma'; allowed: seahorse, ember, glacier, orchid, mono"),
    ("zoomto 0 0 1 0\n", ":1: zoomto: N must be an integer from 1 to 100000 (got '0')"),
    ("repeat 2 repeat 2 frame\n", ":1: repeat: a repeated command cannot be another repeat"),
    ("repeat 0 frame\n", ":1: repeat: N must be an integer from 1 to 100000 (got '0')"),
    ("# nothing but a comment\nview 0 0 1\n", "the script renders no frame"),
])
def test_bad_scripts_exit_2_naming_the_line(headless: Path, tmp_path: Path, text: str, expected: str) -> None:
    path = script(tmp_path, text)
    proc = run(headless, "--script", str(path), *SMALL, "--out", str(tmp_path / "never"))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"fracsteal: {path}" in proc.stderr and expected in proc.stderr, proc.stderr
    assert not (tmp_path / "never").exists()  # refused before any work


def test_a_missing_script_is_named(headless: Path, tmp_path: Path) -> None:
    proc = run(headless, "--script", str(tmp_path / "nope.fss"))
    assert proc.returncode == 2 and "nope.fss: cannot read the script" in proc.stderr


def test_a_window_from_the_headless_build_names_the_package(headless: Path) -> None:
    proc = run(headless, "--width", "64", "--height", "48")
    assert proc.returncode == 3, proc.stderr
    assert "built without SDL2" in proc.stderr and "libsdl2-dev" in proc.stderr and "--script" in proc.stderr


def test_help_lists_the_keys(headless: Path) -> None:
    proc = run(headless, "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    for words in ("arrow keys", "mouse drag", "wheel, + / -", "] / [", "c / C", "also render sequentially",
                  "q, Esc", "--script FILE", "--threads N", "--width W", "zoomto CX CY WIDTH N"):
        assert words in proc.stdout, words


def test_the_window_target_says_which_package_is_missing(tmp_path: Path) -> None:
    """What a machine without libsdl2-dev sees (forced here with FS_WITH_SDL2=0)."""
    proc = make(tmp_path, "fracsteal", "FS_WITH_SDL2=0")
    assert proc.returncode != 0
    assert "sudo apt-get install libsdl2-dev" in proc.stderr
    assert "make -C native/sched/fracsteal headless" in proc.stderr
    assert not (tmp_path / "fracsteal").exists()


# ---- sanitizers ----------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["asan", "tsan"])
def test_the_scripted_mode_under_sanitizers(out_dir: Path, target: str) -> None:
    proc = make(out_dir, target)
    assert_clean(proc, f"make {target}")
    assert proc.stdout.count("identical") == 3 * TOUR_FRAMES  # 1, 2 and 4 threads
    assert "all passed, no sanitizer report" in proc.stdout
