"""One hook request on a running broker's socket, with nothing but the C cores.

The hook process runs twice per agent tool call, so its transport is the
smallest that speaks `yarp.archive-broker.v1` to a broker that is already
running: `_socket`, `_json`'s C encoder and scanner, and a length prefix.
The full client (`yarp.client`) carries the broker start-up, the lock
protocol, the operation types and the compiled frame splitter; importing them
costs a hook about 2 ms, more than the request itself. It is still used, by
`yarp.hooks.cli.forward`, whenever this path cannot finish: no broker yet
(start-up), a broker shutting down, a refused handshake, a dropped connection.
A hook event is replay-safe, so trying it again there is always correct.

Frames are the broker's: an 8-byte big-endian length, then UTF-8 JSON
(`yarp.fastframe`). Every field written here is checked against `yarp.protocol`
by `tests/test_hooks.py`, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

import os
import time
from _json import encode_basestring_ascii as _quote
from _json import make_scanner as _make_scanner
from _socket import AF_UNIX, SOCK_STREAM
from _socket import socket as _unix_socket

from .._version import __version__
from ..limits import MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES

#: `yarp.protocol.SCHEMA` (the module itself imports every operation type).
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


class Unfinished(Exception):
    """This path could not finish the request; the full client must try it."""


def json_object(body: bytes) -> dict | None:
    """`body` as one JSON object (no surrounding whitespace), else None; never raises."""
    try:
        text = body.decode("utf-8")
        value, end = _scan(text, 0)
    except Exception:  # noqa: BLE001 - malformed text: the C scanner's errors vary (even SystemError)
        return None
    return value if end == len(text) and isinstance(value, dict) else None


def _loads(body: bytes) -> dict:
    value = json_object(body)
    if value is None:
        raise Unfinished()
    return value


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(_LENGTH_BYTES, "big") + body


def _read_exact(sock, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise Unfinished()
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(sock, limit: int) -> bytes:
    size = int.from_bytes(_read_exact(sock, _LENGTH_BYTES), "big")
    if size > limit:
        raise Unfinished()
    return _read_exact(sock, size)


def request(socket_path: str, archive_id: str, head: str, raw: bytes, deadline: float) -> dict:
    """Handshake, send `{<head>, "event": <raw>}`, return the broker's reply object.

    `head` is the request's own fields as JSON object members (no braces);
    `raw` is the event, already checked to be one JSON object. Raises
    `Unfinished` when anything short of a reply happened, and `TimeoutError`
    when the deadline passed while waiting for one.
    """
    sock = _unix_socket(AF_UNIX, SOCK_STREAM)
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError()
        sock.settimeout(remaining)
        try:
            sock.connect(socket_path)
        except OSError:
            raise Unfinished() from None
        correlation = "c-" + os.urandom(8).hex()
        hello = (f'{{"schema":"{SCHEMA}","binaryVersion":{_quote(__version__)},'
                 f'"archiveId":"{archive_id}","correlationId":"{correlation}"}}')
        try:
            sock.sendall(_frame(hello.encode()))
            answer = _loads(_read_frame(sock, MAX_HANDSHAKE_BYTES))
            if (answer.get("ok") is not True or answer.get("schema") != SCHEMA
                    or answer.get("binaryVersion") != __version__ or answer.get("archiveId") != archive_id
                    or answer.get("correlationId") != correlation):
                raise Unfinished()
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            body = (f'{{"schema":"{SCHEMA}","correlationId":"{correlation}",{head},"event":').encode() + raw + b"}"
            sock.sendall(_frame(body))
            return _loads(_read_frame(sock, MAX_FRAME_BYTES))
        except TimeoutError:
            raise
        except OSError:
            raise Unfinished() from None
    finally:
        sock.close()


def hook_fields(fields: dict) -> str:
    """`"hook": {…}` for a request: strings, booleans, integers and lists of strings only."""
    parts = []
    for name, value in fields.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, str):
            text = _quote(value)
        else:
            text = "[" + ",".join(_quote(item) for item in value) + "]"
        parts.append(f"{_quote(name)}:{text}")
    return '"hook":{' + ",".join(parts) + "}"
