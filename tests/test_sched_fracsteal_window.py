"""The fracsteal window, driven for real: an X server (Xvfb), the SDL2 build, keys and the
mouse sent with xdotool, screenshots taken with ImageMagick's `import`.

The test opens the explorer, checks its first picture, presses the arrow keys, points the
mouse and zooms with + and the wheel, then compares the window, pixel for pixel, with the
scripted mode's frame of the same moves (the overlay with the frame times aside, which
must be there), turns on the sequential comparison (s) and switches the colour scheme
(c), and quits with q. It is skipped, with the reason, only where Xvfb, xdotool, import
or SDL2's development files are missing (Debian: xvfb, xdotool, imagemagick,
libsdl2-dev; `make test` installs them as root).
"""

from __future__ import annotations

import os
import queue
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from parbench.figures.ppm import read_ppm

REPO = Path(__file__).resolve().parents[1]
FRACSTEAL_DIR = REPO / "native" / "sched" / "fracsteal"
W, H = 320, 240
# the overlay (frame times, "h: keys") sits in the top-left corner, within these rows at
# this size (4 lines of 10 pixels and a margin); the picture below it is compared exactly
OVERLAY_ROWS = 60
VIEW = re.compile(r"view (\S+) (\S+) (\S+), (\d+) iterations, scheme (\w+)$")

_tools = {"Xvfb": "xvfb", "xdotool": "xdotool", "import": "imagemagick", "make": "make", "gcc": "gcc"}
_missing = [f"{tool} (Debian: {pkg})" for tool, pkg in _tools.items() if shutil.which(tool) is None]
pytestmark = [
    pytest.mark.native,
    pytest.mark.skipif(bool(_missing), reason=f"cannot drive the window here: {', '.join(_missing)} not installed"),
]


