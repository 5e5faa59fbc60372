"""`yarp search` matches characters: non-ASCII output and bytes that are not UTF-8, through the real CLI."""

from __future__ import annotations

import json

import pytest
from archive_factory import ArchiveFactory, run_yarp

# A compiler's typographic quotes, both cases of an accented word, two bytes that are
# not UTF-8 (a lone continuation byte and a cut three-byte sequence), and a CRLF line.
STDOUT = (
    "main.cpp:3:5: error: ‘format_total’ was not declared in this scope\n".encode()
    + b"ok line\n"
    + "Élan vital\n".encode()
    + b"bad \xff\xe5\xa4 byte\n"
    + "élan vital\r\n".encode()
    + "stra\u00dfe ÉLAN\n".encode()
)
STDERR = "warning: ‘unused’ [-Wunused]\n".encode()


@pytest.fixture(scope="module")
def arch(tmp_path_factory):
    root = tmp_path_factory.mktemp("search-text")
    path = root / "archive" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        ref = factory.shell_call("c1", STDOUT, STDERR)
        other = factory.shell_call("c2", b"nothing to see\n")
    home = root / "home"
    home.mkdir()
    return path, ref, other, home


def yarp(arch, *args):
    path, _, _, home = arch
    return run_yarp(*args, "--archive", str(path), home=home)


def selected(result, source="stdout"):
    """{line number: shown text} of the selected lines of one source."""
    assert result.returncode in (0, 1), result.stderr
    if result.returncode == 1:
        return {}
    found = {s["source"]: s for s in json.loads(result.stdout)["sources"]}
    return {line["line"]: line["text"] for line in found[source]["lines"] if line["selected"]}


def test_dot_and_class_match_one_character(arch):
    ref = arch[1]
    result = yarp(arch, "search", ref, "error: .format_total")
    assert result.returncode == 0, result.stderr
    assert "stdout:1:main.cpp:3:5: error: ‘format_total’ was not declared in this scope" in result.stdout.decode()
    assert selected(yarp(arch, "search", ref, "[‘']format_total[’']", "--json")) == {
        1: "main.cpp:3:5: error: ‘format_total’ was not declared in this scope"}
    assert selected(yarp(arch, "search", ref, "^.lan", "--json")) == {3: "Élan vital", 5: "élan vital"}
    assert selected(yarp(arch, "search", ref, "warning: .unused.", "--json"), "stderr") == {
        1: "warning: ‘unused’ [-Wunused]"}


@pytest.mark.parametrize("args, lines", [
    (("élan",), {5}),
    (("-i", "élan"), {3, 5, 6}),
    (("-i", "-F", "ÉLAN VITAL"), {3, 5}),
    (("-i", "-w", "élan"), {3, 5, 6}),
    (("-w", "lan"), set()),  # É is a word character: no boundary inside "Élan"
    (("-i", "STRASSE|STRAßE"), {6}),
    (("-v", "-i", "élan|error|ok|byte"), set()),
])
def test_case_and_words_are_unicode(arch, args, lines):
    assert set(selected(yarp(arch, "search", arch[1], *args, "--json"))) == lines


def test_bytes_that_are_not_utf8_are_one_character_each_and_stay_exact(arch):
    ref = arch[1]
    # \xff and the cut sequence \xe5\xa4 are three characters between "bad " and " byte".
    result = yarp(arch, "search", ref, "bad ... byte", "-C", "0")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert "stdout:4:bad \ufffd\ufffd byte" in out  # shown with replacement characters
    assert f"Read exact context: yarp read {ref} stdout 4:4" in out
    assert yarp(arch, "search", ref, "bad .... byte").returncode == 1
    assert yarp(arch, "search", ref, "bad .. byte").returncode == 1
    # The printed read command gives back the exact bytes.
    assert yarp(arch, "read", ref, "stdout", "4:4").stdout == b"bad \xff\xe5\xa4 byte\n"
    # A pattern holding the same invalid bytes on the command line matches them, literally or not.
    assert selected(yarp(arch, "search", ref, b"\xff\xe5\xa4", "--json")) == {4: "bad \ufffd\ufffd byte"}
    assert selected(yarp(arch, "search", ref, "-F", b"\xff\xe5", "--json")) == {4: "bad \ufffd\ufffd byte"}
    assert yarp(arch, "search", ref, b"\xe5\xa4\xa4").returncode == 1  # 失's bytes are not in the line


def test_line_numbers_count_raw_lines_after_multibyte_and_invalid_bytes(arch):
    ref = arch[1]
    got = selected(yarp(arch, "search", ref, "-i", "élan vital$", "--json"))
    assert got == {3: "Élan vital", 5: "élan vital"}  # the CR of line 5 is not part of the match form
    assert yarp(arch, "read", ref, "stdout", "5:5").stdout == "élan vital\r\n".encode()


def test_listing_text_matches_characters(arch):
    _, ref, other, _ = arch
    listing = yarp(arch, "search", "--text", "error: .format_total")
    assert listing.returncode == 0, listing.stderr
    assert ref in listing.stdout.decode() and other not in listing.stdout.decode()
    assert ref in yarp(arch, "search", "--text", "ÉLAN", "-i").stdout.decode()
    assert ref in yarp(arch, "search", "--text", b"\xff\xe5\xa4 byte").stdout.decode()
    assert yarp(arch, "search", "--text", "ÉLAN VITAL").returncode == 1
