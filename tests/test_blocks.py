"""Blocks built only for the salient lines a view weighs are those every block's build gives them, and a
view weighs a dense class's ends and its rare kinds wherever they stand.

`block_units(..., weighed)` builds the blocks of the anchors `weighed` keeps (`spending.weighed`, which
keeps a dense class's first and last findings, its standouts and its rare kinds). These tests cross
a build of chosen anchors with a build of every block on the recorded tool outputs of the shared
vectors, mixed and shuffled so that blocks of every rank merge, touch and interleave, and hold what
`weighed` keeps, builds and shows of dense outputs.
"""

from __future__ import annotations

import glob
import json
import os
import random

import pytest

from view_of import view
from yarp.view import spending
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


def _parts(units: list) -> dict[int, tuple]:
    """Every block built, by its anchor, with its rank."""
    return {part[2]: (unit.rank, part) for unit in units for part in unit.parts}


@pytest.mark.parametrize("seed", range(12))
def test_a_block_built_alone_is_the_block_every_blocks_build_gives_its_anchor(seed):
    rng = random.Random(seed)
    texts = _texts()
    lines = b"".join(rng.choice(texts) + b"\n" for _ in range(rng.randint(20, 80))).split(b"\n")
    if seed % 3 == 0:
        rng.shuffle(lines)  # blocks broken apart and run together
    stream = Stream("stdout", b"\n".join(lines), classifier())
    full = _parts(block_units(stream.lines, stream.classes, 0, classifier()))
    share = rng.choice([0.05, 0.3, 0.7])
    chosen = block_units(stream.lines, stream.classes, 0, classifier(),
                         lambda anchors: [a for a in anchors if rng.random() < share])
    built = _parts(chosen)
    assert built and len(built) < len(full)
    assert built == {anchor: full[anchor] for anchor in built}
    # Units merge only the blocks built, in order: each unit spans its own parts.
    for unit in chosen:
        assert unit.start == min(p[0] for p in unit.parts) and unit.end == max(p[3] for p in unit.parts)


def _dense(count: int, rare: dict[int, bytes], standout: int | None = None) -> bytes:
    """`count` findings of one check, with the findings of `rare` at their positions."""
    out = []
    for i in range(count):
        message = rare.get(i, b"error: line too long (%d > 88)  [E501]" % (90 + i % 40))
        if i == standout:
            message = b"error: invalid escape sequence '\\d'  [W605]"
        out.append(b"pkg/m%d.py:%d:1: %s" % (i % 97, i, message))
    return b"\n".join(out) + b"\n"


def test_a_dense_class_weighs_its_ends_its_rare_kinds_and_the_first_of_each_new_kind():
    rare = {1500 + i: b"error: undefined name `total_%d`  [F821]" % i for i in range(8)}  # eight of a rare kind
    rare.update({2000 + 3 * i: b"error: `f%d` is too complex (%d > 10)  [C901]" % (i, i + 11)
                 for i in range(40)})  # common, new
    stream = Stream("stdout", _dense(4000, rare), classifier())
    anchors = sorted(stream.classes)
    assert len(anchors) == 4000
    end = 5120 // spending.BYTES_PER_END_BLOCK
    kept = spending.weighed(stream, 5120, anchors)
    assert kept == sorted(kept) and len(kept) <= 4 * end
    assert anchors[:end] == kept[:end] and anchors[-end:] == kept[-end:]
    assert set(rare) - {2000 + 3 * i for i in range(1, 40)} <= set(kept)  # every F821, the first C901
    assert not {2000 + 3 * i for i in range(1, 40)} & set(kept)
    assert not set(range(end, 1500)) & set(kept)  # the alike findings between are not weighed
    # Built: only the weighed blocks.
    units = block_units(stream.lines, stream.classes, 0, classifier(), lambda a: spending.weighed(stream, 5120, a))
    assert set(_parts(units)) == set(kept)


def test_a_class_of_few_findings_is_weighed_whole():
    stream = Stream("stdout", _dense(250, {}), classifier())
    anchors = sorted(stream.classes)
    assert spending.weighed(stream, 5120, anchors) == anchors


