"""CPython built from source for the gil study: a default (GIL) and a free-threaded
(`--disable-gil`) interpreter of the same source and flags, so that the free-threaded
build's cost and the GIL's own can be measured on this machine when none is installed.

A runtime whose command alternative is `{build:default}` or `{build:freethreaded}`
(`runtimes.py`) is one of these. Two Snakemake rules of the study (workflow/rules/gil.smk)
make them, and the cells of those runtimes take the build's record as input:

1. `parbench gil-cpython-source --out native/build/cpython/source.json`: the source, from
   the first of
   - a tarball the user names: PARBENCH_CPYTHON_SOURCE=/path/Python-3.14.x.tar.xz;
   - the Debian source archive of this machine's own apt configuration: a private
     deb-src list on the Debian mirror the machine already uses (no host is written in
     the project), the suites of `gil.cpython.debian_suites`, the packages
     `python<version>` of `gil.cpython.versions`; apt checks the archive's signature and
     the files' checksums; the newest pinned version that downloads wins, else the newest
     that downloads. Only the upstream tarball (`*.orig.tar.xz`) is used, without
     Debian's patches.
   A tarball whose version `gil.cpython.pins` names must have that SHA-256; another
   version is built and recorded as not pinned. No source: the record says why and the
   command that would fix it, and the runtimes built from it are not measured.
2. `parbench gil-cpython-build --flavour default|freethreaded`: configure out of tree into
   `native/build/cpython/<version>-<flavour>/` with `gil.cpython.configure_args` (no PGO,
   no LTO), the modules of `gil.cpython.skip_modules` not built (configure's
   `py_cv_module_<name>=n/a`: what the worker never imports), `make -j<cores>`; then the
   interpreter is asked what it is (a free-threaded build must say Py_GIL_DISABLED) and
   whether it imports what the worker needs. The build is cached by its inputs (the
   source's SHA-256, the flags, the skipped modules, this module's BUILD_VERSION): a
   build folder whose stamp has the same key is reused without compiling.

Either step writes a record (JSON) and exits 0 when the source or the build is not to be
had (a run never fails for it); it exits 1 only on a bug-like failure of a step that had
what it needed (configure or make failing on a source that is there), with the log's tail.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from parbench.records import write_atomic

SOURCE_ENV = "PARBENCH_CPYTHON_SOURCE"
# where this machine's apt configuration is (tests point it elsewhere)
APT_DIR = "/etc/apt"
ROOT = "native/build/cpython"
SOURCE_RECORD = f"{ROOT}/source.json"
FLAVOURS = {"default": [], "freethreaded": ["--disable-gil"]}
# bump when the build steps change in a way that changes the interpreter built
BUILD_VERSION = 1
STAMP = "parbench-build.json"
# what the worker imports (worker.py), checked in the interpreter built
WORKER_MODULES = ("json", "platform", "threading", "time", "traceback", "hashlib", "multiprocessing", "sysconfig")
FIX = (f"set {SOURCE_ENV}=/path/to/Python-3.14.x.tar.xz (a source tarball from python.org), or put a "
       f"free-threaded interpreter on PATH (python3.14t; with uv: uv python install 3.14t)")
TARBALL = re.compile(r"(?:Python-|python3\.\d+_)(\d+\.\d+\.\d+)(?:\.orig)?\.(?:tar\.xz|tar\.gz|tgz)$")


def build_record(flavour: str) -> str:
    """The record of one flavour's build (a Snakemake output; the build itself is beside it)."""
    return f"{ROOT}/{flavour}.json"


