"""The cyclic collector is off while a view is made, and back as it was after, also when the view fails."""

from __future__ import annotations

import gc

import pytest

from yarp.view import cap
from yarp.view.collector import collector_paused


def test_a_view_is_made_with_the_collector_off_and_it_is_back_on_after():
    seen = []

    @collector_paused
    def make(fail: bool) -> str:
        seen.append(gc.isenabled())
        if fail:
            raise ValueError("bad input")
        return "view"

    assert gc.isenabled()
    assert make(False) == "view" and seen == [False] and gc.isenabled()
    with pytest.raises(ValueError):
        make(True)
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        assert make(False) == "view" and not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


def test_both_entry_points_of_the_view_pause_the_collector():
    for entry in (cap.cap_streams, cap.cap_files):
        assert entry.__wrapped__ is not entry and entry.__name__ == entry.__wrapped__.__name__
    data = b"".join(b"src/m%d.rs:%d: error: cannot find value `x`\n" % (k, k) for k in range(3000))
    assert gc.isenabled()
    view = cap.cap_text(data, archive_ref="yr_" + "ab" * 16)
    assert gc.isenabled() and len(view) <= 5120 and b"error: cannot find value" in view
