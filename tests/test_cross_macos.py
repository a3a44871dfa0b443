"""Every C and C++ file of native/ compiles for macOS, arm64 and x86-64, checked from Linux
with zig's cross compiler (PyPI `ziglang`, pinned in requirements.lock), with the
Makefiles' own flags: the sched driver, its C tests, the headless fracsteal explorer and
the kem counter HAL's test also link against macOS's libSystem (zig ships its stubs).

What macOS lacks shows up here: pthread_barrier_t, cpu_set_t and pthread_setaffinity_np,
/proc, and sysconf's _SC_NPROCESSORS_ONLN under -D_POSIX_C_SOURCE. Headers of libraries
macOS gets from Homebrew (OpenSSL, SDL2, TBB, libomp's omp.h) come from this machine's
Debian packages, through a private include folder that holds only them: never
-I/usr/include, which would hide the macOS libc headers behind glibc's. liboqs's headers
are those of the liboqs build the other tests use. The libraries themselves are not
linked (no macOS OpenSSL here): those files are compiled only.

What this cannot show: that the binaries run on a Mac (kperf cycles, powermetrics,
P/E-core placement, Homebrew's actual prefixes); see the README's list.

The first run on a machine also builds zig's compiler-rt for each target (cached in
zig's global cache, ~/.cache/zig, afterwards)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NATIVE = REPO / "native"
SCHED = NATIVE / "sched"
FRACSTEAL = SCHED / "fracsteal"
CRYPTOSHIM = NATIVE / "cryptoshim"
KEM_HAL = NATIVE / "kem" / "src" / "cycle_counter"
TARGETS = ["aarch64-macos", "x86_64-macos"]

try:
    import ziglang
    ZIG = Path(ziglang.__file__).parent / "zig"
except ImportError:
    ZIG = None

pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(ZIG is None or not ZIG.exists(), reason="zig is not installed (PyPI ziglang, in requirements.lock)"),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]


def zig(target: str, tool: str = "cc") -> str:
    """The compiler command for make's CC/CXX."""
    return f"{ZIG} {tool} -target {target}"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)


def ok(proc: subprocess.CompletedProcess, what: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{what} failed (exit {proc.returncode}):\n{out[-6000:]}"
    # our own code compiles without a warning for macOS (the Linux builds have none
    # either); the stand-in headers (gcc's omp.h under clang) may warn about themselves
    warnings = [line for line in out.splitlines() if "warning:" in line and line.startswith(str(REPO))]
    assert not warnings, f"{what}: warnings for macOS:\n" + "\n".join(warnings[:20])
    return out


def macho(path: Path) -> bool:
    """A Mach-O 64-bit executable or object (the magic 0xfeedfacf, little-endian)."""
    return path.read_bytes()[:4] == b"\xcf\xfa\xed\xfe"


def _multiarch() -> str:
    proc = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True)
    return proc.stdout.strip() or "x86_64-linux-gnu"


@pytest.fixture(scope="session")
def homebrew_like_prefix(tmp_path_factory) -> Path:
    """A prefix laid out as Homebrew's (`<prefix>/include/...`) holding only the headers of
    the libraries macOS gets from Homebrew, linked from this machine's packages: OpenSSL
    (with Debian's multiarch configuration headers beside the rest), SDL2, TBB (tbb/ and
    oneapi/) and OpenMP's omp.h (gcc's; libomp's declares the same API). Missing ones are
    simply absent (the tests that need them skip, naming the package)."""
    prefix = tmp_path_factory.mktemp("homebrew-like")
    include = prefix / "include"
    include.mkdir()
    arch = _multiarch()
    for name in ("openssl", "SDL2"):
        dirs = [Path("/usr/include") / name, Path("/usr/include") / arch / name]
        if not dirs[0].is_dir():
            continue
        (include / name).mkdir()
        for d in dirs:
            for f in d.glob("*.h") if d.is_dir() else ():
                (include / name / f.name).unlink(missing_ok=True)
                (include / name / f.name).symlink_to(f)
    # Debian's SDL_config.h wraps the multiarch <SDL2/_real_SDL_config.h>, SDL's build
    # configuration for x86-64 Linux; Homebrew's is the configuration of its own build
    # for that CPU: stand in with Debian's, minus the x86 intrinsics header elsewhere
    if (include / "SDL2" / "_real_SDL_config.h").exists():
        (include / "SDL2" / "SDL_config.h").unlink()
        (include / "SDL2" / "SDL_config.h").write_text(
            "/* stand-in for Homebrew's SDL_config.h (tests/test_cross_macos.py) */\n"
            '#include "_real_SDL_config.h"\n'
            "#if !defined(__x86_64__) && !defined(__i386__)\n#undef HAVE_IMMINTRIN_H\n#endif\n")
    for name in ("tbb", "oneapi"):
        if (Path("/usr/include") / name).is_dir():
            (include / name).symlink_to(Path("/usr/include") / name)
    omp = subprocess.run(["gcc", "-print-file-name=include/omp.h"], capture_output=True, text=True).stdout.strip()
    if omp and Path(omp).is_file():
        (include / "omp.h").symlink_to(omp)
    return prefix


