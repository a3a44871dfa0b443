"""The explorer's part of the sched study: fracsteal's scripted zoom (native/sched/fracsteal).

One job replays a script of moves and zooms (`sched.fracsteal.script`) with the headless
build, which renders every frame in parallel on one persistent `ws_sync` scheduler (one
wait per frame) and then sequentially, compares the two byte for byte and times both.
The job replays the whole zoom `sched.repetitions` times, one round after the other, so
that every frame is timed once per round and drift of the machine hits all frames alike;
the first round writes the frames of the strip. Its frame times are the table
`sched_fracsteal_frames`; a strip of its frames and the parallel/sequential frame-time
ratio, with intervals from the rounds, are in the paper's sched section.

This module holds the layout (paths), what decides the measurement (parameters), the
command, the time estimate and the header line; `fracsteal_cell` runs it and
`fracsteal_tables` turns its record into the table.
"""

from __future__ import annotations

import math
from pathlib import Path

from parbench import paths, project
from parbench.progress import format_duration
from parbench.records import failed_in_run

SOURCE_DIR = "native/sched/fracsteal"
SCRIPTS_DIR = SOURCE_DIR + "/scripts"
# The builds: with the window (SDL2, by hand) and headless (what the pipeline runs).
BUILD = "native/build/sched"
BINARY = BUILD + "/fracsteal"
HEADLESS = BUILD + "/fracsteal-headless"
# Seconds to build the headless binary from scratch (the library included).
BUILD_SEC = 12.0

RAW = paths.RAW + "/sched/fracsteal"
RECORD = RAW + "/zoom.json"
CONSOLE = RAW + "/zoom.txt"
FRAMES_DIR = RAW + "/frames"
STRIP = RAW + "/sched_fracsteal_strip.ppm"
HISTORY = paths.RAW + "/sched/history/fracsteal"
TABLE = "sched_fracsteal_frames"

# The strip: saved frames side by side, each shrunk to about this width, this many
# white pixels apart.
STRIP_THUMB_WIDTH = 192
STRIP_GAP = 6
# Seconds spent outside the frames (start, writing frames, the strip).
OVERHEAD_SEC = 1.0


def sources() -> list[str]:
    """What the fracsteal builds are compiled from: its folder, and the library,
    workload and JSON writer it reuses (with their Makefile)."""
    native = project.root() / "native/sched"
    files = [native / "Makefile"] + [p for d in ("lib", "workloads", "driver", "fracsteal")
                                     for p in (native / d).rglob("*") if p.is_file()]
    return sorted(str(p.relative_to(project.root())) for p in files)


def threads(cfg: dict) -> int:
    """Workers of the zoom: `sched.fracsteal.threads`, or the largest thread count."""
    fs = cfg["sched"]["fracsteal"]
    return int(fs["threads"]) if fs["threads"] is not None else max(cfg["sched"]["threads"])


def parameters(cfg: dict) -> dict:
    """Everything that decides what the zoom measures: Snakemake reruns it when this
    changes (the script file is an input too, so editing it reruns as well)."""
    fs = cfg["sched"]["fracsteal"]
    return {"script": fs["script"], "width": fs["width"], "height": fs["height"], "max_iter": fs["max_iter"],
            "threshold_pixels": fs["threshold_pixels"], "threads": threads(cfg),
            "strip_frames": fs["strip_frames"], "repetitions": cfg["sched"]["repetitions"]}


def command(cfg: dict, binary: str, out_dir: str | None, json_path: str) -> list[str]:
    """One replay of the zoom; with `out_dir`, it also writes the strip's frames."""
    p = parameters(cfg)
    frames = ["--out", str(out_dir), "--save-frames", str(p["strip_frames"])] if out_dir is not None else []
    return [str(binary), "--script", str(project.root() / p["script"]), "--width", str(p["width"]),
            "--height", str(p["height"]), "--max-iter", str(p["max_iter"]),
            "--threshold", str(p["threshold_pixels"]), "--threads", str(p["threads"]),
            *frames, "--json", str(json_path)]


FRAME_COMMANDS = {"frame", "move", "drag", "zoom"}


def script_frames(text: str) -> int:
    """Frames a script renders (for the estimate; the binary checks the script)."""
    frames = 0
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        repeat = 1
        if len(words) > 2 and words[0] == "repeat" and words[1].isdigit():
            repeat, words = int(words[1]), words[2:]
        if not words:
            continue
        if words[0] in FRAME_COMMANDS:
            frames += repeat
        elif words[0] == "zoomto" and len(words) == 5 and words[4].isdigit():
            frames += repeat * int(words[4])
    return frames


def frame_count(cfg: dict) -> int:
    path = project.root() / cfg["sched"]["fracsteal"]["script"]
    return script_frames(path.read_text()) if path.is_file() else 0


def estimate_sec(cfg: dict) -> float:
    """Seconds of the zoom job: in each repetition, each frame rendered in parallel
    (linear speedup assumed) and once sequentially, at the profile's mean sequential
    frame time."""
    one = cfg["sched"]["fracsteal"]["estimate_sec"]
    return OVERHEAD_SEC + cfg["sched"]["repetitions"] * frame_count(cfg) * (one / threads(cfg) + one)


def job_seconds() -> dict:
    return {"sched_fracsteal_zoom": lambda cfg, wildcards: estimate_sec(cfg),
            "sched_fracsteal_headless": lambda cfg, wildcards: BUILD_SEC}


def header_line(cfg: dict, jobs: list[tuple[str, dict]]) -> str:
    p = parameters(cfg)
    todo = any(name == "sched_fracsteal_zoom" for name, _ in jobs)
    reps = p["repetitions"]
    return (f"Explorer zoom (fracsteal): {Path(p['script']).name}, {frame_count(cfg)} frames of "
            f"{p['width']}x{p['height']} on ws_sync with {p['threads']} threads, each also rendered "
            f"sequentially{f', {reps} rounds' if reps > 1 else ''}; " + (f"~{format_duration(estimate_sec(cfg))}" if todo else "already measured"))


def config_errors(cfg: dict) -> list[str]:
    fs = cfg.get("sched", {}).get("fracsteal", {})
    script = fs.get("script")
    if isinstance(script, str) and not (project.root() / script).is_file():
        scripts = sorted(p.name for p in (project.root() / SCRIPTS_DIR).glob("*.fss"))
        return [f"sched.fracsteal.script: no such file {script!r} (relative to the checkout); allowed: a "
                f"fracsteal script, e.g. " + ", ".join(f"{SCRIPTS_DIR}/{s}" for s in scripts)]
    return []


def failures(cfg: dict, run_id: str | None) -> list[str]:
    from parbench.studies.benchmark import failed_line

    path = RECORD.format(profile=cfg["profile"])
    record = failed_in_run(path, run_id)
    return [failed_line(cfg, "sched fracsteal zoom", record["failure"], path)] if record else []


def strip_scale(width: int) -> int:
    """The integer factor that shrinks a frame to about STRIP_THUMB_WIDTH pixels."""
    return max(1, math.ceil(width / STRIP_THUMB_WIDTH))
