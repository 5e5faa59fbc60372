"""How `bench/cap_cost.py` builds another revision's kernels: a kernel is reused only when its source and
every file it includes are the same, and rebuilt with the flags setup.py gives its extensions."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))

import cap_cost  # noqa: E402


def _tree(base, files: dict[str, str]) -> str:
    folder = base / "src" / "yarp"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return str(base)


def test_a_kernel_is_the_same_only_with_every_file_it_includes(tmp_path):
    kernel = 'include "_kinds.pxi"\n\ndef f(): pass\n'
    nested = 'include "_alike.pxi"\ncdef int g(): return 1\n'
    one = _tree(tmp_path / "one", {"_k.pyx": kernel, "_kinds.pxi": nested, "_alike.pxi": "# a\n"})
    same = _tree(tmp_path / "same", {"_k.pyx": kernel, "_kinds.pxi": nested, "_alike.pxi": "# a\n"})
    deeper = _tree(tmp_path / "deeper", {"_k.pyx": kernel, "_kinds.pxi": nested, "_alike.pxi": "# b\n"})
    assert cap_cost._kernel_source(one, "_k.pyx") == cap_cost._kernel_source(same, "_k.pyx")
    # The kernel's own file is the same bytes; an include two levels down is not.
    assert cap_cost._kernel_source(one, "_k.pyx") != cap_cost._kernel_source(deeper, "_k.pyx")


def test_a_rebuilt_kernel_takes_setup_pys_flags():
    with open(os.path.join(cap_cost.ROOT, "setup.py"), encoding="utf-8") as handle:
        text = handle.read()
    flags = cap_cost._setup_cflags()
    assert flags and all(f'"{flag}"' in text for flag in flags.split())