def _need(prefix: Path, header: str, package: str) -> None:
    if not (prefix / "include" / header).exists():
        pytest.skip(f"{header} is missing here (Debian: {package}), so it cannot be cross-compiled")


@pytest.fixture(scope="session")
def oqs_include(liboqs_dir) -> Path:
    for candidate in (liboqs_dir / "build" / "include", liboqs_dir / "include"):
        if (candidate / "oqs" / "oqs.h").is_file():
            return candidate
    pytest.skip(f"no liboqs headers under {liboqs_dir}")


@pytest.mark.parametrize("target", TARGETS)
def test_sched_driver_and_c_tests_link_for_macos(tmp_path, target):
    build = tmp_path / "sched"
    tests = [str(build / "test" / t) for t in ("test_deque", "test_sched", "test_stress", "test_workloads")]
    out = ok(run(["make", "-j2", "-C", str(SCHED), f"BUILD_DIR={build}", f"CC={zig(target)}",
                  f"CXX={zig(target, 'c++')}", "PBS_WITH_OPENMP=0", "PBS_WITH_TBB=0", "all", *tests]),
             f"make (sched) for {target}")
    assert "-D_POSIX_C_SOURCE=200809L" in out  # the Makefile's own flags
    for binary in [build / "parbench-sched", *map(Path, tests)]:
        assert macho(binary), binary


@pytest.mark.parametrize("target", TARGETS)
def test_sched_peers_compile_for_macos_as_with_homebrew(tmp_path, target, homebrew_like_prefix):
    """The OpenMP peer with Apple clang's flags for Homebrew's libomp, the TBB peer against
    Homebrew's tbb prefix: the Makefile's own variables, pointed at the private prefix."""
    inc = homebrew_like_prefix / "include"
    build = tmp_path / "sched"
    goals = []
    if (inc / "omp.h").exists():
        goals.append(str(build / "release" / "pbs_peer_openmp_omp.o"))
    if (inc / "tbb").exists():
        goals.append(str(build / "release" / "pbs_peer_tbb.o"))
    if not goals:
        pytest.skip("neither omp.h (gcc) nor TBB's headers (Debian: libtbb-dev) are here")
    ok(run(["make", "-C", str(SCHED), f"BUILD_DIR={build}", f"CC={zig(target)}", f"CXX={zig(target, 'c++')}",
            "PBS_WITH_OPENMP=1", "PBS_WITH_TBB=1", f"OMP_CFLAGS=-Xpreprocessor -fopenmp -I{inc}",
            f"TBB_PREFIX={homebrew_like_prefix}", *goals]), f"make (sched peers) for {target}")
    for goal in goals:
        assert macho(Path(goal)), goal


