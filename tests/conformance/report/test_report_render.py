"""The HTML report renders in headless Chromium: a screenshot is taken and the summary is visible."""

from __future__ import annotations

import pathlib
import shutil
import struct
import subprocess
import zlib

import pytest

from conformance.report import html
from tests.conformance.report.sample_run import run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium: `make browser` (apt-get install chromium) installs it")


def _chromium(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True, text=True, timeout=120)


def _rows(png: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB(A) PNG with the standard library (Chromium writes exactly that)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = channels = 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if filt == 1:
                line[x] = (line[x] + a) & 255
            elif filt == 2:
                line[x] = (line[x] + b) & 255
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, channels, rows


def test_report_renders_with_its_summary_visible(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(html.render(run()))
    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path, "--window-size=1280,900", f"--screenshot={shot}", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000, proc.stderr[-2000:]
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert 'id="summary"' in dom and "NOT CERTIFIED" in dom
    # The summary box sits near the top with a red (not certified) background: find its colour
    # in the top third of the screenshot.
    width, channels, rows = _rows(shot.read_bytes())
    top = rows[: len(rows) // 3]
    reddish = sum(1 for row in top for x in range(0, width * channels, channels) if row[x] > 240 and 200 <= row[x + 1] <= 235 and 200 <= row[x + 2] <= 235)
    dark = sum(1 for row in top for x in range(0, width * channels, channels) if row[x] < 80 and row[x + 1] < 80 and row[x + 2] < 80)
    assert reddish > 20_000, f"the red summary box is not visible ({reddish} pixels)"
    assert dark > 2_000, f"no text is visible at the top ({dark} dark pixels)"
