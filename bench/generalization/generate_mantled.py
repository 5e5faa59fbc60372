"""Regenerate the mantled half of the generalization corpus: tools and situations in no other half.

Run from the repo root: `python bench/generalization/generate_mantled.py [NAME ...]` records all or the
named cases; `--list` prints the recipes, `--check` re-checks the stored cases' signals, `--table`
prints the README's table, `--install` first installs the pinned tools (outside the repository).

The mantled half exists because the swathed half's losses were read to write rules: this fifteenth half
is one nobody has looked at through the view, mostly of outputs over the cap and many over 256 KiB. Its cases were recorded
and their signals annotated from the raw outputs, and committed, without any view of them being
computed; it is to be scored once. Every entry of `manifest-mantled.json` has `"half": "mantled"`.

Each recipe writes a small project under `/tmp/yarp-gen/mantled/work/NAME` (a fixed place, so paths in
the output are stable), runs one command there in one fixed environment (`mantled_common.mantled_env`)
and stores its exact stdout, stderr and exit status beside this file (a stream over 200 KB as
`NAME.STREAM.zst`), with the native generator's storage. The recipes, with their signals and pinned
tools, are in `mantled_recipes_py.py` (PyPI tools and Python programs), `mantled_recipes_js.py` (npm
tools), `mantled_recipes_native.py` (compilers, build tools, crashes) and `mantled_recipes_system.py`
(VCS, services, data, listings). A pattern that matches no line of its new output, or more than 15,
stops the generator with the case's name; so does a case whose patterns match more than 15 lines in all.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import half_cli
from mantled_common import PLACE

HALF_SPEC = half_cli.pinned_half("mantled", PLACE, HERE)


def main(argv=None) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    return half_cli.main(HALF_SPEC, argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
