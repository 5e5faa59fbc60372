"""Render docs/savings-chart.png: a real `yarp archive savings --by program` on a terminal, as a picture.

The archive is the generator's (`bench/archive_gen.py`, 6,000 calls with its
re-runs and recoveries); the report runs as a whole process on a pseudo
terminal (so it draws in colour, 80 columns), and its output is drawn cell by
cell in DejaVu Sans Mono with the colours the report asked for. Needs Pillow,
which YARP itself does not:

    python -m venv /tmp/chart && /tmp/chart/bin/pip install pillow
    PYTHONPATH=src /tmp/chart/bin/python bench/savings_chart.py docs/savings-chart.png
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
#: SGR codes the report uses, as colours on a dark background.
COLOURS = {"36": (80, 200, 220), "33": (230, 190, 80), "2": (120, 120, 120), "0": (220, 220, 220)}
_SGR = re.compile(r"\x1b\[(\d+)m")


def report_on_a_terminal(archive: Path, home: Path) -> str:
    from terminal import on_a_terminal

    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), TERM="xterm")
    env.pop("NO_COLOR", None)
    proc, seen = on_a_terminal([sys.executable, "-m", "yarp", "archive", "savings", "--by", "program", "--archive",
                                str(archive)], env, columns=80)
    assert proc.returncode == 0, proc.stderr
    return seen.decode().replace("\r\n", "\n")


def draw(text: str, out: Path) -> None:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(FONT, 15)
    cell_w, cell_h = font.getbbox("M")[2], 20
    lines = text.rstrip("\n").split("\n")
    width = max(len(_SGR.sub("", line)) for line in lines)
    image = Image.new("RGB", ((width + 2) * cell_w, (len(lines) + 2) * cell_h), (24, 24, 28))
    pen = ImageDraw.Draw(image)
    for row, line in enumerate(lines, 1):
        colour, column = COLOURS["0"], 1
        for part in _SGR.split(line):
            if part.isdigit() and part in COLOURS:
                colour = COLOURS[part]
                continue
            for ch in part:
                pen.text((column * cell_w, row * cell_h), ch, font=font, fill=colour)
                column += 1
    image.save(out)


def main(out: str) -> None:
    from archive_gen import generate

    with tempfile.TemporaryDirectory() as work:
        archive = Path(work) / "a" / "tool-calls.sqlite3"
        generate(archive, 6000)
        home = Path(work) / "home"
        home.mkdir()
        draw(report_on_a_terminal(archive, home), Path(out))


if __name__ == "__main__":
    main(sys.argv[1])
