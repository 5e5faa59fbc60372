"""Regenerate the fresh half of the generalization corpus: tools and situations in neither other half.

Run from the repo root: `python bench/generalization/generate_fresh.py [NAME ...]` records all or the
named cases; `--list` prints the recipes, `--check` re-checks the stored cases' signals, `--table`
prints the README's table, `--install` first installs the pinned tools (outside the repository).

The fresh half exists because the held-out half was read while view rules were written: it is a
third half that no view rule may be tuned on. Its cases were recorded and their signals annotated
from the raw outputs, and committed, before any view of them was computed. Every entry of
`manifest-fresh.json` has `"half": "fresh"`, whatever its name's hash says.

Each recipe writes a small project under `/tmp/yarp-gen/fresh/work/NAME` (a fixed place, so paths
in the output are stable), runs one command there and stores its exact stdout, stderr and exit
status beside this file (a stream over 200 KB as `NAME.STREAM.zst`), like the native generator,
whose machinery it reuses. The recipes, with their signals, are in `fresh_recipes_js.py` (npm and
node), `fresh_recipes_py.py` (Python), `fresh_recipes_native.py` (Go, Rust, C/C++, Java, make,
ctest) and `fresh_recipes_system.py` (git, sqlite3, jq, tar, rsync, system tools). A pattern that
matches no line of its new output stops the generator with the case's name.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate_native as native
import half_cli
from fresh_common import APT_PINS, NPM, NPM_PINS, PY_PINS, RECIPES, VENV, WORK

MANIFEST = os.path.join(HERE, "manifest-fresh.json")
HALF = "fresh"


def load_recipes() -> None:
    """Import the recipe modules, which register themselves in `RECIPES` in this order."""
    import fresh_recipes_js  # noqa: F401
    import fresh_recipes_native  # noqa: F401
    import fresh_recipes_py  # noqa: F401
    import fresh_recipes_system  # noqa: F401


def install() -> None:
    """Install the pinned npm, PyPI and Debian tools outside the repository; failures only warn."""
    half_cli.install(NPM, NPM_PINS, VENV, PY_PINS, APT_PINS, apt_flags=())


def record(rec) -> dict:
    """Set up, run and store one case; return its manifest entry (half `fresh`). Its commands run in the
    native generator's environment; its tools are looked for in its npm and venv bins too."""
    env = native.base_env()
    path = ":".join((env["PATH"], os.path.join(NPM, "node_modules", ".bin"), os.path.join(VENV, "bin")))
    return half_cli.record_case(rec, HALF, WORK, env, native.check_signals, path=path)


HALF_SPEC = half_cli.Half(HALF, MANIFEST, RECIPES, load_recipes, record, install, native.check_signals)


def main(argv=None) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    return half_cli.main(HALF_SPEC, argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
