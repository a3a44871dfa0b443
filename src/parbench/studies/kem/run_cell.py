"""The kem study's measuring commands, each running the `parbench-kem` binary
(native/kem) and recording what it measured:

    parbench kem-counters --profile local [--binary B] [HYDRA_OVERRIDE ...]
    parbench kem-cell --profile local --implementation libcrux-avx2 --parameter-set ML-KEM-512 \\
        --operation encaps [--liboqs DIR] [HYDRA_OVERRIDE ...]
    parbench kem-throughput --profile local --implementation liboqs --parameter-set ML-KEM-768 \\
        --operation decaps --threads 2 --liboqs DIR [HYDRA_OVERRIDE ...]

Outputs (data/raw/<profile>/kem/):
- `counters.json`: every cycle counter of the HAL with its availability (and the reason
  when it is not), the one the cells use, its unit, the TSC rate, provenance;
- `cycles/<implementation>/<parameter set>_<operation>.json`: one cycles cell: every
  sample (counter ticks), the seed's median and percentiles, the checks, the counter and
  its unit, the library and its version, provenance;
- `throughput/<implementation>/<parameter set>_<operation>_t<NN>.json`: one thread-sweep
  cell: operations per thread in the window, the checks, provenance.

Status: "ok"; "failed" when a check failed (secrets that did not match, a tampered
ciphertext that decapsulated to the original secret, a call that returned an error),
with what failed; "unavailable" when the implementation cannot run here (AVX2 on arm64,
a liboqs without the level), with the reason. A counter that cannot be selected stops
the command with the binary's message (which names the available counters).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parbench.cli import check_choice
from parbench.records import write_atomic
from parbench.progress import run_id
from parbench.studies.kem import plan
from parbench.studies.kem.plan import CyclesCell, ThroughputCell
from parbench.studies.kem.study import EXIT_COUNTER, RECORD_VERSION, Kem

def _check_binary(command: str, binary: str) -> None:
    if not Path(binary).exists():
        raise SystemExit(f"parbench {command}: the binary {binary} is not built; build it with "
                         f"`snakemake -c1 kem_build` (or cargo build --release --no-default-features "
                         f"in {plan.CRATE})")


# --- counters --------------------------------------------------------------------------------

def counters(args) -> int:
    from parbench import config as pbconfig
    from parbench import provenance

    cfg = pbconfig.load_for_command("kem-counters", args.profile, args.overrides)
    _check_binary("kem-counters", args.binary)
    env = plan.binary_environment(cfg)
    proc = subprocess.run([args.binary, "counters"], capture_output=True, text=True, env=env)
    if proc.returncode not in (0, EXIT_COUNTER):
        raise SystemExit(f"parbench kem-counters: {args.binary} counters exited with {proc.returncode}: "
                         f"{proc.stderr.strip()}")
    doc = json.loads(proc.stdout)
    if proc.returncode == EXIT_COUNTER:
        # a forced counter this machine lacks: stop before any cell is measured
        raise SystemExit(f"parbench kem-counters: {doc['error']}\n  (set kem.cycle_counter to auto or to an "
                         f"available counter, or unset {plan.CYCLE_COUNTER_ENV})")
    record = {"record_version": RECORD_VERSION, "study": "kem", "profile": cfg["profile"], "run_id": run_id(),
              "parameters": plan.counter_parameters(cfg), **doc,
              "provenance": provenance.collect(cfg, Path.cwd())}
    out = Path(args.out or plan.COUNTERS.format(profile=cfg["profile"]))
    write_atomic(out, json.dumps(record, indent=1) + "\n")
    sel = doc["selected"]
    print(f"  kem cycle counter: {sel['name']} ({sel['describe']}; unit {sel['unit']})")
    for c in doc["counters"]:
        if not c["available"]:
            print(f"  kem counter {c['name']} not available: {c['reason']}")
    if not sel["core_cycles"]:
        print(f"warning: kem: no core-cycle counter on this machine; cycle counts are {sel['unit']} "
              f"({sel['name']}), not core cycles", file=sys.stderr)
    return 0


# --- cells -----------------------------------------------------------------------------------

def _run(command: str, args, cell) -> int:
    from parbench import config as pbconfig
    from parbench import runner

    cfg = pbconfig.load_for_command(command, args.profile, args.overrides)
    _check_binary(command, args.binary)
    if cell.implementation == "liboqs" and not args.liboqs:
        raise SystemExit(f"parbench {command}: the liboqs implementation needs --liboqs DIR "
                         f"(the pipeline's liboqs build: `snakemake -c1 liboqs`)")
    if args.out and not args.out.endswith(".json"):
        raise SystemExit(f"parbench {command}: --out {args.out!r} must be the record's path, ending in .json")
    return runner.exit_code(runner.run_cell(Kem(command, args.binary, args.liboqs), cfg, cell,
                                            args.out[: -len(".json")] if args.out else None, command=command))


def cell_main(args) -> int:
    check_choice("kem-cell", "implementation", args.implementation, plan.IMPLEMENTATIONS)
    allowed_sets = ["X25519"] if args.implementation == "x25519" else [f"ML-KEM-{lv}" for lv in plan.LEVELS]
    check_choice("kem-cell", "parameter-set", args.parameter_set, allowed_sets)
    ops = plan.X25519_OPERATIONS if args.implementation == "x25519" else plan.ML_KEM_OPERATIONS
    check_choice("kem-cell", "operation", args.operation, ops)
    return _run("kem-cell", args, CyclesCell(args.implementation, args.parameter_set, args.operation))


def throughput_main(args) -> int:
    check_choice("kem-throughput", "implementation", args.implementation, plan.ML_KEM_IMPLEMENTATIONS)
    check_choice("kem-throughput", "parameter-set", args.parameter_set, [f"ML-KEM-{lv}" for lv in plan.LEVELS])
    check_choice("kem-throughput", "operation", args.operation, plan.THROUGHPUT_OPERATIONS)
    if args.threads < 1:
        raise SystemExit(f"parbench kem-throughput: --threads must be >= 1 (got {args.threads})")
    if args.rep < 0:
        raise SystemExit(f"parbench kem-throughput: --rep must be >= 0 (got {args.rep})")
    return _run("kem-throughput", args, ThroughputCell(args.implementation, args.parameter_set, args.operation,
                                                       args.threads, args.rep))


def _common(parser) -> None:
    parser.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    parser.add_argument("--binary", default=plan.BINARY, help="the parbench-kem binary")
    parser.add_argument("--out", help="output path (default: the pipeline's path)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. kem.iterations=5000")


def _cell_arguments(parser) -> None:
    _common(parser)
    parser.add_argument("--implementation", required=True, help=", ".join(plan.IMPLEMENTATIONS))
    parser.add_argument("--parameter-set", required=True, help="ML-KEM-512, ML-KEM-768, ML-KEM-1024 or X25519")
    parser.add_argument("--operation", required=True, help="keypair, encaps, decaps (X25519: keypair, derive)")
    parser.add_argument("--liboqs", help="the pipeline's liboqs folder (for the liboqs implementation)")


def add_commands(sub) -> None:
    p = sub.add_parser("kem-counters", help="record the kem study's cycle counters and the one its cells use")
    _common(p)
    p.set_defaults(func=counters)
    p = sub.add_parser("kem-cell", help="measure one kem cycles cell with the parbench-kem binary")
    _cell_arguments(p)
    p.set_defaults(func=cell_main)
    p = sub.add_parser("kem-throughput", help="measure one kem thread-sweep cell with the parbench-kem binary")
    _cell_arguments(p)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--rep", type=int, default=0, help="which repetition of the point this is (from 0; default 0)")
    p.set_defaults(func=throughput_main)