@pytest.mark.parametrize("target", TARGETS)
def test_fracsteal_headless_links_and_the_window_compiles_for_macos(tmp_path, target, homebrew_like_prefix):
    out_dir = tmp_path / "fracsteal"
    ok(run(["make", "-C", str(FRACSTEAL), f"OUT_DIR={out_dir}", f"CC={zig(target)}", "headless"]),
       f"make headless for {target}")
    assert macho(out_dir / "fracsteal-headless")
    _need(homebrew_like_prefix, "SDL2/SDL.h", "libsdl2-dev")
    obj = out_dir / "fracsteal.obj" / "release"
    # SDL2's own flags as Homebrew's sdl2 gives them; the check links SDL_Init, which has
    # no macOS library here: -undefined dynamic_lookup leaves it to run time
    ok(run(["make", "-C", str(FRACSTEAL), f"OUT_DIR={out_dir}", f"CC={zig(target)}",
            f"SDL2_CFLAGS=-I{homebrew_like_prefix / 'include' / 'SDL2'} -D_THREAD_SAFE",
            "SDL2_LIBS=-Wl,-undefined,dynamic_lookup", str(obj / "fs_window.o"), str(obj / "fracsteal_sdl.o")]),
       f"make (the window's objects) for {target}")
    assert macho(obj / "fs_window.o") and macho(obj / "fracsteal_sdl.o")


def _make_var(name: str, *args: str) -> str:
    proc = run(["make", "-s", "-C", str(CRYPTOSHIM), *args, f"print-{name}"])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize("target", TARGETS)
def test_cryptoshim_compiles_for_macos_with_homebrews_openssl(tmp_path, target, homebrew_like_prefix, oqs_include):
    """The shim, the native runner (its portable barrier, no pinning, task_info memory) and
    the C tests, with the Makefile's flags for a Homebrew-style OPENSSL_PREFIX and a liboqs."""
    _need(homebrew_like_prefix, "openssl/evp.h", "libssl-dev")
    liboqs = tmp_path / "liboqs"
    (liboqs / "lib").mkdir(parents=True)
    (liboqs / "include").symlink_to(oqs_include)
    args = [f"CC={zig(target)}", f"OPENSSL_PREFIX={homebrew_like_prefix}", f"LIBOQS_PREFIX={liboqs}"]
    cflags = _make_var("CFLAGS_ALL", *args).split() + _make_var("OPT", *args).split()
    assert f"-I{homebrew_like_prefix}/include" in cflags and "-DPBC_WITH_LIBOQS" in cflags
    for src in (CRYPTOSHIM / "pbc_signer.c", CRYPTOSHIM / "pbc_runner.c", CRYPTOSHIM / "tests" / "test_signer.c"):
        obj = tmp_path / (src.stem + ".o")
        ok(run([str(ZIG), "cc", "-target", target, *cflags, f"-I{CRYPTOSHIM}", "-c", str(src), "-o", str(obj)]),
           f"{src.name} for {target}")
        assert macho(obj)


@pytest.mark.parametrize("target", TARGETS)
def test_the_liboqs_compat_shim_compiles_for_macos(tmp_path, target, oqs_include):
    # the flags parbench.native.liboqs builds it with
    obj = tmp_path / "oqs_compat_shim.o"
    ok(run([str(ZIG), "cc", "-target", target, "-O2", "-fPIC", f"-I{oqs_include}", "-c",
            str(NATIVE / "liboqs" / "oqs_compat_shim.c"), "-o", str(obj)]), f"oqs_compat_shim.c for {target}")
    assert macho(obj)


@pytest.mark.parametrize("target", TARGETS)
def test_the_kem_counter_hal_and_its_test_link_for_macos(tmp_path, target):
    """hal.c's macOS branch (kperf through dlopen) compiles, with build.rs's warnings, and
    links with its C test."""
    exe = tmp_path / "hal_test"
    ok(run([str(ZIG), "cc", "-target", target, "-std=c11", "-O2", "-Wall", "-Wextra", f"-I{KEM_HAL}",
            str(KEM_HAL / "hal.c"), str(NATIVE / "kem" / "tests" / "hal_test.c"), "-o", str(exe)]),
       f"hal_test for {target}")
    assert macho(exe)


@pytest.mark.parametrize("target", TARGETS)
def test_the_gil_native_control_links_for_macos(tmp_path, target):
    """The gil study's native control, with the flags of its rule (gil_control_build)."""
    exe = tmp_path / "gil_control"
    ok(run([str(ZIG), "cc", "-target", target, "-O2", "-Wall", "-Wextra", "-pthread",
            str(NATIVE / "gilcontrol" / "gil_control.c"), "-o", str(exe)]), f"gil_control for {target}")
    assert macho(exe)