def test_a_standout_is_weighed_beside_as_many_rare_kinds_as_the_ends_hold():
    rare = {300 + i: b"error: kind %s of its own  [X%03d]" % (bytes([97 + i // 26 % 26, 97 + i % 26]), i)
            for i in range(400)}  # each kind once
    stream = Stream("stdout", _dense(3000, rare, standout=2500), classifier())
    anchors = sorted(stream.classes)
    end = 5120 // spending.BYTES_PER_END_BLOCK
    kept = spending.weighed(stream, 5120, anchors)
    assert 2500 in stream.standouts and 2500 in kept
    middle = [anchor for anchor in kept[end:-end] if anchor != 2500]
    assert middle == list(range(300, 300 + 2 * end))  # the rarest first, by their place


def _weighed_by_its_rule(stream, budget: int, anchors: list[int]) -> list[int]:
    """`spending.weighed` as its rule reads, every anchor's kind asked one by one: the ends, the standouts
    between them, and as many again of the rarest kinds' anchors between them (each kind said at most
    `RARE_KIND` times whole, the first of every kind the ends lack), in line order."""
    from yarp.view.templates import template

    if len(anchors) <= 4 * max(spending.FEWEST_AT_END, budget // spending.BYTES_PER_WHOLE_CLASS):
        return anchors
    end = max(spending.FEWEST_AT_END, budget // spending.BYTES_PER_END_BLOCK)
    kinds = {anchor: template(stream.lines[anchor]) for anchor in anchors}
    counts: dict[bytes, int] = {}
    for anchor in anchors:
        counts[kinds[anchor]] = counts.get(kinds[anchor], 0) + 1
    middle = anchors[end:-end]
    at_ends = {kinds[anchor] for anchor in anchors[:end] + anchors[-end:]}
    chosen = {anchor for anchor in middle if counts[kinds[anchor]] <= spending.RARE_KIND}
    seen: set[bytes] = set()
    for anchor in middle:
        if kinds[anchor] not in seen and kinds[anchor] not in at_ends:
            chosen.add(anchor)
        seen.add(kinds[anchor])
    inside = {anchor for anchor in stream.standouts if anchor in set(middle)}
    ordered = sorted(chosen - inside, key=lambda anchor: (counts[kinds[anchor]], anchor))
    return sorted({*anchors[:end], *anchors[-end:], *inside, *ordered[:2 * end]})


@pytest.mark.parametrize("seed", range(12))
def test_a_dense_class_is_weighed_as_its_rule_reads(seed):
    # Kinds of every count, rare ones at random places, a few or many of them, a standout
    # or none, a budget of a few sizes.
    chance = random.Random(seed)
    rare = {position: b"error: kind %s said here  [K]" % bytes([97 + kind // 26, 97 + kind % 26])
            for kind in range((2, 5, 40)[seed % 3])
            for position in chance.sample(range(1800), chance.choice([1, 2, 5, 16, 17, 40]))}
    stream = Stream("stdout", _dense(1800, rare, standout=chance.choice([None, 451, 30, 1201])), classifier())
    # Every finding an anchor, every other one (a standout between them is not one of theirs), or every ninth:
    # 200, weighed whole at the default budget, where more than four times its ends hold.
    for anchors in (sorted(stream.classes), sorted(stream.classes)[::2], sorted(stream.classes)[::9]):
        for budget in (1024, 5120, 16384):
            assert spending.weighed(stream, budget, anchors) == _weighed_by_its_rule(stream, budget, anchors)


def test_a_dense_outputs_rare_errors_are_shown_wherever_they_stand():
    # Eight of one message in eight files, between 6,000 findings of another: no line of theirs is rare in
    # its shape or message, so only the census of kinds finds them (the first and last 500 did not).
    rare = {1500 + 300 * i: b'error: undefined name "total"  [F821]' for i in range(8)}
    whole = {"pkg/m%d.py:%d:1: %s" % (position % 97, position, message.decode()) for position, message in rare.items()}
    shown = [line for line in view(_dense(6000, rare)).split("\n") if "F821" in line]
    assert len(shown) >= spending.MAX_ALIKE and set(shown) <= whole


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
