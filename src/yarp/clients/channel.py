"""Requests from short-lived processes (the hooks, `yarp run`) to the warm broker.

An agent starts `yarp hook` twice and `yarp run` once for every shell command,
so these processes send the broker one or two small requests and leave the
work to it (`yarp.broker.services`). Their transport is the smallest that speaks
`yarp.archive-broker.v1` to a broker that is already running: `_socket`,
`_json`'s C encoder and scanner, and a length prefix. The full client
(`yarp.clients.broker`) carries the broker start-up, the lock protocol, the operation
types and the compiled frame splitter; importing them costs such a process
about 2 ms, more than its requests. It is still used whenever the lean path
cannot finish: no broker yet (start-up), a broker shutting down, a refused
handshake, a dropped connection. Every request sent here is replay-safe (the
broker's operations are idempotent by their stable identities), so trying it
again there is always correct.

A request is `{"schema", "correlationId", <members>}` where the members name
the service (`"hook": {…}, "event": <bytes>` or `"run": {…}`); the reply is the
broker's ordinary reply object. Frames are the broker's: an 8-byte big-endian
length, then UTF-8 JSON (`yarp.wire.frames`). The schema and frame written here
are checked against `yarp.wire.protocol` and `yarp.wire.frames` by
`tests/test_hooks.py`, so they cannot drift apart unnoticed.
"""

import os
import time
from _json import encode_basestring_ascii as _quote
from _json import make_scanner as _make_scanner
from _socket import AF_UNIX, SOCK_STREAM
from _socket import socket as _unix_socket

from yarp._version import __version__
from yarp.limits import MAX_DEADLINE_MS, MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES

# The error classes are imported where one is raised (see `yarp.cli.reported_errors`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from yarp.errors import YarpError

#: `yarp.wire.protocol.SCHEMA` (that module imports every operation type).
SCHEMA = "yarp.archive-broker.v1"
_LENGTH_BYTES = 8


def _no_constant(_name: str):
    raise ValueError("NaN or Infinity")


