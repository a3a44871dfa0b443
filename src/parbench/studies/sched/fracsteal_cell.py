"""`parbench sched-fracsteal`: replay the explorer's zoom script headlessly and record it.

    parbench sched-fracsteal --profile local --binary native/build/sched/fracsteal-headless \\
        [HYDRA_OVERRIDE ...]

Outputs (data/raw/<profile>/sched/fracsteal/):
- `zoom.txt`: fracsteal's stdout of every round: one line per frame (parallel and
  sequential time, whether identical, the view) and the seed's summary (median frame
  times, how many times faster);
- `zoom.json`: the record: parameters, status, the script, and per round (`runs`: the
  zoom is replayed `sched.repetitions` times) fracsteal's command, JSON report (every
  frame's view, times, check and scheduler counters) and console lines; provenance;
- `frames/`: the frames written for the strip by the first round (PPM) and its
  `frames.csv` (every frame);
- `sched_fracsteal_strip.ppm`: those frames side by side, shrunk, for the paper.

Status: "ok"; "failed" when a frame differed from its sequential render (every frame of
that round is still rendered and recorded, and no further round runs), with fracsteal's
message. A refused script or argument is a
bug of the configuration and stops the job with fracsteal's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parbench.progress import progress_suffix, run_id
from parbench.records import keep_history, write_atomic
from parbench.studies.sched import fracsteal

RECORD_VERSION = 2


def replay(cfg: dict, binary: str, frames_dir: Path | None) -> dict:
    """One replay of the zoom: fracsteal's exit status, its JSON report and its stdout."""
    with tempfile.TemporaryDirectory(prefix="parbench-fracsteal-") as tmp:
        json_path = Path(tmp) / "fracsteal.json"
        cmd = fracsteal.command(cfg, binary, None if frames_dir is None else str(frames_dir), str(json_path))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        report = json.loads(json_path.read_text()) if json_path.exists() and json_path.stat().st_size else None
    stderr_tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
    if proc.returncode == 2:
        raise SystemExit(f"parbench sched-fracsteal: fracsteal refused its script or arguments "
                         f"({' '.join(cmd)}):\n{stderr_tail}")
    failure = None if proc.returncode == 0 else f"exit {proc.returncode}: {stderr_tail}"
    if failure is None and not (report and report.get("verified")):
        failure = "fracsteal reported success but its JSON does not say verified"
    return {"command": cmd, "returncode": proc.returncode, "failure": failure, "fracsteal": report,
            "console": proc.stdout.splitlines()}


def measure(cfg: dict, binary: str, frames_dir: Path, on_round=None) -> dict:
    """The zoom replayed `repetitions` times, one round after the other (the first writes
    the strip's frames); `on_round(rep, run)` is called after each. A round that fails its
    check ends the job: the record is failed, with that round's reason."""
    from parbench import project, provenance

    params = fracsteal.parameters(cfg)
    frames_dir.mkdir(parents=True, exist_ok=True)
    for stale in frames_dir.glob("frame_*.ppm"):  # images of an earlier run, not measurements
        stale.unlink()
    started = time.time()
    runs, failure = [], None
    for rep in range(params["repetitions"]):
        run = dict(rep=rep, **replay(cfg, binary, frames_dir if rep == 0 else None))
        runs.append(run)
        if on_round is not None:
            on_round(rep, run)
        if run["failure"] is not None:
            failure = run["failure"] if params["repetitions"] == 1 else f"round {rep + 1}: {run['failure']}"
            break
    finished = time.time()
    return {
        "record_version": RECORD_VERSION,
        "study": "sched",
        "part": "fracsteal",
        "profile": cfg["profile"],
        "run_id": run_id(),
        "parameters": params,
        "status": "ok" if failure is None else "failed",
        "failure": failure,
        "script_text": (project.root() / params["script"]).read_text(),
        "runs": runs,
        "started_unix": started,
        "finished_unix": finished,
        "elapsed_sec": finished - started,
        "provenance": provenance.collect(cfg, Path.cwd()),
    }


def console_lines(record: dict) -> list[str]:
    """fracsteal's stdout of every round, each headed by its round when there are several."""
    several = len(record["runs"]) > 1
    return [line for run in record["runs"]
            for line in ([f"# round {run['rep'] + 1} of {record['parameters']['repetitions']}"] if several else [])
            + run["console"]]


