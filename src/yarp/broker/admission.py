"""Admission: how much work the broker holds at once, and who waits for room.

Each client may have one admitted request; at most `MAX_ADMITTED_TOTAL`
requests and `MAX_ADMITTED_BODY_BYTES` of their frames are admitted in all (so
one maximum-size request can always make progress). A client whose next frame
cannot be admitted stops being read until room frees up: nothing is dropped
or acknowledged early, and the request's own deadline stays in force. Clients
that waited are served first, in arrival order, when room frees up.

A status request is answered at once, outside the budget, so the broker stays
observable exactly when the queue is full.
"""

from __future__ import annotations

import collections

from yarp.errors import ShuttingDown, YarpError
from yarp.limits import MAX_ADMITTED_BODY_BYTES, MAX_ADMITTED_TOTAL, MAX_CONTROL_FRAME_BYTES
from yarp.wire import protocol
from yarp.wire.validation import parse_request


class Request:
    """One admitted request, from admission to its reply."""

    __slots__ = ("conn", "frame_bytes", "received", "deadline", "envelope", "operation", "prepared", "settled",
                 "followers", "timer", "reply_to")

    def __init__(self, conn, frame_bytes: int, received: float) -> None:
        self.conn = conn
        self.frame_bytes = frame_bytes
        #: time.monotonic() when its frame arrived; the deadline runs from here.
        self.received = received
        self.deadline = received
        self.envelope: protocol.Envelope | None = None
        #: An operation a service built from validated parts (never re-parsed from JSON).
        self.operation = None
        self.prepared = None
        #: True once its reply was sent: a late outcome (a slow pool, a
        #: writer result after a deadline) is dropped.
        self.settled = False
        #: Replays of this very operation waiting for it to finish first.
        self.followers: list[Request] = []
        self.timer = None
        #: For an envelope a service submits (`Broker.submit`): the future its outcome resolves.
        self.reply_to = None


class Admission:
    """The broker's admission budgets: what is admitted now (count and frame bytes) and which clients wait."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.count = 0
        self.bytes = 0
        self.waiting: collections.deque = collections.deque()

    def admit(self, client) -> None:
        """Admit the client's next frame if the budgets allow; else stop reading it.

        A client whose replies are piling up unread gets nothing admitted or
        answered until it drains them, so an unread reply stream cannot grow
        the broker's memory.
        """
        broker = self.broker
        while True:
            if client.closed:
                return
            if client.admitted is not None or not client.pending or client.stalled:
                if client.pending:
                    client.pause()
                return
            frame, arrived = client.pending[0]
            parsed = self._decode_small(client, frame)
            if type(parsed) is protocol.Control:
                # Answered at once, outside the budgets (only a client with
                # nothing admitted gets here: replies stay in order).
                client.pending.popleft()
                client.send(protocol.reply_ok(extra={"status": broker.status()}))
                continue
            if broker.closing:
                # Never admitted, so never applied: the client sends it again to the next broker.
                client.fail(ShuttingDown("broker is shutting down; start a new one"))
                return
            over_count = self.count >= MAX_ADMITTED_TOTAL
            over_bytes = self.bytes and self.bytes + len(frame) > MAX_ADMITTED_BODY_BYTES
            if over_count or over_bytes:
                client.pause()
                if client not in self.waiting:
                    self.waiting.append(client)
                return
            client.pending.popleft()
            request = Request(client, len(frame), arrived)
            client.admitted = request
            self.count += 1
            self.bytes += len(frame)
            if client.pending:
                client.pause()
            # Started from the loop, not from here: admission runs inside
            # `finish` when room frees up, and a request that fails at once
            # would otherwise finish (and admit the next) recursively.
            broker.loop.call_soon(broker.start, request, frame, parsed)
            return

    @staticmethod
    def _decode_small(client, frame: bytes):
        """A small frame decoded and validated once, here, so a status request is answered without
        waiting for room, and what it is comes from its members, not its bytes. The result (or the
        refusal) travels with the request to `Broker.start`; a large frame is decoded there."""
        if len(frame) > MAX_CONTROL_FRAME_BYTES:
            return None
        cached = client.decoded
        if cached is not None and cached[0] is frame:
            return cached[1]
        try:
            parsed = parse_request(frame, client.correlation_id)
        except YarpError as exc:
            parsed = exc
        client.decoded = (frame, parsed)
        return parsed

    def release(self, request: Request) -> None:
        """Give the request's room back: waiting clients first (round-robin), then its own."""
        client = request.conn
        if client.admitted is request:
            client.admitted = None
        self.count -= 1
        self.bytes -= request.frame_bytes
        for _ in range(len(self.waiting)):
            if not self.waiting:
                break
            waiting = self.waiting.popleft()
            if waiting.closed:
                continue
            self.admit(waiting)
            if waiting.admitted is None and waiting.pending:
                break
        if not client.closed:
            if client.pending:
                self.admit(client)
            if not client.pending:
                client.resume()

    def forget(self, client) -> None:
        """Drop a disconnected client from the waiting line, if it is there."""
        try:
            self.waiting.remove(client)
        except ValueError:
            pass