class _Settings:
    """What `_json`'s scanner reads: the defaults of `json.loads`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constant)


_scan = _make_scanner(_Settings())


def json_object(body: bytes) -> dict | None:
    """`body` as one JSON object (no surrounding whitespace), else None; never raises."""
    try:
        text = body.decode("utf-8")
        value, end = _scan(text, 0)
    except Exception:  # noqa: BLE001 - malformed text: the C scanner's errors vary (even SystemError)
        return None
    return value if end == len(text) and isinstance(value, dict) else None


def members(name: str, fields: dict) -> str:
    """`"name": {…}` for a request: strings, booleans, integers, None, lists of strings and
    nested dicts of those only (what the services' requests hold)."""
    return _quote(name) + ":" + _value(fields)


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_quote(k)}:{_value(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(_value(item) for item in value) + "]"


class _Unfinished(Exception):
    """The lean path could not finish; the full client must try."""


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(_LENGTH_BYTES, "big") + body


def _read_exact(sock, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise _Unfinished()
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(sock, limit: int) -> dict:
    size = int.from_bytes(_read_exact(sock, _LENGTH_BYTES), "big")
    if size > limit:
        raise _Unfinished()
    value = json_object(_read_exact(sock, size))
    if value is None:
        raise _Unfinished()
    return value


def _remaining_ms(deadline: float) -> int:
    remaining_ms = int((deadline - time.monotonic()) * 1000)
    if remaining_ms < 1:
        from yarp.errors import DeadlineExceeded

        raise DeadlineExceeded("request deadline expired before an acknowledgement")
    return min(remaining_ms, MAX_DEADLINE_MS)


def _rejection(reply: dict) -> "YarpError | None":
    """The broker's typed rejection, or None when it is shutting down (try again elsewhere)."""
    from yarp.errors import ShuttingDown, from_code

    error = from_code(str(reply.get("code", "broker")), str(reply.get("error", "broker rejected the request")))
    return None if isinstance(error, ShuttingDown) else error


class Channel:
    """Requests to one archive's broker: the lean socket while it works, else the full client.

    `ask` returns the broker's success reply or raises its typed rejection,
    `DeadlineExceeded` or `BrokerUnavailable`.
    """

    def __init__(self, location, environ=os.environ) -> None:
        self.location = location
        self.environ = environ
        self.sock = None
        self.correlation = ""
        self.client = None  # the full BrokerClient, once the lean path failed
        self._pending: tuple[str, bytes] | None = None

    def close(self) -> None:
        """Close the lean socket and the full client, whichever are open."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> "Channel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ask(self, head: str, tail: bytes, deadline: float) -> dict:
        """Send `{"schema", "correlationId", <head>, "deadlineMs", <tail>}` and return the reply.

        `head` is JSON object members (`members`); `tail` raw bytes that
        continue the object after the deadline (empty, or `,"name":<JSON>`).
        """
        if self.send(head, tail, deadline):
            return self.receive(deadline)
        return self._full(head, tail, deadline)

    def send(self, head: str, tail: bytes, deadline: float) -> bool:
        """Send one request on the lean path without waiting for its reply (`receive` gets it).

        False when the lean path is not available (no broker running, a
        refused handshake): nothing was sent, and `ask` would use the full
        client, starting a broker if needed.
        """
        if self.client is not None:
            return False
        try:
            if self.sock is None:
                self._connect(deadline)
            body = (f'{{"schema":"{SCHEMA}","correlationId":"{self.correlation}",{head},'
                    f'"deadlineMs":{_remaining_ms(deadline)}').encode() + tail + b"}"
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            self.sock.sendall(_frame(body))
        except (_Unfinished, OSError):
            self._drop()
            return False
        self._pending = (head, tail)
        return True

    def receive(self, deadline: float) -> dict:
        """The reply to the request `send` sent; tried again with the full client if the
        connection failed (every request here is replay-safe)."""
        head, tail = self._pending
        self._pending = None
        try:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            reply = _read_frame(self.sock, MAX_FRAME_BYTES)
        except TimeoutError:
            self.close()
            from yarp.errors import DeadlineExceeded

            raise DeadlineExceeded("request deadline expired waiting for the acknowledgement") from None
        except (_Unfinished, OSError):
            self._drop()
            return self._full(head, tail, deadline)
        if reply.get("ok") is True:
            return reply
        error = _rejection(reply) if reply.get("ok") is False else None
        if error is None:
            self._drop()
            return self._full(head, tail, deadline)
        raise error

    def _drop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    # --- the lean path ------------------------------------------------------------

    def _connect(self, deadline: float) -> None:
        from yarp.runtime import check_socket_entry, runtime_paths

        paths = runtime_paths(self.location.path, self.environ)
        if not check_socket_entry(paths.socket):
            raise _Unfinished()
        sock = _unix_socket(AF_UNIX, SOCK_STREAM)
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.connect(paths.socket)
            correlation = "c-" + os.urandom(8).hex()
            hello = (f'{{"schema":"{SCHEMA}","binaryVersion":{_quote(__version__)},'
                     f'"archiveId":"{paths.archive_id}","correlationId":"{correlation}"}}')
            sock.sendall(_frame(hello.encode()))
            answer = _read_frame(sock, MAX_HANDSHAKE_BYTES)
        except OSError:  # refused, reset, timed out: the full client decides
            sock.close()
            raise _Unfinished() from None
        except BaseException:
            sock.close()
            raise
        if (answer.get("ok") is not True or answer.get("schema") != SCHEMA
                or answer.get("binaryVersion") != __version__ or answer.get("archiveId") != paths.archive_id
                or answer.get("correlationId") != correlation):
            sock.close()
            raise _Unfinished()
        self.sock, self.correlation = sock, correlation

    # --- the full client ------------------------------------------------------------

    def _full(self, head: str, tail: bytes, deadline: float) -> dict:
        from yarp.clients.broker import BrokerClient, _Transport
        from yarp.errors import DeadlineExceeded
        from yarp.wire.protocol import parse_reply

        if self.client is None:
            self.client = BrokerClient(self.location, self.environ)
        client = self.client
        while True:
            remaining_ms = _remaining_ms(deadline)
            client.connect(deadline)
            body = (f'{{"schema":"{SCHEMA}","correlationId":"{client.correlation_id}",{head},'
                    f'"deadlineMs":{remaining_ms}').encode() + tail + b"}"
            try:
                client._send(body, deadline)
                reply = parse_reply(client._recv_frame(deadline))
            except _Transport:
                client.close()
                time.sleep(0.005)
                continue
            except DeadlineExceeded:
                client.close()
                raise
            if reply["ok"]:
                return reply
            error = _rejection(reply)
            if error is None:
                client.close()
                continue
            raise error
