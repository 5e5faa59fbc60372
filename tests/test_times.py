"""The command line's one time grammar (`yarp.times`): every time option reads the same forms, and
times are printed for people; through the library and through every command that takes a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from archive_factory import ArchiveFactory, run_yarp, yarp_env

from yarp.errors import UsageError
from yarp.times import format_duration, format_local, format_utc, parse_time

NOW = 1_767_323_045_000  # 2026-01-02T03:04:05Z


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-02T03:04:05Z", NOW),
    ("2026-01-02t03:04:05z", NOW),
    ("2026-01-02T04:04:05+01:00", NOW),
    ("2026-01-01T22:04:05-05:00", NOW),
    ("2026-01-02 03:04:05Z", NOW),
    ("2026-01-02T03:04:05.25Z", NOW + 250),
    ("2026-01-02T03:04:05.123456789Z", NOW + 123),
    ("1767323045000", NOW),
    ("0", 0),
    ("now", NOW),
    ("90s", NOW - 90_000),
    ("30m", NOW - 1_800_000),
    ("2h", NOW - 7_200_000),
    ("7d", NOW - 7 * 86_400_000),
    ("2w", NOW - 14 * 86_400_000),
    ("3 days ago", NOW - 3 * 86_400_000),
    ("1 hour ago", NOW - 3_600_000),
    ("45min", NOW - 45 * 60_000),
])
def test_absolute_and_relative_forms(text, expected):
    assert parse_time(text, "--since", now_ms=NOW) == expected


@pytest.mark.parametrize("text", ["", "soon", "5y", "2026-13-01", "2026-02-30", "2026-01-02T25:00",
                                  "2026-01-02T03:04:05+24:00", "1969-12-31T23:59:59Z", "99999999999999999",
                                  "10000-01-01", "2026-01-02T03:04:05.Z", "-5m"])
def test_what_is_not_a_time_is_a_usage_error_naming_the_option(text):
    with pytest.raises(UsageError) as caught:
        parse_time(text, "--until", now_ms=NOW)
    assert caught.value.message.startswith("--until ")
    assert caught.value.exit_code == 64


def test_a_date_or_a_time_without_a_zone_is_local_time():
    # TZ is read by the child process; Kolkata is +05:30 all year.
    code = ("from yarp.times import parse_time as p, format_local as f; "
            "print(p('2026-01-02'), p('2026-01-02 14:30'), p('2026-01-02T14:30:05'), "
            "p('today', now_ms=1767323045000), p('yesterday', now_ms=1767323045000), f(1767323045000, zone=True))")
    env = {**os.environ, "TZ": "Asia/Kolkata"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    midnight = 1_767_312_000_000 - 19_800_000  # 2026-01-02T00:00+05:30
    assert out.split() == [str(midnight), str(midnight + 52_200_000), str(midnight + 52_205_000),
                           str(midnight), str(midnight - 86_400_000), "2026-01-02", "08:34:05", "+05:30"]


def test_printing():
    assert format_utc(NOW + 7) == "2026-01-02T03:04:05.007Z"
    assert parse_time(format_utc(NOW + 7)) == NOW + 7  # the exact form reads back
    assert [format_duration(ms) for ms in (0, 850, 2_345, 12_900, 245_000, 3_725_000, 300_000_000)] == \
        ["0ms", "850ms", "2.3s", "12s", "4m05s", "1h02m", "3d11h"]
    assert len(format_local(NOW)) == len("2026-01-02 03:04:05")


# --- every command reads the same grammar -------------------------------------------------------

@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("times")
    path = root / "a" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.shell_call("old", b"old output\n")
    return path, root


#: (command, its time option) for every command that takes a time. prune's --before goes to the broker,
#: so a good time is checked there only as far as parsing (a missing archive is then exit 74).
TIME_OPTIONS = [
    (("search",), "--since"),
    (("search",), "--until"),
    (("calls",), "--since"),
    (("calls",), "--until"),
    (("archive", "savings"), "--since"),
    (("archive", "savings"), "--until"),
    (("archive", "export", "--format", "parquet", "{out}"), "--since"),
    (("archive", "prune"), "--before"),
]


@pytest.mark.parametrize(("command", "option"), TIME_OPTIONS)
def test_every_time_option_refuses_the_same_way(archive, tmp_path, command, option):
    path, root = archive
    argv = [part.format(out=tmp_path / "export") for part in command]
    done = run_yarp(*argv, option, "next tuesday", "--archive", str(path), home=root)
    assert done.returncode == 64
    assert done.stderr.decode() == (f"yarp: {option} must be RFC 3339 (2026-01-02T03:04:05Z, any offset), a local "
                                    "date or time (2026-01-02, 2026-01-02 14:30), Unix milliseconds, or an age "
                                    "(30m, 2h, 7d)\n")


@pytest.mark.parametrize("text", ["2d", "2023-11-14", "2023-11-14 12:00", "2023-11-14T12:00:00+02:00",
                                  "1699900000000", "yesterday"])
def test_every_form_is_accepted_by_search_savings_and_calls(archive, text):
    path, root = archive
    for argv in (("search", "--since", text), ("calls", "--since", text),
                 ("archive", "savings", "--since", text, "--json")):
        done = run_yarp(*argv, "--archive", str(path), home=root)
        assert done.returncode in (0, 1), (argv, done.stderr)
        assert done.stderr == b""


def test_the_window_is_the_same_in_each_command(archive):
    # The call started at 2023-11-14T22:13:20Z: a window from 22:00 UTC, written as +01:00 local,
    # holds it in the list, the search listing and the savings report alike; one from 23:00 does not.
    path, root = archive
    for since, found in (("2023-11-14T23:00:00+01:00", True), ("2023-11-15T00:00:00+01:00", False)):
        listed = run_yarp("calls", "--since", since, "--json", "--archive", str(path), home=root)
        searched = run_yarp("search", "--since", since, "--json", "--archive", str(path), home=root)
        saved = run_yarp("archive", "savings", "--since", since, "--json", "--archive", str(path), home=root)
        assert (listed.stdout.count(b"\n") == 1) is found
        assert (len(json.loads(searched.stdout)["calls"]) == 1) is found
        assert (json.loads(saved.stdout)["total"]["calls"] == 1) is found


def test_export_reads_the_same_window(archive, tmp_path):
    pytest.importorskip("pyarrow")
    path, root = archive
    counts = []
    for n, since in enumerate(("30d", "2023-11-14")):  # the call reached the archive in 2023
        done = run_yarp("archive", "export", "--format", "parquet", str(tmp_path / str(n)), "--since", since,
                        "--json", "--archive", str(path), home=root)
        assert done.returncode == 0, done.stderr
        counts.append(json.loads(done.stdout)["tables"]["calls"]["rows"])
    assert counts == [0, 1]


def test_stats_prints_call_times_for_people_and_json_keeps_the_numbers(archive):
    path, root = archive
    env = {**yarp_env(root), "TZ": "Asia/Kolkata"}
    text = subprocess.run([sys.executable, "-m", "yarp", "archive", "stats", "--archive", str(path)], env=env,
                          capture_output=True, check=True).stdout.decode()
    assert "oldest_call_ms: 1700000000000 (2023-11-15 03:43:20 +05:30)\n" in text
    raw = subprocess.run([sys.executable, "-m", "yarp", "archive", "stats", "--json", "--archive", str(path)],
                         env=env, capture_output=True, check=True).stdout
    assert json.loads(raw)["oldest_call_ms"] == 1_700_000_000_000
