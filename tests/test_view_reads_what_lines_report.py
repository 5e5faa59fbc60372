"""The view reads what a line reports, not the words it happens to hold, for any tool.

Each test builds an output in the shape a real tool prints (the recorded runs are in
`bench/generalization/`) and checks one rule: a word inside a path says where, not what
happened; a log record at debug level is no failure and one at warning level is a warning; a
conflict marker quoted in a data file is a conflict; a failure line a little over the line
limit is shown whole; a line of a rare shape stands out in a text of up to a MiB, a failure
among thousands of its class too; a paragraph's first line naming a file heads the indented
findings under it; past a heading every record repeats, the record's first line does; and a
finding's numbers aligned right do not make its neighbours its heading; a tool naming itself an error
detector reports none, and its tally of errors is a summary; a carriage return ending a line (a
CSV report's rows) ends it, where one inside a line is a progress bar redrawn; and a checker's count of
what it found is its tally, wherever it stands.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from view_of import lines_of, view
from yarp import _templates_py
from yarp.view import ranking, rarity, salience, templates
from yarp.view.salience import classifier
from yarp.view.streams import Stream


def test_a_failure_word_inside_a_path_says_where_not_what_happened():
    sal = classifier()
    # A project directory named after what it tests is no failure; the file and line a failure names stay.
    assert sal.classify(b"FILE: /work/one-error-among-warnings/src/Rules/InvoiceRule147.php") == "plain"
    assert sal.classify(b"GET /api/errors/4 HTTP/1.1 200") == "plain"
    assert sal.classify(b"src/pkg/a.go:3:1: undefined: total") == "failure"
    assert sal.classify(b"src/error.c:3:1: error: 'x' undeclared") == "failure"
    assert sal.classify(b"ERROR: /srv/app/config.yml is missing") == "failure"
    # What comes before a relative path's first `/` is not masked: a level and its process.
    assert sal.classify(b"[2023-11-14 22:13:20,567: WARNING/MainProcess] Task t[1] retry: Retry in 30s") == "warning"
    # Paths are masked word by word from each word's start: a minified line of long words is one pass (tried at
    # every byte, this line took seconds), and a line over `MASKED_BYTES` keeps the class its words give it.
    words = b"error: " + b"a" * 200_000 + b" " + b"b" * 200_000 + b" /srv/one-error/x.js:3"
    for masked_paths in (templates.masked_paths, _templates_py.masked_paths):  # the kernel and its twin
        assert masked_paths(words) == words[:-21] + b"/xxx/xxx-xxxxx/x.js:3"
    assert len(words) > salience.MASKED_BYTES and sal.classify(b"FILE: /w/one-error/" + b"a" * 5000) == "failure"


def test_a_checker_s_one_error_among_warnings_is_not_buried_under_file_names_holding_error():
    # phpcs: 150 files' reports in a directory named after the run; each file's name, a count line and
    # its warnings. One file has one ERROR row; before, every `FILE:` line was a failure.
    out = []
    for n in range(150):
        out += ["", "", f"FILE: /tmp/work/phpcs-billing-one-error-among-warnings/src/Rules/InvoiceRule{n:03d}.php",
                "-" * 99]
        errors = 1 if n == 97 else 0
        out += [f"FOUND {errors} ERROR{'S' if errors != 1 else ''} AND 4 WARNINGS AFFECTING {4 + errors} LINES", "-" * 99]
        for line in (13, 22, 31, 43):
            out.append(f" {line} | WARNING | Line exceeds 120 characters; contains 204 characters")
            if errors and line == 31:
                out.append(' 33 | ERROR   | [x] TRUE, FALSE and NULL must be lowercase; expected "true" but found "TRUE"')
        out.append("-" * 99)
    out += ["", "Time: 884ms; Memory: 10MB"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=2))
    assert ' 33 | ERROR   | [x] TRUE, FALSE and NULL must be lowercase; expected "true" but found "TRUE"' in shown


def test_a_debug_record_is_no_failure_and_a_warn_record_is_a_warning():
    sal = classifier()
    assert sal.classify(b"Dec  7 02:57:24.916 [15353] dbg: diag: [...] module not installed: Geo::IP ('require' failed)") \
        == "plain"
    assert sal.classify(b"DEBUG:urllib3.connectionpool:Retrying after connection failed") == "plain"
    assert sal.classify(b"2026-12-07 12:00:01 DEBUG worker retry 3 failed") == "plain"
    assert sal.classify(b"Dec  7 02:57:25.149 [15353] warn: config: invalid 'rewrite_header' value") == "warning"
    assert sal.classify(b"[warn] upstream timed out") == "warning"
    # A word `debug` in what a line says is not its level, nor is one after a failure word.
    assert sal.classify(b"Building debug target failed") == "failure"
    assert sal.classify(b"Error: DEBUG build failed to link") == "failure"
    assert sal.classify(b"Stack trace: Error: boom") == "failure"
    # spamassassin's lint at debug level: twenty optional modules whose `require` failed, and two
    # invalid settings logged at warning level among 800 debug records.
    out = [f"Dec  7 02:57:24.916 [15353] dbg: diag: [...] optional module not installed: Mod{n}::X ('require' failed)"
           for n in range(20)]
    out += [f"Dec  7 02:57:25.{n % 1000:03d} [15353] dbg: config: parsing rule LOCAL_{n:04d}" for n in range(800)]
    out[500:500] = ["Dec  7 02:57:25.149 [15353] warn: config: invalid 'rewrite_header' value in site/local.cf (line 5)"]
    out[650:650] = ["Dec  7 02:57:25.153 [15353] warn: config: invalid regexp for LOCAL_INVOICE_097: Unmatched ( in regex"]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {out[500], out[650]} <= shown


def test_a_conflict_marker_quoted_in_a_notebook_is_a_conflict():
    sal = classifier()
    for line in (b'    "<<<<<<< local\\n",', b'    ">>>>>>> remote"', b"<<<<<<< HEAD", b"++>>>>>>> feature"):
        assert sal.classify(line) == "failure", line
    assert sal.classify(b"cat <<<<<<< x") == "plain"
    # nbmerge: a notebook of 30 cells, one holding the merge's conflict in its source strings.
    cells = []
    for n in range(30):
        source = [f'    "demand_{n} = load_series(\'region-{n}\')\\n",', f'    "model_{n} = fit(demand_{n})\\n"']
        if n == 12:
            source = ['    "<<<<<<< local\\n",', '    "horizon = 14\\n",', '    "=======\\n",', '    "horizon = 28\\n",',
                      '    ">>>>>>> remote"']
        cells.append("\n".join(["  {", '   "cell_type": "code",', '   "execution_count": null,', f'   "id": "cell-{n:02d}",',
                                '   "metadata": {},', '   "outputs": [],', '   "source": [', *source, "   ]", "  }"]))
    text = '{\n "cells": [\n' + ",\n".join(cells) + '\n ],\n "nbformat": 4\n}\n[W nbmergeapp:56] Conflicts occurred.\n'
    shown = lines_of(view(text.encode()))
    assert {'    "<<<<<<< local\\n",', '    "=======\\n",', '    ">>>>>>> remote"'} <= shown


def test_a_failure_line_a_little_over_the_line_limit_is_shown_whole():
    # fastify: 3,000 request records of a JSON log and one error record of 1,451 bytes, whose message
    # stands in its middle.
    out = []
    for n in range(3000):
        out.append(f'{{"level":30,"time":{1796612935424 + n},"reqId":"req-{n}","req":{{"method":"GET",'
                   f'"url":"/rooms/{n}/quote?nights=3"}},"msg":"incoming request"}}')
    stack = "\\n".join(f"    at handler{k} (/srv/app/node_modules/fastify/lib/route{k}.js:{k}:5)" for k in range(14))
    error = ('{"level":50,"time":1796612936761,"reqId":"req-x0","res":{"statusCode":500},"err":{"type":"TypeError",'
             f'"message":"Cannot read properties of undefined (reading \'rate\')","stack":"TypeError: {stack}"}},'
             '"msg":"Cannot read properties of undefined (reading \'rate\')"}')
    assert 1024 < len(error) < 2048
    out.insert(2376, error)
    shown = lines_of(view(("\n".join(out) + "\nquote check: 1500 requests, 1 failed\n").encode()))
    assert error in shown


def test_a_line_of_a_rare_shape_stands_out_in_a_text_of_up_to_a_mebibyte():
    # pylama over a legacy tree: 10,000 style findings of a few kinds and two undefined names, 800 KB.
    kinds = ("E501 line too long (103 > 79 characters) [pycodestyle]", "W291 trailing whitespace [pycodestyle]",
             "E231 missing whitespace after ',' [pycodestyle]", "C901 'build' is too complex (12) [mccabe]")
    out = [f"reports/report{n // 100:03d}.py:{n % 100 + 1}:80 {kinds[n % 4]}" for n in range(10000)]
    out[6123] = "reports/report061.py:23:103 E0602 undefined name 'region' [pyflakes]"
    out[6951] = "reports/report069.py:56:103 E0602 undefined name 'region' [pyflakes]"
    data = ("\n".join(out) + "\n").encode()
    assert rarity.LONG_BYTES < len(data) <= rarity.SHAPE_BYTES
    shown = lines_of(view(data))
    assert {out[6123], out[6951]} <= shown


def test_a_failure_of_a_rare_shape_stands_out_among_thousands_and_its_file_heads_it():
    # xo: 7,200 errors of a style checker in 100 files, each file's findings under its name, indented
    # as they are; two `no-undef` in the middle, each its own kind among errors of recurring kinds.
    kinds = ("Expected indentation of 1 tab but found 2 spaces.                    indent",
             "Unexpected var, use let or const instead.                            no-var",
             "Strings must use singlequote.                                        quotes")
    out = []
    for f in range(100):
        out += ["", f"  src/rates{f:02d}.js:1:17"]
        for n in range(72):
            message = kinds[n % 3]
            if (f, n) in ((19, 40), (71, 8)):
                message = "totl is not defined.                                                 no-undef"
            out.append(f"  \u2716  {n + 1:>2}:{(n * 7) % 60 + 1:<3} {message}")
    out += ["", "  7200 errors"]
    data = ("\n".join(out) + "\n").encode()
    assert len(data) <= rarity.SHAPE_BYTES
    shown = lines_of(view(data))
    undefined = [line for line in out if "no-undef" in line]
    assert len(undefined) == 2 and set(undefined) <= shown
    assert {"  src/rates19.js:1:17", "  src/rates71.js:1:17"} <= shown


def test_past_a_heading_every_record_repeats_the_record_s_first_line_is_shown():
    # linthtml: each page's report names the page, then the same config file, then its findings; two
    # errors among 3,000 warnings need their pages, not the config file every report names.
    rules = (("warning", 'The attribute "class" is not double quoted', "attr-quote-style"),
             ("warning", "Elements cannot have inline styles", "no-inline-style"),
             ("warning", 'The "alt" attribute must be set for <img> tag', "img-req-alt"))
    out = []
    for page in range(120):
        out += ["", f"File: manual/page{page:03d}.html", "Config file: /work/site/.linthtmlrc.json"]
        for n in range(25):
            severity, message, rule = rules[n % 3]
            if (page, n) in ((43, 12), (97, 5)):
                severity, message, rule = "error", "Tag is not closed", "tag-close"
            out.append(f"{f'{n + 8}:{(n * 5) % 60}':>6}  {severity:<7}  {message:<50}  {rule}")
    out += ["", "\u2716 3000 problems (2 errors, 2998 warnings)"]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {"File: manual/page043.html", "File: manual/page097.html"} <= shown


def test_a_finding_s_right_aligned_numbers_do_not_make_its_neighbour_its_heading():
    # linthtml aligns `line:column` to the right, so ` 19:55` is indented less than `  20:0` below it: the
    # finding above is its neighbour in one list, and the page's name is its heading.
    text = (b"File: manual/page043.html\n  9:14  warning  The attribute is not double quoted  attr-quote-style\n"
            b" 19:55  warning  The alt attribute must be set         img-req-alt\n"
            b"  20:0  error    Tag is not closed                      tag-close\n")
    stream = Stream("stdout", text, classifier())
    assert ranking.heading(stream, 3) == 0


def test_a_row_of_a_rare_column_value_stands_out_in_a_table_of_up_to_half_a_mebibyte():
    # express with morgan: 4,000 requests logged, one answered 500; 350 KB, past where rare first words
    # are read, and nothing in the line is alarming but its status.
    out = [f'127.0.0.1 - - [07/Dec/2026:04:{n // 60 % 60:02d}:{n % 60:02d} +0000] "GET /rates/{n} HTTP/1.1" 200 '
           f'{20 + n % 7} "-" "curl/7.88.1" {n % 13}.{n % 1000:03d} ms' for n in range(4000)]
    out[2290] = out[2290].replace('HTTP/1.1" 200', 'HTTP/1.1" 500')
    data = ("\n".join(out) + "\nrates check: 4000 requests, 1 failed\n").encode()
    assert rarity.RARE_BYTES < len(data) <= rarity.LONG_BYTES
    assert out[2290] in lines_of(view(data, exit_code=0))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=2, max_size=60))
def test_a_field_ruled_out_by_its_count_of_values_holds_no_rare_value(said):
    # `rare_values` skips a field whose values are too many for either rule to find a rare one: one value
    # on four fifths of its lines, or values said at most twice on one line in a hundred at most.
    total = len(said) and sum(said)
    if rarity._never_rare(len(said), total):
        top = max(said)
        assert top * 100 < total * rarity.FIELD_SHARE
        assert sum(count for count in said if count <= 2) * 100 > total * rarity.SELDOM_SHARE


def test_a_rare_status_is_found_beside_a_field_of_ids_each_said_once():
    # A check listing 2,000 objects by a hex id (each id its own value once its digits are left out), each
    # with a status: the one `Status: corrupt` among `Status: ok` stands out however many ids there are.
    out = []
    for n in range(2000):
        out += [f"ID: {n * 7919 % 65521:04x}{'abcdef'[n % 6]}{n % 97:02x}", "Status: corrupt" if n == 1234 else "Status: ok"]
    data = ("\n".join(out) + "\n").encode()
    assert len(data) <= rarity.LONG_BYTES
    lines = data.split(b"\n")
    assert 1234 * 2 + 1 in rarity.rare_values(data[:-1], lines[:-1], {})


def test_a_cross_mark_and_a_possible_data_race_are_failures():
    sal = classifier()
    assert sal.classify("    01:29 \u274c invalid newline: crlf, expected: lf".encode()) == "failure"
    assert sal.classify("\u274c src/pages/index.ts".encode()) == "failure"
    assert sal.classify(b"==5368== Possible data race during read of size 8 at 0x10C068 by thread #2") == "failure"
    # eclint: 240 files, each with its findings under its name; two files hold the only findings of
    # other kinds, which come with their file's name.
    out = []
    for n in range(240):
        out.append(f"src/components/card{n:03d}.js")
        kinds = [("01:29", "unexpected trailing whitespace"), ("04:41", "unexpected trailing whitespace")]
        if n == 88:
            kinds = [("01:29", "invalid newline: crlf, expected: lf")]
        if n == 141:
            kinds = [(f"{k:02d}:01", "invalid indent style: tab, expected: space") for k in range(4, 7)]
        for at, message in kinds:
            out += [f"    {at} \u274c {message}", " " * 37 + "(EditorConfig trim_trailing_whitespace https://x.y/z)"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=255))
    assert {"src/components/card088.js", "    01:29 \u274c invalid newline: crlf, expected: lf",
            "src/components/card141.js", "    04:01 \u274c invalid indent style: tab, expected: space"} <= shown


def test_a_tool_naming_itself_an_error_detector_is_no_failure_and_its_error_tally_is_a_summary():
    sal = classifier()
    assert sal.classify(b"==5368== Helgrind, a thread error detector") == "plain"
    assert sal.classify(b"==77== Memcheck, a memory error detector") == "plain"
    assert sal.classify(b"an error checker crashed: error: boom") == "failure"  # it reports one
    assert sal.classify(b"==5368== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)") == "summary"
    assert sal.classify(b"==5368== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 38 from 21)") == "summary"
    # Helgrind's run: its banner is the first line, its tally the last; the race stands between 3,000 lines.
    out = ["==5368== Helgrind, a thread error detector", "==5368== Copyright (C) 2007-2017, and GNU GPL'd"]
    out += [f"worker {n % 8}: job {n} done" for n in range(3000)]
    out[1500:1500] = ["==5368== Possible data race during read of size 8 at 0x10C068 by thread #2",
                      "==5368==    at 0x109A7B: take_job (pool.c:41)"]
    out.append("==5368== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)")
    data = ("\n".join(out) + "\n").encode()
    assert {out[1500], out[1501], out[-1]} <= lines_of(view(data))
    stream = Stream("stderr", data, sal)
    assert [stream.lines[i] for i, cls in stream.classes.items() if cls in salience.FAILURE_CLASSES] == [out[1500].encode()]


def test_a_line_ending_in_a_carriage_return_is_a_line_not_a_redraw():
    sal = classifier()
    # A progress bar redraws its line after a carriage return; a CSV report ends each row with one (RFC 4180).
    assert sal.is_noise(b" [PARSING access.log] {173} @ {0/s}\r [PARSING access.log] {12693} @ {0/s}\r")
    assert sal.is_noise(b"\r 42% downloading")
    assert not sal.is_noise(b'"1",,"general",,,,,,,,"24000","total_requests"\r')
    # goaccess's CSV report: its head says what it counted; the three failing rows stand between 800 rows.
    rows = [f'"{n}",,"general",,,,,,,,"{value}","{name}"' for n, (value, name) in enumerate(
        [("24000", "total_requests"), ("24000", "valid_requests"), ("0", "failed_requests")])]
    rows += [f'"{n}",,"requests","52","0.22%","52","0.50%","102980","0.21%","GET","HTTP/1.1","/api/orders/{n}"'
             for n in range(800)]
    rows += ['"2",,"status_codes","3","0.01%","3","0.03%","4291","0.01%",,,"5xx Server Errors"']
    data = ("\r\n".join(rows) + "\r\n").encode()
    shown = {line.rstrip("\r") for line in lines_of(view(data, exit_code=0))}
    assert {rows[0], rows[2], rows[-1]} <= shown


def test_a_checkers_count_of_what_it_found_is_a_summary_wherever_it_stands():
    sal = classifier()
    for line in (b"296 findings (113 suppressed, 38 unsafe fixes): 0 informational, 0 low, 73 medium, 110 high",
                 b"  81 alarms generated by the analysis:", b"3 vulnerabilities found", b"12 offenses detected"):
        assert sal.classify(line) == "summary", line
    assert sal.classify(b"Inspecting 4 files") == "plain"
    # A checker's findings, its tally, then 40 lines of its progress on the other stream: a host's text ends there.
    out = []
    for n in range(60):
        out += [f"[eva:alarm] src/field_{n:02d}.c:10: Warning: ", "  signed overflow. assert sum + x <= 2147483647;"]
    out += ["  81 alarms generated by the analysis:", "      40 integer overflows"]
    out += [f" INFO audit: completed ./workflows/svc{n}.yml" for n in range(40)]
    assert "  81 alarms generated by the analysis:" in lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))


def test_a_windows_tools_crlf_lines_are_classed_as_its_lf_lines():
    sal = classifier()
    # The entries' `$` sees a line's end before its carriage return: pytest's banners, headers and summaries.
    for line, cls in ((b"=== 1 failed, 299 passed in 2.10s ===", "summary"), (b"____ test_total ____", "header"),
                      (b"FAILED", "summary")):
        assert sal.classify(line + b"\r") == sal.classify(line) == cls, line
        assert sal.classify(line + b"\r", sal.salient_lines(line + b"\r")[0]) == cls, line
    out = ["============================= test session starts ============================="]
    out += [f"tests/test_cart.py::test_total_{n} PASSED  [{n // 3:3d}%]" for n in range(300)]
    out += ["=================================== FAILURES ===================================",
            "________________________________ test_total_7 _________________________________",
            "    def test_total_7():", ">       assert total([3]) == 4", "E       assert 3 == 4",
            "tests/test_cart.py:9: AssertionError"]
    out += [f"  note {n}: cart was rebuilt from the fixture before the check" for n in range(120)]
    out += ["========================= 1 failed, 299 passed in 2.10s ========================="]
    crlf, lf = ("\r\n".join(out) + "\r\n").encode(), ("\n".join(out) + "\n").encode()
    assert Stream("stdout", crlf, sal).classes == Stream("stdout", lf, sal).classes
    shown = {line.rstrip("\r") for line in lines_of(view(crlf, exit_code=1))}
    assert {out[-1], out[302], out[305]} <= shown