def log(msg: str) -> None:
    print(f"[cpython] {msg}", file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def version_key(version: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


# --- where the source comes from -----------------------------------------------------------

def tarball_version(path: Path) -> str | None:
    """The CPython version of a source tarball: from its name (Python-3.14.2.tar.xz, or
    Debian's python3.13_3.13.5.orig.tar.xz), else from Include/patchlevel.h inside it."""
    m = TARBALL.search(Path(path).name)
    if m:
        return m.group(1)
    try:
        with tarfile.open(path) as tar:
            for member in tar:
                if member.name.endswith("Include/patchlevel.h"):
                    text = tar.extractfile(member).read().decode("utf-8", "replace")
                    found = re.search(r'#define\s+PY_VERSION\s+"([^"]+)"', text)
                    return found.group(1).rstrip("+") if found else None
    except (OSError, tarfile.TarError):
        return None
    return None


def _deb822_entries(text: str) -> list[dict]:
    entries = []
    for block in re.split(r"\n\s*\n", text):
        fields, key = {}, None
        for line in block.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0].isspace() and key:
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if fields:
            entries.append(fields)
    return entries


def debian_mirrors(apt_dir: str | Path = "/etc/apt") -> list[dict]:
    """The Debian archives this machine's apt configuration uses for binary packages, as
    {"uri", "keyring"} (keyring: the entry's Signed-By, or None for apt's trusted keys):
    the main archive, not the security one. Reads sources.list and sources.list.d/
    (one-line `.list` and deb822 `.sources`); files it cannot read are skipped."""
    apt_dir = Path(apt_dir)
    files = [apt_dir / "sources.list"] + sorted((apt_dir / "sources.list.d").glob("*.list")) \
        + sorted((apt_dir / "sources.list.d").glob("*.sources"))
    found = []
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":
            for e in _deb822_entries(text):
                if "deb" in e.get("types", "").split() and e.get("enabled", "yes").lower() != "no":
                    for uri in e.get("uris", "").split():
                        found.append({"uri": uri, "keyring": e.get("signed-by") or None,
                                      "suites": e.get("suites", "").split()})
            continue
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if not words or words[0] != "deb":
                continue
            options, rest = {}, words[1:]
            if rest and rest[0].startswith("["):
                opts = []
                while rest:
                    opts.append(rest.pop(0))
                    if opts[-1].endswith("]"):
                        break
                for opt in " ".join(opts).strip("[]").split():
                    k, _, v = opt.partition("=")
                    options[k] = v
            if len(rest) >= 2:
                found.append({"uri": rest[0], "keyring": options.get("signed-by"), "suites": [rest[1]]})
    out, seen = [], set()
    for m in found:
        uri = m["uri"].rstrip("/")
        # the Debian archive itself: a path ending in /debian (deb.debian.org/debian, a
        # local mirror's .../debian), not debian-security or another vendor's
        if not uri.endswith("/debian") or uri in seen:
            continue
        seen.add(uri)
        out.append({"uri": uri, "keyring": m["keyring"]})
    return out


def source_plan(cpython_cfg: dict, env: dict | None = None, apt_dir: str | Path | None = None,
                record: str | Path | None = None) -> tuple[str | None, str | None]:
    """Cheap, at planning time (no network): (how the source will be had, None) or (None,
    why not, with the fix). How: "tarball <path>", "fetched" (an earlier fetch's record
    says available), or "debian <mirror>" (to be fetched by the source rule)."""
    env = os.environ if env is None else env
    apt_dir = APT_DIR if apt_dir is None else apt_dir
    named = env.get(SOURCE_ENV, "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            return None, f"{SOURCE_ENV}={named} is not a file; {FIX}"
        return f"tarball {path.resolve()}", None
    record = Path(record or SOURCE_RECORD)
    if record.exists():
        try:
            doc = json.loads(record.read_text())
        except ValueError:
            doc = {}
        if doc.get("available") and Path(doc.get("tarball", "")).is_file():
            return "fetched", None
    if shutil.which("apt-get", path=env.get("PATH")) is None:
        return None, f"no CPython source: {SOURCE_ENV} is not set and this machine has no apt-get; {FIX}"
    if not cpython_cfg.get("debian_suites"):
        return None, f"no CPython source: {SOURCE_ENV} is not set and gil.cpython.debian_suites is empty; {FIX}"
    mirrors = debian_mirrors(apt_dir)
    if not mirrors:
        return None, (f"no CPython source: {SOURCE_ENV} is not set and this machine's apt configuration "
                      f"({apt_dir}) names no Debian archive; {FIX}")
    return f"debian {mirrors[0]['uri']}", None


def _apt_options(work: Path) -> list[str]:
    """apt options that keep everything in `work`: its own source list, lists and cache,
    never the machine's (absolute: apt reads a relative one against its root, /)."""
    work = work.resolve()
    return ["-o", f"Dir::Etc::SourceList={work / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={work / 'lists'}", "-o", f"Dir::Cache={work / 'cache'}",
            "-o", "APT::Sandbox::User=root"]


def _run(cmd: list[str], cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _tail(text: str, lines: int = 6) -> str:
    return " / ".join(text.strip().splitlines()[-lines:])


def debian_candidates(showsrc: str) -> list[dict]:
    """Source packages in `apt-cache showsrc` output: package, Debian version, upstream
    version, the orig tarball's name and SHA-256."""
    out = []
    for block in re.split(r"\n\s*\n", showsrc):
        fields = {}
        key = None
        for line in block.splitlines():
            if line[:1].isspace() and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" not in fields or "Version" not in fields:
            continue
        orig = [ln.split() for ln in fields.get("Checksums-Sha256", "").splitlines()
                if ln.strip().endswith(".orig.tar.xz") or ln.strip().endswith(".orig.tar.gz")]
        if not orig:
            continue
        sha, _size, name = orig[0]
        m = TARBALL.search(name)
        if not m:
            continue
        out.append({"package": fields["Package"], "debian_version": fields["Version"], "version": m.group(1),
                    "orig": name, "sha256": sha})
    return out


def fetch_debian(cpython_cfg: dict, work: Path, mirror: dict) -> dict:
    """The newest CPython source of `versions` that downloads from the Debian archive."""
    for sub in ("lists/partial", "cache/archives/partial", "download"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    signed = f" [signed-by={mirror['keyring']}]" if mirror.get("keyring") else ""
    (work / "sources.list").write_text("".join(f"deb-src{signed} {mirror['uri']} {suite} main\n"
                                               for suite in cpython_cfg["debian_suites"]))
    opts = _apt_options(work)
    update = _run(["apt-get", *opts, "update"], timeout=600)
    if update.returncode != 0:
        return {"available": False, "reason": f"apt-get update of the deb-src list on {mirror['uri']} failed: "
                                              f"{_tail(update.stderr)}; {FIX}"}
    candidates, tried = [], []
    for version in cpython_cfg["versions"]:
        shown = _run(["apt-cache", *opts, "showsrc", f"python{version}"], timeout=120)
        if shown.returncode == 0:
            candidates += debian_candidates(shown.stdout)
    # a pinned version first (the newest that downloads), then the newest unpinned one
    pins = cpython_cfg.get("pins", {})
    candidates.sort(key=lambda c: (pins.get(c["version"]) == c["sha256"], version_key(c["version"])), reverse=True)
    for c in candidates:
        dest = work / "download" / c["debian_version"]
        dest.mkdir(parents=True, exist_ok=True)
        got = _run(["apt-get", *opts, "source", "--download-only", f"{c['package']}={c['debian_version']}"],
                   cwd=dest, timeout=1800)
        tarball = dest / c["orig"]
        if got.returncode != 0 or not tarball.is_file():
            tried.append(f"{c['package']} {c['debian_version']}: {_tail(got.stderr, 2) or 'no tarball'}")
            continue
        digest = sha256_of(tarball)
        if digest != c["sha256"]:
            tried.append(f"{c['package']} {c['debian_version']}: SHA-256 {digest} is not the archive's {c['sha256']}")
            continue
        return {"available": True, "origin": "debian", "mirror": mirror["uri"], "package": c["package"],
                "debian_version": c["debian_version"], "version": c["version"], "tarball": str(tarball.resolve()),
                "sha256": digest, "tried": tried}
    wanted = ", ".join(f"python{v}" for v in cpython_cfg["versions"])
    return {"available": False,
            "reason": (f"no source of {wanted} downloads from {mirror['uri']} (suites "
                       f"{', '.join(cpython_cfg['debian_suites'])})" + (f": {'; '.join(tried)}" if tried else "")
                       + f"; {FIX}")}


def fetch(cpython_cfg: dict, root: Path, env: dict | None = None, apt_dir: str | Path | None = None) -> dict:
    """The source record: the tarball the user names, else an earlier fetch that is still
    there, else the Debian source archive; checked against `pins`."""
    env = os.environ if env is None else env
    apt_dir = APT_DIR if apt_dir is None else apt_dir
    how, why = source_plan(cpython_cfg, env, apt_dir, record=root / "source.json")
    if how is None:
        doc = {"available": False, "reason": why}
    elif how.startswith("tarball "):
        path = Path(how.split(" ", 1)[1])
        version = tarball_version(path)
        doc = ({"available": True, "origin": "tarball", "tarball": str(path), "version": version,
                "sha256": sha256_of(path)} if version else
               {"available": False, "reason": f"{SOURCE_ENV}={path}: not a CPython source tarball (no "
                                              f"Include/patchlevel.h found); {FIX}"})
    elif how == "fetched":
        doc = json.loads((root / "source.json").read_text())
        doc.pop("pinned", None)
    else:
        doc = fetch_debian(cpython_cfg, root / "source" / "apt", debian_mirrors(apt_dir)[0])
    if doc.get("available"):
        pinned = cpython_cfg.get("pins", {}).get(doc["version"])
        if pinned and pinned != doc["sha256"]:
            doc = {"available": False, "reason": (f"the CPython {doc['version']} source {doc['tarball']} has SHA-256 "
                                                  f"{doc['sha256']}, not the pinned {pinned} (gil.cpython.pins); "
                                                  f"{FIX}")}
        else:
            doc["pinned"] = bool(pinned)
    doc["checked_unix"] = time.time()
    return doc


# --- the build ------------------------------------------------------------------------------------

def build_key(source: dict, flavour: str, cpython_cfg: dict) -> str:
    what = {"sha256": source["sha256"], "flavour": FLAVOURS[flavour], "configure": cpython_cfg["configure_args"],
            "skip": sorted(cpython_cfg["skip_modules"]), "build_version": BUILD_VERSION}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def configure_command(source_dir: Path, flavour: str, cpython_cfg: dict) -> list[str]:
    return [str(source_dir / "configure"), *FLAVOURS[flavour], *cpython_cfg["configure_args"],
            *[f"py_cv_module_{name}=n/a" for name in cpython_cfg["skip_modules"]]]


PROBE = ("import json, sys, sysconfig, importlib\n"
         "mods = {}\n"
         "for m in sys.argv[1:]:\n"
         "    try:\n"
         "        importlib.import_module(m); mods[m] = True\n"
         "    except Exception as e:\n"
         "        mods[m] = repr(e)\n"
         "print(json.dumps({'version': sys.version.split()[0], 'sys_version': sys.version,\n"
         "  'py_gil_disabled': bool(sysconfig.get_config_var('Py_GIL_DISABLED')),\n"
         "  'gil_enabled': sys._is_gil_enabled() if hasattr(sys, '_is_gil_enabled') else True,\n"
         "  'modules': mods}))\n")


def probe(python: Path) -> dict:
    """What the interpreter says it is, and whether it imports the worker's modules."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([str(python), "-c", PROBE, *WORKER_MODULES], capture_output=True, text=True, timeout=300,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{python} could not describe itself: {_tail(proc.stderr)}")
    return json.loads(proc.stdout)


def check_probe(info: dict, flavour: str) -> str | None:
    """None when the interpreter is what the flavour promises, else what is wrong."""
    if info["py_gil_disabled"] != (flavour == "freethreaded"):
        return (f"the {flavour} build says Py_GIL_DISABLED={info['py_gil_disabled']}")
    bad = {m: v for m, v in info["modules"].items() if v is not True}
    if bad:
        return "the build cannot import what the worker needs: " + "; ".join(f"{m}: {v}" for m, v in bad.items())
    return None


def _extract(tarball: Path, root: Path, version: str, sha: str) -> Path:
    """The source tree (extracted once per tarball, shared by both flavours)."""
    dest = root / "source" / f"Python-{version}-{sha[:12]}"
    if (dest / "configure").exists():
        return dest
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp, filter="tar") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
    inner = [p for p in tmp.iterdir() if p.is_dir()]
    if len(inner) != 1 or not (inner[0] / "configure").exists():
        raise RuntimeError(f"{tarball} does not hold one CPython source folder with a configure script")
    shutil.rmtree(dest, ignore_errors=True)
    inner[0].rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def build(source: dict, flavour: str, cpython_cfg: dict, root: Path, jobs: int) -> dict:
    """Build (or reuse) one flavour; returns its record."""
    if flavour not in FLAVOURS:
        raise ValueError(f"unknown CPython flavour {flavour!r}; allowed: {', '.join(FLAVOURS)}")
    if not source.get("available"):
        return {"available": False, "flavour": flavour, "reason": source.get("reason"), "source": source}
    key = build_key(source, flavour, cpython_cfg)
    out = root / f"{source['version']}-{flavour}"
    python = out / "python"
    stamp = out / STAMP
    record = {"available": True, "flavour": flavour, "version": source["version"], "python": str(python.resolve()),
              "build_dir": str(out.resolve()), "key": key, "source": source,
              "configure": configure_command(Path("<source>"), flavour, cpython_cfg)[1:],
              "skipped_modules": sorted(cpython_cfg["skip_modules"]), "jobs": jobs}
    if stamp.exists() and python.exists():
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = {}
        if old.get("key") == key:
            info = probe(python)
            problem = check_probe(info, flavour)
            if problem is None:
                log(f"{flavour}: reusing {out} (same inputs, key {key})")
                return {**record, **{k: old.get(k) for k in ("build_sec", "built_unix")}, "reused": True,
                        "interpreter": info}
            log(f"{flavour}: the cached build is unusable ({problem}); building again")
    source_dir = _extract(Path(source["tarball"]), root, source["version"], source["sha256"])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    started = time.monotonic()
    steps = [configure_command(source_dir.resolve(), flavour, cpython_cfg), ["make", f"-j{jobs}"]]
    with open(out / "build.log", "w") as logfile:
        for cmd in steps:
            log(f"{flavour}: {' '.join(cmd)}")
            logfile.write(f"$ {' '.join(cmd)}\n")
            logfile.flush()
            proc = subprocess.run(cmd, cwd=out, stdout=logfile, stderr=subprocess.STDOUT,
                                  timeout=cpython_cfg["timeout_sec"])
            if proc.returncode != 0:
                tail = (out / "build.log").read_text().strip().splitlines()[-15:]
                raise RuntimeError(f"{flavour}: {' '.join(cmd[:2])} exited {proc.returncode}; the end of "
                                   f"{out / 'build.log'}:\n" + "\n".join(tail))
    elapsed = time.monotonic() - started
    info = probe(python)
    problem = check_probe(info, flavour)
    if problem:
        raise RuntimeError(problem)
    record.update(build_sec=round(elapsed, 1), built_unix=time.time(), reused=False, interpreter=info)
    write_atomic(stamp, json.dumps({"key": key, "build_sec": record["build_sec"],
                                    "built_unix": record["built_unix"]}, indent=1) + "\n")
    log(f"{flavour}: built CPython {info['version']} in {elapsed:.0f} s -> {python}")
    return record


# --- command line ---------------------------------------------------------------------------------

def _cpython_cfg(args) -> dict:
    from parbench import config as pbconfig

    return pbconfig.load_for_command(args.command, args.profile, args.overrides)["gil"]["cpython"]


def source_main(args) -> int:
    doc = fetch(_cpython_cfg(args), Path(args.out).parent)
    write_atomic(Path(args.out), json.dumps(doc, indent=1) + "\n")
    if doc["available"]:
        log(f"source: CPython {doc['version']} from {doc['origin']} ({doc['tarball']}, SHA-256 {doc['sha256']}"
            f"{'' if doc['pinned'] else ', not pinned'})")
    else:
        log(f"warning: no CPython source, the runtimes built from it are not measured: {doc['reason']}")
    return 0


def build_main(args) -> int:
    source = json.loads(Path(args.source).read_text())
    try:
        doc = build(source, args.flavour, _cpython_cfg(args), Path(args.out).parent, args.jobs)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"parbench gil-cpython-build: {exc}", file=sys.stderr)
        return 1
    if not doc["available"]:
        log(f"warning: {args.flavour} not built: {doc['reason']}")
    write_atomic(Path(args.out), json.dumps(doc, indent=1) + "\n")
    return 0


def add_commands(sub) -> None:
    from parbench.cli import positive_int

    p = sub.add_parser("gil-cpython-source", help="find or fetch the CPython source the gil study builds")
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--out", default=SOURCE_RECORD, help=f"the source record (default {SOURCE_RECORD})")
    p.add_argument("overrides", nargs="*", help="Hydra overrides the run uses")
    p.set_defaults(func=source_main, command="gil-cpython-source")
    p = sub.add_parser("gil-cpython-build", help="build (or reuse) one flavour of CPython from the source record")
    p.add_argument("--profile", default="local", help="profile in conf/ (default: local)")
    p.add_argument("--flavour", required=True, choices=list(FLAVOURS))
    p.add_argument("--source", default=SOURCE_RECORD, help="the source record")
    p.add_argument("--out", required=True, help="the build record, native/build/cpython/<flavour>.json")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1, help="make -j (default: every core)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides the run uses")
    p.set_defaults(func=build_main, command="gil-cpython-build")