def strip_image(frames: list[Path], scale: int, gap: int) -> tuple[int, int, bytes]:
    """The frames side by side, each shrunk by `scale` (mean of scale x scale pixels),
    `gap` white pixels apart: (width, height, RGB bytes)."""
    import numpy as np

    from parbench.figures.ppm import read_ppm

    thumbs = []
    for path in frames:
        w, h, rgb = read_ppm(path)
        img = np.frombuffer(rgb, dtype=np.uint8).reshape(h, w, 3).astype(np.float64)
        h2, w2 = h // scale, w // scale
        img = img[:h2 * scale, :w2 * scale].reshape(h2, scale, w2, scale, 3).mean(axis=(1, 3))
        thumbs.append(np.rint(img).astype(np.uint8))
    height = thumbs[0].shape[0]
    white = np.full((height, gap, 3), 255, dtype=np.uint8)
    parts = []
    for i, t in enumerate(thumbs):
        parts += [white] * (i > 0) + [t]
    strip = np.concatenate(parts, axis=1)
    return strip.shape[1], strip.shape[0], strip.tobytes()


def write_outputs(record: dict, profile: str) -> dict[str, Path]:
    out = {"record": Path(fracsteal.RECORD.format(profile=profile)),
           "console": Path(fracsteal.CONSOLE.format(profile=profile)),
           "strip": Path(fracsteal.STRIP.format(profile=profile))}
    frames_dir = Path(fracsteal.FRAMES_DIR.format(profile=profile))
    first = record["runs"][0]["fracsteal"] if record["runs"] else None
    saved = [frames_dir / f["image"] for f in (first or {}).get("frames", []) if f.get("image")]
    if record["status"] == "ok" and saved:
        w, h, rgb = strip_image(saved, fracsteal.strip_scale(record["parameters"]["width"]), fracsteal.STRIP_GAP)
        write_atomic(out["strip"], b"P6\n%d %d\n255\n" % (w, h) + rgb)
    else:  # nothing to show: a 1x1 white image keeps the file the pipeline expects
        write_atomic(out["strip"], b"P6\n1 1\n255\n\xff\xff\xff")
    console = console_lines(record)
    write_atomic(out["console"], "\n".join(console) + ("\n" if console else ""))
    write_atomic(out["record"], json.dumps(record, indent=1) + "\n")
    return out


def main(args) -> int:
    from parbench import config as pbconfig

    if not Path(args.binary).exists():
        raise SystemExit(f"parbench sched-fracsteal: {args.binary} is not built; build it with "
                         f"`snakemake -c1 sched_fracsteal_headless` (or make -C {fracsteal.SOURCE_DIR} headless)")
    cfg = pbconfig.load_for_command("sched-fracsteal", args.profile, args.overrides)
    profile = cfg["profile"]
    params = fracsteal.parameters(cfg)
    head = "  fracsteal "
    reps = params["repetitions"]
    print(f"{head} zoom: {Path(params['script']).name}, {fracsteal.frame_count(cfg)} frames of "
          f"{params['width']}x{params['height']}, ws_sync with {params['threads']} threads"
          + (f", {reps} rounds" if reps > 1 else ""), flush=True)

    def on_round(rep: int, run: dict) -> None:
        # the seed's summary lines of each round, as it prints them
        if run["failure"] is None:
            summary = [line for line in run["console"] if not line.startswith("frame ")]
            if reps > 1:
                print(f"{head} round {rep + 1} of {reps}:")
            for i, line in enumerate(summary):
                last = rep == reps - 1 and i == len(summary) - 1
                print(f"{head} {line}{progress_suffix() if last else ''}", flush=True)

    try:
        record = measure(cfg, args.binary, Path(fracsteal.FRAMES_DIR.format(profile=profile)), on_round)
    except KeyboardInterrupt:
        print("parbench sched-fracsteal: interrupted; no output written", file=sys.stderr)
        return 130
    outputs = write_outputs(record, profile)
    frames_csv = Path(fracsteal.FRAMES_DIR.format(profile=profile)) / "frames.csv"
    keep_history(Path(fracsteal.HISTORY.format(profile=profile)),
                 [outputs["record"], outputs["console"], *([frames_csv] if frames_csv.exists() else [])])
    if record["status"] != "ok":
        print(f"\nERROR sched fracsteal zoom failed its check: {record['failure']}\n"
              f"  recorded as failed in {outputs['record']}", file=sys.stderr)
        print(f"{head} FAILED: {record['failure']}")
    sys.stdout.flush()
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("sched-fracsteal", help="replay the fracsteal explorer's zoom script and record it")
    p.set_defaults(func=main)
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--binary", default=fracsteal.HEADLESS, help="the fracsteal(-headless) binary")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. sched.fracsteal.width=640")
