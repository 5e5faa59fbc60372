"""Blocks built near a stream's ends only are the blocks a view weighs had every block been built.

The view weighs the first and the last `bound` blocks of a rank (`spending._ends_of`);
`block_units(..., bound)` builds only the blocks near the ends when a rank holds more. These
tests cross the two on the recorded tool outputs of the shared vectors, mixed and shuffled so
that blocks of every rank merge, touch and interleave, at bounds small enough to cut every rank.
"""

from __future__ import annotations

import glob
import json
import os
import random

import pytest

from yarp.view.blocks import block_units
from yarp.view.salience import classifier
from yarp.view.streams import Stream

VECTORS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "vectors", "cap", "*.json")))


def _texts() -> list[bytes]:
    texts = []
    for path in VECTORS:
        with open(path, encoding="utf-8") as handle:
            texts.append(json.load(handle)["input"].encode())
    return texts


def _ends(units: list, bound: int) -> list[tuple]:
    """Per rank, the first and last `bound` units as the view weighs them, as plain data."""
    out = []
    for rank in range(4):
        group = [u for u in units if u.rank == rank]
        if len(group) > 2 * bound:
            group = group[:bound] + group[-bound:]
        out.append([(u.stream, u.start, u.end, u.parts) for u in group])
    return out


@pytest.mark.parametrize("seed", range(12))
def test_blocks_built_near_the_ends_are_those_of_every_block(seed):
    rng = random.Random(seed)
    texts = _texts()
    lines = b"".join(rng.choice(texts) + b"\n" for _ in range(rng.randint(20, 80))).split(b"\n")
    if seed % 3 == 0:
        rng.shuffle(lines)  # blocks broken apart and run together
    stream = Stream("stdout", b"\n".join(lines), classifier())
    full = block_units(stream.lines, stream.classes, 0, classifier())
    bound = rng.choice([2, 5, 20])
    bounded = block_units(stream.lines, stream.classes, 0, classifier(), bound)
    assert _ends(bounded, bound) == _ends(full, bound)


def test_a_dense_rank_is_built_only_near_its_ends():
    dense = b"".join(b"src/m%d.rs:%d:5: error: expected one\n  |\n  = note: here\nbuilding part %d\n" % (i, i, i)
                     for i in range(3000))
    stream = Stream("stdout", dense, classifier())
    full = block_units(stream.lines, stream.classes, 0, classifier())
    bounded = block_units(stream.lines, stream.classes, 0, classifier(), 500)
    assert len(full) == 3000 and len(bounded) == 1000
    assert _ends(bounded, 500) == _ends(full, 500)


@pytest.mark.parametrize("bound", [1, 3, 50])
def test_a_long_run_of_failures_merged_into_one_block_at_either_end_is_built_whole(bound):
    chain = b"".join(b"ERROR step %d failed\n" % i for i in range(700))  # touching failure blocks: one unit
    apart = b"".join(b"src/a.c:%d:1: error: one\nbuilding part %d\n" % (i, i) for i in range(300))
    few = apart[:apart.index(b"src/a.c:2:")]  # two blocks apart, then the run
    for text in (chain + apart, apart + chain, chain + apart + chain, few + chain + apart * 4 + chain + few):
        stream = Stream("stdout", text, classifier())
        full = block_units(stream.lines, stream.classes, 0, classifier())
        bounded = block_units(stream.lines, stream.classes, 0, classifier(), bound)
        assert _ends(bounded, bound) == _ends(full, bound)


@pytest.mark.parametrize("seed", range(8))
def test_a_walk_that_goes_on_where_the_last_one_stopped_ends_where_its_own_would(seed):
    from yarp.view import blocks

    rng = random.Random(seed)
    pieces = [b"ERROR step failed", b"warning: unused x", b"  at run (a.js:3:4)", b"", b"Caused by: boom", b"x:",
              b"=== 1 failed in 2s ===", b"src/a.rs:3:4: error: boom", b"   |", b"note: see above", b"plain words"]
    lines = [rng.choice(pieces) for _ in range(400)] + b"\n".join(_texts()[:seed + 1]).split(b"\n")
    rng.shuffle(lines)
    stream = Stream("stdout", b"\n".join(lines), classifier())
    sal = classifier()
    walk = [-1, -1, -1]
    for index in sorted(i for i, cls in stream.classes.items() if cls in blocks.BLOCK_CLASSES):
        cls = stream.classes[index]
        alone = blocks._block_end(stream.lines, stream.classes, index, cls, sal, [-1, -1, -1])
        assert blocks._block_end(stream.lines, stream.classes, index, cls, sal, walk) == alone, index


@pytest.mark.parametrize("seed", range(6))
def test_answers_kept_by_a_lines_bytes_give_the_blocks_fresh_ones_give(seed):
    from yarp.view import blocks

    rng = random.Random(seed)
    pieces = [b"ERROR step failed", b"warning: unused x", b"  at run (a.js:3:4)", b"", b"Read at 0x1 by goroutine 9:",
              b"  |", b"   ^^^ here", b"src/a.rs:3:4: error: boom", b"5 |     x()", b"note: see above", b"plain words"]
    lines = [rng.choice(pieces) for _ in range(600)]
    stream = Stream("stdout", b"\n".join(lines), classifier())
    sal = classifier()
    shared = blocks._Tests()
    walks = ([-1, -1, -1], [-1, -1, -1])
    anchors = sorted(i for i, cls in stream.classes.items() if cls in blocks.BLOCK_CLASSES)
    assert len(anchors) > 50
    for index in anchors:
        kept = blocks._block(stream.lines, stream.classes, index, sal, walks[0], shared)
        fresh = blocks._block(stream.lines, stream.classes, index, sal, walks[1], blocks._Tests())
        assert kept == fresh, index
    assert shared.continuation and shared.lead  # the answers were kept and asked again
