"""`parbench sched-fracsteal`: replay the explorer's zoom script headlessly and record it.

    parbench sched-fracsteal --profile local --binary native/build/sched/fracsteal-headless \\
        [HYDRA_OVERRIDE ...]

Outputs (data/raw/<profile>/sched/fracsteal/):
- `zoom.txt`: fracsteal's stdout: one line per frame (parallel and sequential time, whether
  identical, the view) and the seed's summary (median frame times, how many times faster);
- `zoom.json`: the record: parameters, status, the script, fracsteal's JSON report (every
  frame's view, times, check and scheduler counters), the console lines, provenance;
- `frames/`: the frames written for the strip (PPM) and `frames.csv` (every frame);
- `sched_fracsteal_strip.ppm`: those frames side by side, shrunk, for the paper.

Status: "ok"; "failed" when a frame differed from its sequential render (every frame is
still rendered and recorded), with fracsteal's message. A refused script or argument is a
bug of the configuration and stops the job with fracsteal's message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parbench.progress import progress_suffix, run_id
from parbench.records import keep_history, write_atomic
from parbench.studies.sched import fracsteal

RECORD_VERSION = 1


def measure(cfg: dict, binary: str, frames_dir: Path) -> dict:
    from parbench import project, provenance

    params = fracsteal.parameters(cfg)
    frames_dir.mkdir(parents=True, exist_ok=True)
    for stale in frames_dir.glob("frame_*.ppm"):  # images of an earlier run, not measurements
        stale.unlink()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="parbench-fracsteal-") as tmp:
        json_path = Path(tmp) / "fracsteal.json"
        cmd = fracsteal.command(cfg, binary, str(frames_dir), str(json_path))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        report = json.loads(json_path.read_text()) if json_path.exists() and json_path.stat().st_size else None
    finished = time.time()
    stderr_tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
    if proc.returncode == 2:
        raise SystemExit(f"parbench sched-fracsteal: fracsteal refused its script or arguments "
                         f"({' '.join(cmd)}):\n{stderr_tail}")
    status, failure = ("ok", None) if proc.returncode == 0 else ("failed", f"exit {proc.returncode}: {stderr_tail}")
    if status == "ok" and not (report and report.get("verified")):
        status, failure = "failed", "fracsteal reported success but its JSON does not say verified"
    return {
        "record_version": RECORD_VERSION,
        "study": "sched",
        "part": "fracsteal",
        "profile": cfg["profile"],
        "run_id": run_id(),
        "parameters": params,
        "status": status,
        "failure": failure,
        "command": cmd,
        "script_text": (project.root() / params["script"]).read_text(),
        "fracsteal": report,
        "console": proc.stdout.splitlines(),
        "started_unix": started,
        "finished_unix": finished,
        "elapsed_sec": finished - started,
        "provenance": provenance.collect(cfg, Path.cwd()),
    }


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


def write_bytes_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_outputs(record: dict, profile: str) -> dict[str, Path]:
    out = {"record": Path(fracsteal.RECORD.format(profile=profile)),
           "console": Path(fracsteal.CONSOLE.format(profile=profile)),
           "strip": Path(fracsteal.STRIP.format(profile=profile))}
    frames_dir = Path(fracsteal.FRAMES_DIR.format(profile=profile))
    saved = [frames_dir / f["image"] for f in (record["fracsteal"] or {}).get("frames", []) if f.get("image")]
    if record["status"] == "ok" and saved:
        w, h, rgb = strip_image(saved, fracsteal.strip_scale(record["parameters"]["width"]), fracsteal.STRIP_GAP)
        write_bytes_atomic(out["strip"], b"P6\n%d %d\n255\n" % (w, h) + rgb)
    else:  # nothing to show: a 1x1 white image keeps the file the pipeline expects
        write_bytes_atomic(out["strip"], b"P6\n1 1\n255\n\xff\xff\xff")
    write_atomic(out["console"], "\n".join(record["console"]) + ("\n" if record["console"] else ""))
    write_atomic(out["record"], json.dumps(record, indent=1) + "\n")
    return out


def main(args) -> int:
    from parbench import config as pbconfig

    if not Path(args.binary).exists():
        raise SystemExit(f"parbench sched-fracsteal: {args.binary} is not built; build it with "
                         f"`snakemake -c1 sched_fracsteal_headless` (or make -C {fracsteal.SOURCE_DIR} headless)")
    try:
        cfg = pbconfig.load(args.profile, args.overrides)
    except pbconfig.ConfigError as exc:
        raise SystemExit(f"parbench sched-fracsteal: {exc}") from None
    profile = cfg["profile"]
    params = fracsteal.parameters(cfg)
    head = "  fracsteal "
    print(f"{head} zoom: {Path(params['script']).name}, {fracsteal.frame_count(cfg)} frames of "
          f"{params['width']}x{params['height']}, ws_sync with {params['threads']} threads", flush=True)
    try:
        record = measure(cfg, args.binary, Path(fracsteal.FRAMES_DIR.format(profile=profile)))
    except KeyboardInterrupt:
        print("parbench sched-fracsteal: interrupted; no output written", file=sys.stderr)
        return 130
    outputs = write_outputs(record, profile)
    frames_csv = Path(fracsteal.FRAMES_DIR.format(profile=profile)) / "frames.csv"
    keep_history(Path(fracsteal.HISTORY.format(profile=profile)),
                 [outputs["record"], outputs["console"], *([frames_csv] if frames_csv.exists() else [])])
    if record["status"] == "ok":
        summary = [line for line in record["console"] if not line.startswith("frame ")]
        for i, line in enumerate(summary):
            print(f"{head} {line}{progress_suffix() if i == len(summary) - 1 else ''}")
    else:
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
