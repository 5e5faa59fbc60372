"""Regenerate the hidden half of the generalization corpus: tools and situations in no other half.

Run from the repo root: `python bench/generalization/generate_hidden.py [NAME ...]` records all or the
named cases; `--list` prints the recipes, `--check` re-checks the stored cases' signals, `--table`
prints the README's table, `--install` first installs the pinned tools (outside the repository).

The hidden half exists because the sealed half was scored once and its losses were then read, so it
is spent too: this sixth half is one nobody has looked at through the view. Its cases were recorded and
their signals annotated from the raw outputs, and committed, without any view of them being computed;
it is to be scored once. Every entry of `manifest-hidden.json` has `"half": "hidden"`.

Each recipe writes a small project under `/tmp/yarp-gen/hidden/work/NAME` (a fixed place, so paths in
the output are stable), runs one command there in one fixed environment (`hidden_common.hidden_env`,
the blind half's) and stores its exact stdout, stderr and exit status beside this file (a stream over
200 KB as `NAME.STREAM.zst`), with the native generator's storage. The recipes, with their signals,
are in `hidden_recipes_py.py` (PyPI tools and Python programs), `hidden_recipes_js.py` (npm tools),
`hidden_recipes_native.py` (compilers, build tools, crashes) and `hidden_recipes_system.py` (VCS,
services, data, listings). A pattern that matches no line of its new output, or more than 15, stops
the generator with the case's name; so does a case whose patterns match more than 15 lines in all.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import half_cli
from hidden_common import APT_PINS, HOME, NPM, NPM_PINS, PY_PINS, RECIPES, VENV, WORK, hidden_env

MANIFEST = os.path.join(HERE, "manifest-hidden.json")
HALF = "hidden"


def load_recipes() -> None:
    """Import the recipe modules, which register themselves in `RECIPES` in this order."""
    import hidden_recipes_py  # noqa: F401, I001 (this order: Python, npm, native, system)
    import hidden_recipes_js  # noqa: F401
    import hidden_recipes_native  # noqa: F401
    import hidden_recipes_system  # noqa: F401


def install() -> None:
    """Install the pinned npm, PyPI and Debian tools outside the repository; failures only warn."""
    half_cli.install(NPM, NPM_PINS, VENV, PY_PINS, APT_PINS)


def record(rec) -> dict:
    """Set up, run and store one case; return its manifest entry (half `hidden`)."""
    return half_cli.record_case(rec, HALF, WORK, hidden_env(), home=HOME)


HALF_SPEC = half_cli.Half(HALF, MANIFEST, RECIPES, load_recipes, record, install, half_cli.check_signals)


def main(argv=None) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    return half_cli.main(HALF_SPEC, argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