COVERED = {
    # file (relative to native/) -> the test above that compiles it
    **{f"sched/{d}/{f}": "sched" for d, files in {
        "lib": ["pbs_sched.c", "pbs_backoff.c", "pbs_deque.c", "pbs_stack.c", "pbs_inject.c", "pbs_lifo.c",
                "pbs_ws.c", "pbs_ws_sync.c"],
        "workloads": ["pbs_quicksort.c", "pbs_mandel.c", "pbs_peer_openmp.c", "pbs_peer_tbb_stub.c"],
        "driver": ["parbench_sched.c", "pbs_json.c", "pbs_cli.c"],
        "tests": ["test_deque.c", "test_sched.c", "test_stress.c", "test_workloads.c"]}.items() for f in files},
    "sched/workloads/pbs_peer_tbb.cpp": "sched peers",
    **{f"sched/fracsteal/{f}": "fracsteal" for f in ("fs_view.c", "fs_scheme.c", "fs_font.c", "fs_render.c",
                                                    "fs_script.c", "fs_headless.c", "fracsteal.c", "fs_window.c")},
    "cryptoshim/pbc_signer.c": "cryptoshim", "cryptoshim/pbc_runner.c": "cryptoshim",
    "cryptoshim/tests/test_signer.c": "cryptoshim",
    "liboqs/oqs_compat_shim.c": "liboqs shim",
    "kem/src/cycle_counter/hal.c": "kem hal", "kem/tests/hal_test.c": "kem hal",
    "gilcontrol/gil_control.c": "gil control",
}


def test_every_c_file_of_native_is_cross_compiled_here():
    """A new C file must be added to a test above (and to COVERED)."""
    found = {str(p.relative_to(NATIVE)) for ext in ("*.c", "*.cpp") for p in NATIVE.rglob(ext)
             if "build" not in p.relative_to(NATIVE).parts and "target" not in p.relative_to(NATIVE).parts}
    assert found == set(COVERED), f"not covered: {sorted(found - set(COVERED))}; gone: {sorted(set(COVERED) - found)}"


def test_the_makefiles_look_under_homebrews_prefixes(tmp_path):
    """As on a Mac with Homebrew and Apple clang: `-fopenmp` alone fails, `brew --prefix`
    answers, pkg-config knows no OpenSSL (openssl@3 is keg-only). A stand-in `brew` says
    where each formula lives; the Makefiles must then use those prefixes and Apple
    clang's OpenMP flags."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    brew = bin_dir / "brew"
    brew.write_text(f'#!/bin/sh\n[ "$1" = --prefix ] && echo "{tmp_path}/opt/$2"\n')
    brew.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PKG_CONFIG_LIBDIR=str(tmp_path / "no-pc"))
    cc = zig("aarch64-macos")
    out = ok(run(["make", "-s", "-C", str(SCHED), f"BUILD_DIR={tmp_path / 'b'}", f"CC={cc}",
                  f"CXX={zig('aarch64-macos', 'c++')}", "config"], env=env), "make config")
    omp = tmp_path / "opt" / "libomp"
    assert f"-Xpreprocessor -fopenmp -I{omp}/include / -L{omp}/lib -lomp" in out, out
    assert f"(under {tmp_path / 'opt' / 'tbb'})" in out, out
    flags = run(["make", "-s", "-C", str(CRYPTOSHIM), f"CC={cc}", "print-OPENSSL_CFLAGS", "print-OPENSSL_LIBS"],
                env=env).stdout.split("\n")
    assert flags[:2] == [f"-I{tmp_path}/opt/openssl@3/include", f"-L{tmp_path}/opt/openssl@3/lib -lcrypto"], flags
    # SDL2: neither pkg-config nor sdl2-config on PATH, only brew (and echo for make)
    (bin_dir / "echo").symlink_to(shutil.which("echo"))
    make = shutil.which("make")
    sdl = run([make, "-s", "-C", str(FRACSTEAL), f"CC={cc}", "print-SDL2_CFLAGS", "print-SDL2_LIBS"],
              env=dict(env, PATH=str(bin_dir))).stdout.split("\n")
    sdl2 = tmp_path / "opt" / "sdl2"
    assert sdl[:2] == [f"-I{sdl2}/include/SDL2 -D_THREAD_SAFE", f"-L{sdl2}/lib -lSDL2"], sdl
