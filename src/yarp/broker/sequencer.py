"""Per-source ordering: each source's operations apply in their declared sequence.

A source is one call (its SHA-256 ordering key). The recent-sequence cache
holds at most `MAX_SEQUENCE_CACHE_KEYS` keys, oldest dropped first, and drops a
key when its call finishes; durable lifecycle and content checks stay
authoritative after an entry expires. A request whose sequence went backwards
is refused; a second, different operation for a source with one in flight is
refused as incompatible concurrent use; a replay of the operation in flight
(its first connection died) waits for it, then applies, which the stored rows
make idempotent. A prune while another runs is refused as busy (prunes are
never replayed).
"""

from __future__ import annotations

import collections

from yarp.errors import ArchiveBusy, ValidationError
from yarp.limits import MAX_SEQUENCE_CACHE_KEYS
from yarp.wire import operations as ops


class Sequencer:
    """Each source's last applied sequence (a bounded cache) and its operation in flight."""

    def __init__(self) -> None:
        self.sequences: collections.OrderedDict[str, int] = collections.OrderedDict()
        self.in_flight: dict = {}

    def check(self, request):
        """Raise for a regression or incompatible use; return the request to wait for, if any."""
        env = request.envelope
        last = self.sequences.get(env.source_key)
        if last is not None and env.sequence < last:
            raise ValidationError("operation arrived after a later operation for the same source")
        other = self.in_flight.get(env.source_key)
        if other is not None:
            if env.kind == "prune_before":
                # A prune is never sent twice (its replay policy), so this is another one, and the
                # first may run for minutes: refused now rather than left waiting without a word.
                raise ArchiveBusy("another prune is running in the broker ('yarp archive broker status' shows it);"
                                  " prune again once it has ended")
            if other.envelope.operation_id != env.operation_id:
                raise ValidationError("incompatible concurrent use of one source")
            return other
        return None

    def enter(self, request) -> None:
        """Record the request as its source's operation in flight."""
        self.in_flight[request.envelope.source_key] = request

    def leave(self, request) -> None:
        """Clear the request's source's in-flight entry, if the request still holds it."""
        env = request.envelope
        if env is not None and self.in_flight.get(env.source_key) is request:
            del self.in_flight[env.source_key]

    def remember(self, env) -> None:
        """A committed operation: its call's sequence so far (dropped once the call finished)."""
        if env.kind in ops.FINISHING_KINDS or env.kind == "prune_before":
            self.sequences.pop(env.source_key, None)
            return
        previous = self.sequences.pop(env.source_key, -1)
        self.sequences[env.source_key] = max(previous, env.sequence)
        while len(self.sequences) > MAX_SEQUENCE_CACHE_KEYS:
            self.sequences.popitem(last=False)
