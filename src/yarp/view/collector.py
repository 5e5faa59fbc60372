"""The cyclic garbage collector held off while a view is made.

A view of a MiB dense with findings makes tens of thousands of tuples, lists
and dictionaries (each scanned line's triggers, the blocks it weighs, the
classes) and keeps none of them in a reference cycle. Each 700 allocations
start a pass of the collector over the young objects, each tenth pass one over
the older ones too: about a tenth of such a view's time (`bench/cap_cost.py`).
`collector_paused` runs a view's maker with the collector off and turns it back
on after, so any cycle made meanwhile is collected by the next pass; a caller
that turned the collector off itself keeps it off. Of views made at once in threads
(the broker's thread pool), each that turned it off turns it back on when it
ends: the collector may run during another view, and is never left off.
"""

from __future__ import annotations

import gc
from functools import wraps


def collector_paused(function):
    """`function`, run with the cyclic garbage collector off (when it was on)."""

    @wraps(function)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused
