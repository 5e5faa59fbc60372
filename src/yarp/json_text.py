"""JSON text in and out: the one place YARP encodes and decodes JSON that is not canonical.

Two kinds of reader and writer, chosen by who runs them:

* The clients (`yarp run`, the hooks, the ingest bridge, prune) encode one
  small request and decode one small reply at a time, on the path of every
  tool call: importing orjson costs about 20 ms there and the `json` package
  3-5 ms (it imports `re`). So `dumps`, `loads`, `object_or_none`,
  `members` and `quote` run `_json`, the C accelerator `json` itself runs on:
  the same encoder and settings as ``json.dumps(obj, separators=(",", ":"),
  ensure_ascii=False, allow_nan=False)`` and the same scanner as
  `json.loads`, falling back to the `json` package only where the accelerator
  is missing or the input needs its slower paths.
* The broker and the importers decode large frames and transcript lines:
  `decode` (orjson, with integer literals kept exact past 64 bits) and
  `loads_record` (orjson, else the standard parser for what orjson refuses,
  such as an escaped lone surrogate).

The archive's canonical form (RFC 8785) is not here: that is the archive's
(`yarp.archive.codec`). Errors are bounded and never quote the text.
"""

# No `from __future__ import annotations` and no typing: this module is on
# every tool call's path, where each is a real import.
from _json import encode_basestring_ascii as quote

try:
    from _json import encode_basestring as _c_encode_string
    from _json import make_encoder as _c_make_encoder
    from _json import make_scanner as _c_make_scanner
except ImportError:  # an interpreter without the accelerator: the json package does it all
    _c_make_encoder = _c_make_scanner = None

#: A run of 20 or more digits may be an integer literal beyond 64 bits, which
#: orjson silently turns into a (rounded) float. Found by mapping digits to "0"
#: and everything else to " " and searching for 20 zeros: C-speed, about 40x
#: faster than the equivalent regular expression. (A literal, not a loop: this
#: module loads on every tool call's path, and only the broker decodes.)
_DIGITS_ONLY = b" " * 48 + b"0" * 10 + b" " * 198
_TWENTY_DIGITS = b"0" * 20


def _no_constant(_name: str):
    from yarp.errors import FrameError

    raise FrameError("JSON holds NaN or Infinity")


def _exact_int(text: str) -> int:
    # Kept exact: the operation's preparation refuses what canonical JSON cannot
    # store, as one request-local error, instead of ending the connection here.
    # Python's digit limit (4,300) bounds the conversion cost.
    return int(text)


def _not_json(value: object):
    raise TypeError("not a JSON type")


class _ScanSettings:
    """What the C scanner reads off `json.JSONDecoder`: the defaults of `json.loads`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constant)


_scan_once = _c_make_scanner(_ScanSettings()) if _c_make_scanner is not None else None


# --- the clients' side --------------------------------------------------------------


def dumps(obj) -> bytes:
    """Compact UTF-8 JSON of `obj`; `ValidationError` for NaN, a lone surrogate or a non-JSON type."""
    try:
        if _c_make_encoder is not None:
            encode = _c_make_encoder({}, _not_json, _c_encode_string, None, ":", ",", False, False, False)
            return "".join(encode(obj, 0)).encode("utf-8")
        import json

        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        from yarp.errors import ValidationError

        raise ValidationError("operation holds a value that cannot be archived (NaN, a lone surrogate "
                              "or a non-JSON type)") from None


def loads(data: bytes, what: str):
    """The JSON value of `data` (surrounding whitespace allowed); `FrameError` naming `what` otherwise."""
    try:
        text = data.decode("utf-8")
        if _scan_once is not None:
            try:
                value, end = _scan_once(text, 0)
            except (StopIteration, ValueError, SystemError):
                # Not JSON. The accelerator reports its errors through the
                # `json` package; before that is imported it may fail without
                # a proper exception (SystemError). Either way the full parser
                # below gives the answer.
                end = -1
            if end == len(text):
                return value
        # Surrounding whitespace, or not JSON: the full parser decides.
        import json

        return json.loads(text)
    except (ValueError, RecursionError):
        from yarp.errors import FrameError

        raise FrameError(f"{what} is not valid UTF-8 JSON") from None


def object_or_none(data: bytes):
    """`data` as one JSON object with nothing around it, else None; never raises."""
    if _scan_once is None:
        try:
            import json

            value = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None
    try:
        text = data.decode("utf-8")
        value, end = _scan_once(text, 0)
    except Exception:  # noqa: BLE001 - malformed text: the C scanner's errors vary (even SystemError)
        return None
    return value if end == len(text) and isinstance(value, dict) else None


_BLANK = " \t\n\r"


def head_members(data: bytes, wanted: tuple):
    """The members named in `wanted` of the JSON object `data`, read from its start: a dict of those
    found, or None when `data` does not start as an object. Never raises.

    Reading stops once every wanted member is found, so the members after them
    (an agent's tool input and output) are never decoded here, nor checked: the
    whole text is decoded once, by whoever takes it next. A member named twice
    counts at its first place.
    """
    if _scan_once is None:
        value = object_or_none(data)
        return None if value is None else {key: value[key] for key in wanted if key in value}
    try:
        text = data.decode("utf-8")
        found = {}
        index = _skip(text, 1) if text[:1] == "{" else -1
        while 0 <= index < len(text) and text[index] == '"' and len(found) < len(wanted):
            key, index = _scan_once(text, index)
            index = _skip(text, index)
            if text[index:index + 1] != ":":
                return None
            value, index = _scan_once(text, _skip(text, index + 1))
            if key in wanted and key not in found:
                found[key] = value
            index = _skip(text, index)
            if text[index:index + 1] == ",":
                index = _skip(text, index + 1)
        return found if index >= 0 else None
    except Exception:  # noqa: BLE001 - malformed text: the C scanner's errors vary (even SystemError)
        return None


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _BLANK:
        index += 1
    return index


def members(name: str, fields: dict) -> str:
    """`"name": {…}`, for a request written as text: strings, booleans, integers, None, lists and nested
    dicts of those only (what the per-tool-call clients' requests hold)."""
    return quote(name) + ":" + _value(fields)


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{quote(k)}:{_value(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(_value(item) for item in value) + "]"


# --- the broker's and the importers' side --------------------------------------------


def encode(obj) -> bytes:
    """Compact UTF-8 JSON of `obj` with orjson, for the broker's replies and logs."""
    import orjson

    return orjson.dumps(obj)


def decode(data: bytes, what: str):
    """Decode one frame's JSON with orjson; integer literals are never rounded into floats.

    Raises `FrameError` naming `what`.
    """
    import orjson  # the broker's and the importers' own: never on a client's path

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        from yarp.errors import FrameError

        raise FrameError(f"{what} is not valid UTF-8 JSON") from None
    if _TWENTY_DIGITS not in data.translate(_DIGITS_ONLY):
        return value
    # Rare: re-read with a parser that sees integer literals as written.
    import json

    from yarp.errors import FrameError, YarpError

    try:
        return json.loads(data, parse_int=_exact_int, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, YarpError):
            raise
        raise FrameError(f"{what} is not valid UTF-8 JSON") from None


def loads_record(data: bytes):
    """Parse stored or recorded JSON (a transcript line, a stored payload): orjson first (several
    times faster on a large line), else the standard parser, which also takes what orjson refuses
    (an escaped lone surrogate), so no record is lost to the faster one. Raises `ValueError` when
    neither can. Integers past 64 bits come back as floats; `decode` keeps them exact."""
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        import json

        return json.loads(data)
