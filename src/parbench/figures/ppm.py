"""Binary PPM (P6, 8-bit) in, PNG out, with the standard library only."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path


def read_ppm(path: str | Path) -> tuple[int, int, bytes]:
    """(width, height, RGB bytes) of a binary 8-bit PPM; ValueError for anything else."""
    data = Path(path).read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":  # comment to end of line
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    magic, width, height, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if magic != b"P6" or maxval != 255:
        raise ValueError(f"{path}: not a binary 8-bit PPM (magic {magic!r}, maxval {maxval})")
    pixels = data[pos + 1:pos + 1 + 3 * width * height]
    if len(pixels) != 3 * width * height:
        raise ValueError(f"{path}: {len(pixels)} pixel bytes, expected {3 * width * height}")
    return width, height, pixels


def png_bytes(width: int, height: int, rgb: bytes) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    stride = 3 * width
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def png_data_url(path: str | Path) -> tuple[str, int, int]:
    width, height, rgb = read_ppm(path)
    return "data:image/png;base64," + base64.b64encode(png_bytes(width, height, rgb)).decode(), width, height