@pytest.fixture(scope="module")
def binaries(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("fracsteal-window-build")
    proc = subprocess.run(["make", "-j2", "-C", str(FRACSTEAL_DIR), f"OUT_DIR={out}", "fracsteal", "headless"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "libsdl2-dev" in proc.stderr:
        pytest.skip("SDL2's development files are not installed (Debian: libsdl2-dev)")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"window": out / "fracsteal", "headless": out / "fracsteal-headless"}


@pytest.fixture(scope="module")
def display():
    """A fresh Xvfb on a display number it picks itself; stopped after the module."""
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 30)
        number = os.read(read_fd, 64).decode().strip() if ready else ""
        assert number.isdigit(), "Xvfb did not report its display within 30 s"
        yield f":{number}"
    finally:
        os.close(read_fd)
        os.killpg(xvfb.pid, signal.SIGTERM)
        try:
            xvfb.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(xvfb.pid, signal.SIGKILL)
            xvfb.wait()


class Window:
    """The running explorer: its stdout lines (one per frame on screen) and its X window."""

    def __init__(self, binary: Path, display: str):
        self.env = dict(os.environ, DISPLAY=display)
        self.proc = subprocess.Popen([str(binary), "--width", str(W), "--height", str(H), "--threads", "2",
                                      "--max-iter", "300"], env=self.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.id = self.xdotool("search", "--sync", "--onlyvisible", "--name", "fracsteal").split()[0]

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def xdotool(self, *args: str) -> str:
        return subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, check=True,
                              timeout=30).stdout

    def keys(self, *names: str) -> None:
        self.xdotool("windowfocus", "--sync", self.id)
        for name in names:
            self.xdotool("key", "--delay", "40", name)

    def wait_view(self, view: tuple, timeout: float = 60) -> str:
        """The frame line whose view is `view` (x, y, width, iterations, scheme); frames in
        between (a burst of keys may be drawn as one frame or several) are skipped."""
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                assert self.proc.poll() is None, f"fracsteal ended: {self.proc.stderr.read()}"
                continue
            seen.append(line)
            m = VIEW.search(line)
            if m and (float(m[1]), float(m[2]), float(m[3]), int(m[4]), m[5]) == view:
                return line
        raise AssertionError(f"no frame of the view {view} within {timeout} s; frames: {seen}")

    def screenshot(self) -> bytes:
        # generous: on a loaded shared machine one `import` has taken over 30 s
        shot = subprocess.run(["import", "-window", self.id, "-depth", "8", "ppm:-"], env=self.env, capture_output=True,
                              check=True, timeout=120).stdout
        path = Path(self.env.get("TMPDIR", "/tmp")) / f"fracsteal-shot-{os.getpid()}.ppm"
        path.write_bytes(shot)
        try:
            w, h, rgb = read_ppm(path)
        finally:
            path.unlink()
        assert (w, h) == (W, H)
        return rgb

    def wait_picture(self, expected: bytes, timeout: float = 60) -> bytes:
        """A screenshot whose picture below the overlay is `expected`'s (the frame line
        comes after the picture is sent to X; the server may take a moment to show it)."""
        deadline = time.monotonic() + timeout
        while True:
            shot = self.screenshot()
            if below_overlay(shot) == below_overlay(expected) or time.monotonic() > deadline:
                return shot
            time.sleep(0.2)

    def close(self) -> int | None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


def below_overlay(rgb: bytes) -> bytes:
    return rgb[OVERLAY_ROWS * W * 3:]


def overlay(rgb: bytes) -> bytes:
    return rgb[:OVERLAY_ROWS * W * 3]


def scripted(headless: Path, tmp: Path, lines: list[str]) -> tuple[list[bytes], list[tuple]]:
    """Frames and views of the same moves in the scripted mode."""
    script = tmp / "moves.fss"
    script.write_text("\n".join(lines) + "\n")
    out = tmp / "frames"
    proc = subprocess.run([str(headless), "--script", str(script), "--width", str(W), "--height", str(H),
                           "--threads", "2", "--max-iter", "300", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    views = []
    for line in proc.stdout.splitlines():
        m = VIEW.search(line)
        if m and line.startswith("frame "):
            views.append((float(m[1]), float(m[2]), float(m[3]), int(m[4]), m[5]))
    frames = [read_ppm(p)[2] for p in sorted(out.glob("frame_*.ppm"))]
    return frames, views


def test_keys_and_mouse_move_and_zoom_the_window(binaries: dict, display: str, tmp_path: Path) -> None:
    moves = ["frame", "move 0.1 0", "move 0.1 0", "move 0 0.1", "zoom 1.25 200 100", "zoom 1.25 200 100",
             "zoom 1.25 200 100", "scheme ember", "frame"]
    frames, views = scripted(binaries["headless"], tmp_path, moves)
    window = Window(binaries["window"], display)
    try:
        window.wait_view(views[0])
        first = window.wait_picture(frames[0])
        assert below_overlay(first) == below_overlay(frames[0]), "the first picture is not the whole set"
        assert overlay(first) != overlay(frames[0]), "no frame time on screen"

        window.keys("Right", "Right", "Down")
        window.wait_view(views[3])
        moved = window.wait_picture(frames[3])
        assert below_overlay(moved) == below_overlay(frames[3]), "the arrow keys did not move the view"
        assert below_overlay(moved) != below_overlay(first)

        window.xdotool("mousemove", "--window", window.id, "200", "100")
        window.keys("plus", "plus")  # + twice, toward the mouse
        window.xdotool("click", "4")  # one wheel notch up, where the mouse is
        line = window.wait_view(views[6])
        zoomed = window.wait_picture(frames[6])
        assert below_overlay(zoomed) == below_overlay(frames[6]), "+ and the wheel did not zoom toward the mouse"
        assert "sequential" not in line

        window.keys("s")  # the sequential render beside the parallel one
        line = window.wait_view(views[6])
        assert re.search(r"parallel \d+\.\d+ s on 2 threads, sequential \d+\.\d+ s \(\d+\.\d+x, identical\)", line)
        with_times = window.wait_picture(frames[6])
        assert overlay(with_times) != overlay(zoomed), "the sequential time is not shown"

        window.keys("c")  # next colour scheme: ember, recoloured without a new frame
        recoloured = window.wait_picture(frames[7])
        assert below_overlay(recoloured) == below_overlay(frames[7]), "c did not switch to the ember scheme"

        window.keys("q")
        code = window.proc.wait(timeout=20)
        assert code == 0, f"exit {code}: {window.proc.stderr.read()}"
    finally:
        window.close()
