"""The one time grammar of the command line, and how times and durations are printed.

Every option that takes a time (`--since`, `--until`, `--before`) reads it here,
so one spelling works everywhere:

- an RFC 3339 time with any offset: `2026-01-02T03:04:05Z`, `2026-01-02T04:04:05+01:00`
  (a space for the `T`, and fractions of a second, allowed);
- a local date or date and time, without a zone: `2026-01-02` (local midnight),
  `2026-01-02 14:30`, `2026-01-02T14:30:05`;
- Unix milliseconds: `1767225600000`;
- an age, that long before now: `90s`, `30m`, `2h`, `7d`, `2w` (the long unit
  names and a trailing `ago` too: `3 days ago`);
- `now`, `today` and `yesterday` (local midnight).

Local means the process's time zone (`TZ`). Times are printed in it too, for
people (`2026-01-02 14:30:05`); `--json` output keeps Unix milliseconds.

This module imports only the standard library's `re` and `time` until a
calendar date is parsed or printed.
"""

from __future__ import annotations

import re
import time

#: The latest time accepted: the end of year 9999, as far as calendar dates go.
MAX_MS = 253_402_300_799_999
_AGE = re.compile(r"(\d{1,9})\s*([a-z]+)(?:\s+ago)?\Z")
_UNIT_MS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
    **dict.fromkeys(("w", "wk", "week", "weeks"), 7 * 86_400_000),
}
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?\Z")
GRAMMAR = ("RFC 3339 (2026-01-02T03:04:05Z, any offset), a local date or time (2026-01-02, 2026-01-02 14:30), "
           "Unix milliseconds, or an age (30m, 2h, 7d)")


def parse_time(text: str, option: str = "time", *, now_ms: int | None = None) -> int:
    """The Unix milliseconds `text` names (see the module docstring); `UsageError` naming `option` otherwise.

    `now_ms` is the moment ages count back from (default: now).
    """
    word = text.strip().lower()
    if word.isascii() and word.isdigit():
        if len(word) > 15:
            raise _error(option, "is out of range")
        return _checked(int(word), option)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if word == "now":
        return _checked(now, option)
    if word in ("today", "yesterday"):
        return _checked(_local_midnight(now, 0 if word == "today" else 1), option)
    age = _AGE.match(word)
    if age is not None and age.group(2) in _UNIT_MS:
        return _checked(now - int(age.group(1)) * _UNIT_MS[age.group(2)], option)
    found = _DATE_TIME.match(text.strip())
    if found is None:
        raise _error(option, "must be " + GRAMMAR)
    return _checked(_calendar_ms(found, option), option)


def time_option(option: str):
    """An argparse `type=` for a time option: `parse_time` with the option's name in its errors."""

    def parse(text: str) -> int:
        return parse_time(text, option)

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


def _calendar_ms(found: re.Match, option: str) -> int:
    from datetime import datetime, timedelta, timezone

    year, month, day, hour, minute, second, fraction, utc, sign, off_h, off_m = found.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    except ValueError:
        raise _error(option, "is not a valid calendar date or time") from None
    millis = int((fraction + "00")[:3]) if fraction else 0
    if utc:
        moment = moment.replace(tzinfo=timezone.utc)
    elif sign:
        if int(off_h) > 23 or int(off_m) > 59:
            raise _error(option, "has an invalid zone offset")
        offset = timedelta(hours=int(off_h), minutes=int(off_m))
        moment = moment.replace(tzinfo=timezone(offset if sign == "+" else -offset))
    try:
        seconds = moment.timestamp()  # a zone-less moment is local time
    except (OverflowError, OSError, ValueError):
        raise _error(option, "is out of range") from None
    return round(seconds) * 1000 + millis


def _local_midnight(now_ms: int, days_back: int) -> int:
    from datetime import datetime, timedelta

    day = datetime.fromtimestamp(now_ms / 1000).date() - timedelta(days=days_back)
    return int(datetime(day.year, day.month, day.day).timestamp() * 1000)


def _checked(value: int, option: str) -> int:
    if value < 0:
        # Archive times are non-negative Unix milliseconds; an earlier bound is a typo, not a request.
        raise _error(option, "must not be earlier than 1970-01-01T00:00:00Z")
    if value > MAX_MS:
        raise _error(option, "is out of range")
    return value


def _error(option: str, problem: str):
    from yarp.errors import UsageError

    return UsageError(f"{option} {problem}")


# --- printing ------------------------------------------------------------------


def format_local(ms: int, *, millis: bool = False, zone: bool = False) -> str:
    """`ms` as local time for people: `2026-01-02 14:30:05` (`.120` with `millis`, ` +01:00` with `zone`)."""
    from datetime import datetime

    moment = datetime.fromtimestamp(ms / 1000).astimezone()
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if millis:
        text += f".{ms % 1000:03d}"
    if zone:
        offset = moment.strftime("%z")
        text += f" {offset[:3]}:{offset[3:]}" if len(offset) == 5 else f" {offset}"
    return text


def format_utc(ms: int) -> str:
    """`ms` as RFC 3339 UTC with milliseconds (`2026-01-02T13:30:05.120Z`): exact, and read back by `parse_time`."""
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def format_duration(ms: int) -> str:
    """A duration for people: `0ms`, `850ms`, `2.3s`, `4m05s`, `1h02m`, `3d04h`."""
    if ms < 1000:
        return f"{max(ms, 0)}ms"
    if ms < 60_000:
        return f"{ms // 100 / 10:.1f}s" if ms < 10_000 else f"{ms // 1000}s"
    seconds = ms // 1000
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 86_400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86_400}d{seconds % 86_400 // 3600:02d}h"
