"""The view judges lines by what they say, on shapes of output no rule names.

Each test builds an output in the shape a real tool prints (the generalization corpus in
`bench/generalization/` holds the recorded runs) and checks one principle of the view:
severity over volume, a finding kept with where it is, the output's own end, rare lines in
repetition, one kind seen before a second alike, and a view no larger than its signal needs.
"""

from __future__ import annotations

import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from view_of import REF, lines_of, view
from yarp.view import ranking, rarity
from yarp.view.salience import classifier
from yarp.view.streams import Stream


def test_two_rare_errors_among_hundreds_of_style_findings_are_kept():
    findings = [f"src/pkg/mod{i % 40}.py:{i % 90 + 1}:1: {kind}" for i, kind in enumerate(
        ["F401 [*] `os` imported but unused", "I001 [*] Import block is un-sorted or un-formatted",
         "E501 Line too long (120 > 88)"] * 107)]
    rare = ["src/pkg/core.py:12:5: F821 Undefined name `total_price`",
            "src/pkg/api.py:40:9: F821 Undefined name `session`"]
    findings[150:150] = [rare[0]]
    findings[260:260] = [rare[1]]
    shown = lines_of(view(("\n".join(findings) + "\nFound 323 errors.\n").encode()))
    assert set(rare) <= shown and "Found 323 errors." in shown


def test_an_indented_finding_keeps_the_file_heading_it_sits_under():
    blocks = []
    for n in range(30):
        blocks.append(f"/work/app/src/widgets/widget_{n:02d}.js")
        blocks += [f"  {k}:{k + 3}  warning  'v{k}' is defined but never used  no-unused-vars" for k in range(1, 10)]
        if n == 17:
            blocks.append("  4:17  error  'computeScale' is not defined  no-undef")
        blocks.append("")
    blocks.append("✖ 271 problems (1 error, 270 warnings)")
    shown = lines_of(view(("\n".join(blocks) + "\n").encode()))
    assert "  4:17  error  'computeScale' is not defined  no-undef" in shown
    assert "/work/app/src/widgets/widget_17.js" in shown
    assert "✖ 271 problems (1 error, 270 warnings)" in shown


def test_a_note_that_mentions_a_failure_is_not_an_error():
    out = []
    for n in range(60):
        out.append(f"/usr/include/c++/12/ostream:{500 + n}:5: note: candidate: 'operator<<({n})'")
        out.append(f"/usr/include/c++/12/ostream:{500 + n}:5: note:   template argument deduction/substitution failed:")
    out.insert(0, "app.cpp:9:13: error: no match for 'operator<<'")
    out.append("app.cpp:11:14: error: 'format_total' was not declared in this scope")
    text = view(("\n".join(out) + "\n").encode())
    assert "app.cpp:9:13: error: no match for 'operator<<'" in text
    assert "app.cpp:11:14: error: 'format_total' was not declared in this scope" in text
    # Notes are context, not findings: the header counts no failure among the lines it left out.
    assert not re.search(r"omitted \d+ failure", text)


def test_a_conflict_among_auto_merging_lines_and_the_last_line_are_kept():
    out = [f"Auto-merging src/module_{i}/file.c" for i in range(300)]
    out.insert(157, "CONFLICT (content): Merge conflict in src/module_157/file.c")
    out.append("Automatic merge failed; fix conflicts and then commit the result.")
    text = view(("\n".join(out) + "\n").encode())
    assert "CONFLICT (content): Merge conflict in src/module_157/file.c" in lines_of(text)
    assert text.rstrip("\n").endswith("Automatic merge failed; fix conflicts and then commit the result.")
    assert re.search(r'omitted \d+ line\(s\) like "Auto-merging src/module_\d+/file\.c"', text)


def test_a_rare_line_in_repetitive_output_is_kept():
    out = [f"\tmodified:   src/pkg/file_{i}.py" for i in range(220)]
    out[180:180] = ["\tboth modified:   src/pkg/ledger.py"]
    text = view(("On branch main\nChanges to be committed:\n" + "\n".join(out) + "\n").encode())
    assert "\tboth modified:   src/pkg/ledger.py" in lines_of(text)


def test_a_line_that_introduces_frames_keeps_them_with_its_finding():
    out = [f"=== RUN   TestCase{i}\n--- PASS: TestCase{i} (0.00s)" for i in range(300)]
    out.append("==================\nWARNING: DATA RACE\nRead at 0x00c000100088 by goroutine 9:\n"
               "  example.com/metrics/counter.(*Counter).Add()\n"
               "      /src/metrics/counter/counter.go:10 +0xe5\n==================")
    out.append("FAIL\tpkg\t0.02s")
    text = view(("\n".join(out) + "\n").encode())
    assert "      /src/metrics/counter/counter.go:10 +0xe5" in lines_of(text)
    assert "WARNING: DATA RACE" in lines_of(text)


def test_the_output_s_own_end_is_kept():
    out = [f"would reformat /work/app/src/module_{i}.py" for i in range(400)]
    out += ["", "Oh no! 💥 💔 💥", "400 files would be reformatted, 12 files would be left unchanged."]
    text = view(("\n".join(out) + "\n").encode())
    assert text.rstrip("\n").endswith("400 files would be reformatted, 12 files would be left unchanged.")


def test_a_view_is_no_larger_than_its_signal_needs():
    log = "".join(f"2026-12-03 12:{i // 60 % 60:02d}:{i % 60:02d} INFO worker-{i % 4} handled request "
                  f"id={i} status=200\n" for i in range(3000))
    log += "2026-12-03 13:00:00 ERROR worker-2 payment gateway timeout after 30000ms (order=8812)\n"
    log += "".join(f"2026-12-03 13:00:{i % 60:02d} INFO worker-1 handled request id={i} status=200\n"
                   for i in range(3000))
    text = view(log.encode(), exit_code=0)
    assert "2026-12-03 13:00:00 ERROR worker-2 payment gateway timeout after 30000ms (order=8812)" in text
    assert len(text.encode()) < 5120 * 6 // 10  # well under the budget a naive cap fills


def test_plain_lines_give_no_hint_and_the_header_says_how_to_read_back():
    text = view("".join(f"{i}\n" for i in range(1, 200001)).encode(), exit_code=0)
    assert "Search omitted output" not in text
    markers = [line for line in text.split("\n") if line.startswith("[yarp: ")]
    assert len(markers) == 2  # the reference line and the only run's marker
    assert re.match(rf"^\[yarp: omitted \d+ other line\(s\): yarp read {REF} stdout \d+:\d+; exit status 0\]$",
                    markers[1])


def test_a_minified_json_shows_its_head_and_its_tail():
    data = ('{"items": [' + ", ".join(f'{{"id": {i}}}' for i in range(60000)) + "]}").encode()
    text = view(data, exit_code=0)
    head, note, tail = text.split("\n")[:3]
    assert data.startswith(head.encode()) and data.endswith(tail.encode())
    assert re.match(rf"^\[yarp: line 1 cut: bytes \d+:\d+ of {len(data)} omitted\]$", note)
    assert len(head) + len(tail) > 3000


def test_a_zero_coverage_row_in_a_long_table_is_kept():
    rows = [f"src/pkg/mod{i:03d}.py      {100 + i:4d}   {i % 50:3d}    {60 + i % 40:3d}%" for i in range(300)]
    rows.insert(120, "src/pkg/legacy_export.py     88     88      0%")
    text = view(("Name   Stmts   Miss  Cover\n" + "\n".join(rows) + "\nTOTAL  40000  7000   82%\n").encode())
    assert "src/pkg/legacy_export.py     88     88      0%" in lines_of(text)
    assert "TOTAL  40000  7000   82%" in lines_of(text)


def test_a_frame_in_the_users_own_code_is_kept_among_a_frameworks_frames():
    # Three tracebacks of 17 framework frames each, the user's own frame deep inside each: past the
    # lines that follow a traceback's start, and more than the budget shows whole.
    lib = "/home/u/.venv/lib/python3.11/site-packages/framework"
    out = [f"  Applying app.{n:04d}_step... OK" for n in range(120)]
    for attempt in range(3):
        out += ["Traceback (most recent call last):"]
        for n in range(17):
            out += [f'  File "{lib}/layer{n}.py", line {100 + n}, in call_{n}', f"    return self.next_{n}(value)"]
            if n == 12:
                out += [f'  File "/home/u/shop/migrations/000{attempt}_backfill.py", line 9, in backfill',
                        "    row.total = Decimal(row.raw_total)"]
        out += ["decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    for attempt in range(3):
        assert f'  File "/home/u/shop/migrations/000{attempt}_backfill.py", line 9, in backfill' in shown
    assert "    row.total = Decimal(row.raw_total)" in shown


def test_the_step_a_log_was_at_when_it_failed_is_kept():
    out = [f"INFO  [migration] Running upgrade {n:04x} -> {n + 1:04x}, step {n}" for n in range(300)]
    out += ["Traceback (most recent call last):", '  File "/srv/app/env.py", line 3, in <module>',
            "    run()", "sqlalchemy.exc.OperationalError: no such table: invoices"]
    out += [f"DEBUG cleanup {n}" for n in range(200)]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert "INFO  [migration] Running upgrade 012b -> 012c, step 299" in shown
    assert "sqlalchemy.exc.OperationalError: no such table: invoices" in shown


def test_a_tally_of_counts_is_a_summary_wherever_it_stands():
    # A package manager's plan: lists of packages, its tally, then a line per step.
    out = ["Reading package lists...", "Building dependency tree...", "Reading state information..."]
    for section in ("Suggested packages:", "Recommended packages:", "The following NEW packages will be installed:",
                    "The following packages will be upgraded:"):
        out.append(section)
        out += ["  " + " ".join(f"lib{section[4:8].strip().lower()}{n * 6 + k}" for k in range(6)) for n in range(40)]
    out += ["7 upgraded, 440 newly installed, 0 to remove and 133 not upgraded."]
    for n in range(300):
        out += [f"Inst libpkg{n} (1.{n} Debian:12/stable [amd64])", f"Conf libpkg{n} (1.{n} Debian:12/stable [amd64])"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert "7 upgraded, 440 newly installed, 0 to remove and 133 not upgraded." in shown


def test_the_largest_entries_of_a_table_of_sizes_are_kept_and_ids_are_not_sizes():
    # `du -ah`: sizes in K and M in the order of the tree, the largest anywhere.
    units = ("K", "M")
    sizes = [f"{(n * 37) % 90 + 4}{units[n % 2]}\tdata/part-{n:05d}.bin" for n in range(3000)]
    sizes[1234] = "480M\tdata/core.dump"
    shown = lines_of(view(("\n".join(sizes) + "\n").encode(), exit_code=0))
    assert "480M\tdata/core.dump" in shown
    # A query's rows start with their id: the largest ids are no finding, and the view stays small.
    rows = [f"{n:<5} Kunde {n} — Köln  {n % 500}.5  2024-01-01" for n in range(3000)]
    plain = view(("\n".join(rows) + "\n").encode(), exit_code=0)
    assert "2999  Kunde 2999" not in plain.split("[yarp: omitted")[0] and len(plain.encode()) < 5120


def test_a_checker_s_one_finding_of_its_kind_among_style_findings_is_kept():
    # clang-tidy's shape: every finding a warning with its source and caret, twenty style checks in every
    # module; the two findings of a kind seen once sit late, the second among touching findings.
    checks = [f"{group}-{name}" for group in ("modernize", "readability", "performance", "cppcoreguidelines")
              for name in ("braces", "naming", "magic", "trailing", "owning")]
    out = []
    for m in range(6):
        for k, check in enumerate(checks):
            out += [f"src/module{m}.cpp:{k + 5}:9: warning: this statement could be written in a more modern style [{check}]",
                    f"    int value_{k} = compute_the_value({k}, {m});", "        ^"]
    strcpy = "src/parser.cpp:6:5: warning: Call to function 'strcpy' is insecure [clang-analyzer-security.insecureAPI.strcpy]"
    leak = "src/parser.cpp:14:25: warning: Potential leak of memory pointed to by 'table' [clang-analyzer-cplusplus.NewDeleteLeaks]"
    middle = [strcpy, "    strcpy(buf, text);", "    ^~~~~~",
              f"src/parser.cpp:13:5: warning: this statement could be written in a more modern style [{checks[3]}]",
              "    int *table = new int[n];", "    ^", leak, "    if (n > 100) return -1;", "                 ^"]
    out[len(out) // 2:len(out) // 2] = middle + [f"src/parser.cpp:13:18: note: step {k} of the path" for k in range(12)]
    out += [f"src/parser.cpp:20:21: warning: this statement could be written in a more modern style [{checks[1]}]",
            "    if (s[0] == '#') p = s + 1;", "                    ^", "Suppressed 114707 warnings (114707 in non-user code)."]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert strcpy in shown and leak in shown


def test_warnings_beside_a_failure_are_not_shown_a_hundred_alike():
    out = []
    for n in range(120):
        out += [f"warning: unused variable: `x{n}`", f"  --> src/lib{n}.rs:{n + 1}:9", "   |", f"{n + 1:3} |     let x{n} = 1;",
                "   |         ^^ help: if this is intentional, prefix it with an underscore", ""]
    out[300:300] = ["error[E0308]: mismatched types", " --> src/main.rs:3:18", "  |", "3 |     let total: u32 = \"12\";",
                    "  |                      ^^^^ expected `u32`, found `&str`", ""]
    out.append("error: could not compile `demo` due to 1 previous error; 120 warnings emitted")
    shown = view(("\n".join(out) + "\n").encode())
    assert "error[E0308]: mismatched types" in shown and out[-1] in shown
    # The first few of the kind and the view's head and tail; the header counts the rest.
    assert len(re.findall(r"(?m)^warning: unused variable", shown)) <= 16
    assert len(shown) < 3500


def test_a_rare_line_behind_a_numbered_prefix_is_kept():
    # ctest -V prefixes each test's lines with its number: the words after it say what a line is.
    out = []
    for t in range(1, 15):
        out += [f"{t}: Test command: /work/build/t{t:02d}"] + [f"{t}: case {t}.{c} ok" for c in range(12)]
        if t == 10:
            out.insert(len(out) - 6, "10: checksum mismatch: expected 0x3fa2 got 0x3fa3")
        out.append(f"{t:2d}/14 Test #{t}: codec_{t:02d} .......   {'***Failed' if t == 10 else '  Passed'}    0.00 sec")
    out += ["", "93% tests passed, 1 tests failed out of 14"]
    text = ("\n".join(out) + "\n").encode()
    assert "10: checksum mismatch: expected 0x3fa2 got 0x3fa3" in lines_of(view(text, exit_code=8))
    lines = text.split(b"\n")
    rare = {lines[n] for n in rarity.rare_lines(text, lines, {}, classifier().first_word)}
    assert b"10: checksum mismatch: expected 0x3fa2 got 0x3fa3" in rare


def test_a_field_that_says_something_nowhere_else_is_kept_under_its_heading():
    out = []
    for n, name in enumerate(["order_id", "customer", "country", "amount", "status", "shipped", "note", "channel"], 1):
        nulls = "True (excluded from calculations)" if name == "shipped" else "False"
        out += [f'  {n}. "{name}"', "", "\tType of data:          Text", f"\tContains null values:  {nulls}",
                "\tNon-null values:       1500", "\tUnique values:         297"]
        out += [f"\tMost common values:    value{k} ({30 - k}x)" if k == 0 else f"\t                       value{k} ({30 - k}x)"
                for k in range(5)] + [""]
    out += ["Row count: 1500"]
    text = ("\n".join(out) + "\n").encode()
    shown = lines_of(view(text, exit_code=0))
    assert "\tContains null values:  True (excluded from calculations)" in shown
    assert '  6. "shipped"' in shown and "Row count: 1500" in shown
    lines = text.split(b"\n")
    rare = rarity.rare_values(text, lines, {})
    assert [lines[n] for n in rare] == [b"\tContains null values:  True (excluded from calculations)"]
    stream = Stream("stdout", text, classifier())
    assert lines[ranking.heading(stream, rare[0])] == b'  6. "shipped"'  # the line indented less, not the margin


def test_a_row_of_another_shape_in_a_table_stands_alone():
    rows = [f" src/pkg{n % 9}/mod_{n:03d}.py  |  {20 + n % 5} {'+' * (10 + n % 5)}{'-' * 10}" for n in range(280)]
    rows[0] = " assets/logo.bin      | Bin 0 -> 76800 bytes"
    rows[170] = " src/pkg5/mod_170.py  |  10 ----------"
    rows.append(" 280 files changed, 3350 insertions(+), 2800 deletions(-)")
    shown = view(("\n".join(rows) + "\n").encode(), exit_code=0)
    assert rows[170] in lines_of(shown)
    # A rare row is shown by itself: its neighbours are the rows it stands out from.
    assert rows[169] not in lines_of(shown) and rows[171] not in lines_of(shown)


def test_a_rare_line_brings_the_lines_of_its_section_beside_it():
    out = ["On branch main", "Unmerged paths:", "  (use \"git add <file>...\" to mark resolution)"]
    out += [f"\tmodified:   src/pkg{n % 7}/module_{n:03d}.py" for n in range(400)]
    out[60:60] = ["\tdeleted by them: docs/legacy-api.md", "\tboth modified:   src/pkg1/module_103.py",
                  "\tboth modified:   src/pkg4/module_058.py", "\tboth modified:   src/pkg5/module_017.py"]
    out += ["", "no changes added to commit (use \"git add\" and/or \"git commit -a\")"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert set(out[60:64]) <= shown


def test_passing_subtests_under_a_failing_test_are_not_shown_as_its_context():
    out = ["=== RUN   TestMake/double_space", '    slug_test.go:133: Make("New  Year") = "new--year", want "new-year"',
           "--- FAIL: TestMake (0.00s)"]
    out += [f"    --- PASS: TestMake/title_{n:03d} (0.00s)" for n in range(400)]
    out += ["    --- FAIL: TestMake/double_space (0.00s)", "FAIL", "FAIL\texample.com/slug\t0.003s", "FAIL"]
    shown = view(("\n".join(out) + "\n").encode())
    assert "--- FAIL: TestMake (0.00s)" in shown
    assert len(re.findall(r"--- PASS: ", shown)) <= 8


def test_a_summary_before_the_diagnostics_it_counts_is_kept():
    # biome writes 'Found 16 errors.' to stdout and its diagnostics to stderr: in a host's text the
    # summary comes first, and sixteen failure blocks would take the budget before it.
    diagnostics = []
    for n in range(60):
        diagnostics += [f"src/m{n}.js:{n + 3}:3 lint/style/{('noVar', 'noParameterAssign', 'useConst')[n % 3]}  "
                        f"━━━━━━━━━━━━━━━━━━━━", "", f"  × Rule {n % 3} was broken here in module {n}.", ""]
        diagnostics += [f"    {k} │   var unused{k} = compute({k}, {n})" for k in range(1, 13)] + [""]
    text = "Found 60 errors.\nChecked 60 files in 8ms. No fixes applied.\n" + "\n".join(diagnostics) + "\n"
    assert "Found 60 errors." in lines_of(view(text.encode()))


def test_an_ascii_error_glyph_marks_a_failure_among_warnings():
    out = []
    for n in range(60):
        out += [f"  ! eslint(no-unused-vars): Variable 'v{n}' is declared but never used.",
                f"   ,-[src/w{n}.js:{n + 1}:7]", f" {n + 1} | let v{n} = {n};", "   `----"]
    errors = []
    for n in range(6):
        errors += [f"  x eslint(for-direction): The update clause in loop {n} moves the variable the wrong way",
                   f"   ,-[src/loop{n}.js:2:19]", " 2 | for (let i = 0; i < 10; i--) {}", "   `----"]
    out[100:100] = errors
    out += ["Found 60 warnings and 6 errors."]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert set(errors[0::4]) <= shown and set(errors[1::4]) <= shown


def test_an_indented_finding_of_a_rare_check_stands_out():
    out = []
    for n in range(20):  # every message starts with its own name: the check at the end is the kind
        out += [f"  /work/lib/w{n}.js:1:1: 'counter{n}' is already declared. (no-redeclare)",
                f"  /work/lib/w{n}.js:1:4: 'total{n}' is never reassigned, use const. (prefer-const)",
                f"  /work/lib/w{n}.js:3:8: 'unused{n}' is assigned a value but never used. (no-unused-vars)"]
    out[31:31] = ["  /work/lib/w10.js:6:21: 'offset' is not defined. (no-undef)"]
    text = ("\n".join(out) + "\n").encode()
    lines = text.split(b"\n")
    assert [lines[n] for n in rarity.rare_findings(text, lines, {}, classifier().finding)[0]] == [out[31].encode()]


def test_a_row_whose_status_word_is_rare_stands_out():
    # radon grades every function A to F and Robot Framework marks each test PASS or FAIL: the row's
    # shape keeps its short word of capitals, so the two F rows are rare among 3,000 A rows.
    rows = [f"    F {n % 90 + 1}:0 handler_{n} - A ({n % 3 + 1})" for n in range(3000)]
    rows[700] = "    F 73:0 dispatch_251 - F (67)"
    rows[2100] = "    F 73:0 dispatch_137 - F (67)"
    rows += ["", "3000 blocks (classes, functions, methods) analyzed.", "Average complexity: A (2.03)"]
    shown = lines_of(view(("\n".join(rows) + "\n").encode(), exit_code=0))
    assert rows[700] in shown and rows[2100] in shown


def test_an_unhandled_condition_and_its_backtrace_are_a_failure():
    out = ["; caught WARNING:", ";   undefined variable: COMMON-LISP-USER::TAX-RATE"]
    words = "order item price total batch report line entry record count sum tax net rate row".split()
    out += [f"{words[n % 15]} {n}: " + " ".join(["item"] * (n % 9)) for n in range(600)]  # no one shape or word
    out += ['Unhandled UNBOUND-VARIABLE in thread #<SB-THREAD:THREAD "main thread" RUNNING', "    {1001348003}>:",
            "  The variable TAX-RATE is unbound.", "", 'Backtrace for: #<SB-THREAD:THREAD "main thread" RUNNING>',
            "0: (PRINT-REPORT ((1 (:PRICE 1 :QTY 2)) ...))"]
    out += [f"{n}: (SB-INT:SIMPLE-EVAL-IN-LEXENV (FRAME {n}))" for n in range(1, 30)]
    out += [f"{words[n % 15]} {n}: " + " ".join(["step"] * (n % 7)) for n in range(600)]  # the run goes on after it
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {out[602], out[604], out[606], out[607]} <= shown


def test_every_file_a_plain_unified_diff_changes_is_named():
    out = []
    for n in range(40):
        out += [f"--- original/src/jobs/job{n:02d}.py", f"+++ fixed/src/jobs/job{n:02d}.py", "@@ -1,9 +1,9 @@"]
        out += [f"-def run_{n}( x ):", f"+def run_{n}(x):"] + [f"     line {k} of the job" for k in range(12)]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {f"--- original/src/jobs/job{n:02d}.py" for n in range(40)} <= shown


def test_the_few_lines_ending_in_another_status_are_kept_with_their_record():
    out = [f"feeds/f{n:04d}.xml - valid" for n in range(3000)]
    out[517] = "feeds/f0517.xml - invalid"
    out[2214] = "feeds/f2214.xml - invalid"
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert out[517] in shown and out[2214] in shown
    records = []
    for n in range(600):
        records += [f"# file: share/team{n // 40:02d}/doc{n % 40:02d}.txt", "# owner: root", "# group: root",
                    "user::rw-", "group::r--", "other::r--", ""]
    records[7 * 433 + 4:7 * 433 + 4] = ["user:nobody:rw-"]
    shown = lines_of(view(("\n".join(records) + "\n").encode(), exit_code=0))
    assert "user:nobody:rw-" in shown and records[7 * 433] in shown  # with the first line of its record


def test_a_status_word_and_a_raised_exception_name_mark_a_failure():
    # A doctest runner reports its one failure as `* FAILURE: …` and `* REASON: GotWantException`
    # among 150 records of `* SUCCESS: …`.
    out = []
    for n in range(150):
        out += ["====== <exec> ======", f"* DOCTEST : pricing.py::discount_{n}:0, line {9 * n + 4}",
                "DOCTEST SOURCE", f"1 >>> discount_{n}({n})", f"  {n * 9 // 10}", "DOCTEST RESULT"]
        out += ([f"* FAILURE: pricing.py::discount_{n}:0", "* REASON: GotWantException", "DOCTEST DEBUG INFO",
                 f'  File "pricing.py", line {9 * n + 5}', "DOCTEST PART BREAKDOWN", "Failed Part:",
                 f"    1 >>> discount_{n}({n})", "DOCTEST TRACEBACK", "Expected:", "    79", "Got:", "    78",
                 "Repr Difference:", "    got  = '78'", "    want = '79'"] if n == 87
                else [f"* SUCCESS: pricing.py::discount_{n}:0"])
        out.append("====== </exec> ======")
    out += ["Finished doctests", "149 / 150 passed"]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {"* FAILURE: pricing.py::discount_87:0", "* REASON: GotWantException"} <= shown
    sal = classifier()
    assert sal.classify(b"* FAILURE: pricing.py::discount_87:0") == sal.classify(b"raised: KeyError") == "failure"
    assert sal.classify(b"* SUCCESS: pricing.py::discount_86:0") == "plain"


def test_a_program_s_own_report_of_a_failed_call_comes_with_the_traced_command():
    # `bash -x build.sh`: 4,500 traced commands, one `cp` finding nothing to copy.
    out = []
    for n in range(1500):
        source = f"'src/pkg{n}/*.txt'" if n == 613 else f"src/pkg{n}/data.txt"
        out += [f"+ mkdir -p out/pkg{n}", f"+ cp {source} out/pkg{n}/"]
        if n == 613:
            out.append(f"cp: cannot stat {source}: No such file or directory")
        out.append(f"+ sha1sum out/pkg{n}/data.txt")
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert {"+ cp 'src/pkg613/*.txt' out/pkg613/", "cp: cannot stat 'src/pkg613/*.txt': No such file or directory"} <= shown
    sal = classifier()
    assert sal.classify(b"bash: jq: command not found") == "failure"
    # A system call's result in a trace names the error but is no program's report of its own.
    assert sal.classify(b'openat(AT_FDCWD, "x", O_RDONLY) = -1 ENOENT (No such file or directory)') == "plain"


def test_the_one_finding_that_says_something_no_other_does_is_kept():
    # A spell checker: 360 findings of three misspellings, all of one kind (`error`), and one other.
    # Files in the order a parallel walk finds them; the odd one out sits with its own file's findings.
    out = [f"src/h{n * 37 % 120:03d}.py:{line}: error: {word}" for n in range(120) for line, word in
           (("1:3", "`Recieve` should be `Receive`"), ("1:27", "`proccess` should be `process`"),
            ("3:7", "`seperate` should be `separate`"))]
    at = out.index("src/h042.py:3:7: error: `seperate` should be `separate`") + 1
    out.insert(at, "src/h042.py:8:5: error: `teh` should be `the`")
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=2))
    assert out[at] in shown


def test_an_indented_finding_s_block_ends_at_the_next_finding_beside_it():
    # `standard` lists every finding indented under no heading; the one bug takes none of its
    # neighbours from other files as its own lines.
    out = []
    for n in range(10):
        path = f"  /work/app/lib/w{n}.js"
        out += [f"{path}:1:1: Unexpected var, use let or const instead. (no-var) (warning)",
                f"{path}:1:4: Multiple spaces found before 'counter{n}'. (no-multi-spaces)",
                f"{path}:3:3: Unexpected var, use let or const instead. (no-var) (warning)",
                f"{path}:3:8: 'unused' is assigned a value but never used. (no-unused-vars)"]
        if n == 5:
            out.append(f"{path}:6:21: 'offset' is not defined. (no-undef)")
    out = out * 3 + ["standard: Use JavaScript Standard Style (https://standardjs.com)"]
    text = view(("\n".join(out) + "\n").encode())
    shown = lines_of(text)
    assert "  /work/app/lib/w5.js:6:21: 'offset' is not defined. (no-undef)" in shown
    assert "  /work/app/lib/w6.js:1:4: Multiple spaces found before 'counter6'. (no-multi-spaces)" not in shown
    assert len(text) < 3000


def test_a_standout_s_message_is_read_without_its_numbers_and_padding():
    # solhint pads each file's columns to its longest message and names each contract by number: the
    # two findings only one file has are standouts, though every message names its file's contract.
    out = []
    for n in range(30):
        width = 100 if n == 21 else 60
        rows = [("3:1", "warning", f"Missing @title tag in contract 'Vault{n}'", "use-natspec"),
                ("4:5", "warning", "Explicitly mark visibility of state", "state-visibility"),
                ("6:9", "warning", "Provide an error message for require", "reason-string")]
        if n == 21:
            rows.insert(1, ("3:1", "warning", "Import in contracts/Vault21.sol doesn't exist in: ./Missing.sol", "no-unresolved"))
            rows.append(("9:12", "warning", "Avoid to use tx.origin", "avoid-tx-origin"))
        out += [f"contracts/Vault{n}.sol"] + [f"  {at:<5} {sev:<8} {msg:<{width}} {rule}" for at, sev, msg, rule in rows] + [""]
    out.append("✖ 92 problems (0 errors, 92 warnings)")
    body = ("\n".join(out) + "\n").encode()
    lines = body.split(b"\n")
    standouts = rarity.rare_findings(body, lines, {}, classifier().finding)[1]
    assert sorted(lines[n].split()[2] for n in standouts) == [b"Avoid", b"Import"]

    # In a view, a standout is weighed before the first of every other kind: solhint's recorded run
    # over thirty contracts, 421 warnings of kinds many of which are seen once.
    recorded = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "generalization", "solhint-contracts.stdout")
    with open(recorded, "rb") as handle:
        shown = lines_of(view(handle.read()))
    assert any("Avoid to use tx.origin" in line for line in shown)


def test_a_failed_subtest_indented_under_its_parent_is_a_failure():
    # TAP 14 indents a subtest's lines under its parent: `    not ok 13 - …` among thousands of `ok`.
    sal = classifier()
    assert sal.classify(b"        not ok 5 - parcel 12 box 4") == "failure"
    assert sal.classify(b"    not ok 13 - route 17 parcel 12 # time=17.663ms") == "failure"
    assert sal.classify(b"    ok 12 - route 17 parcel 11 # time=1.2ms") != "failure"


def test_a_zero_coverage_figure_after_a_colon_is_a_finding():
    # gcov writes `Lines executed:0.00% of 8` where other tools put a space before the figure.
    sal = classifier()
    assert sal.classify(b"Lines executed:0.00% of 8") == "finding"
    assert sal.classify(b"Lines executed:50.00% of 8") == "plain"


def test_findings_under_a_file_heading_led_by_a_line_number_have_kinds():
    # pydoclint prints a file's name, then `    40: DOC105: …` lines: three kinds seen once among
    # 1,350 findings of five common kinds are findings, with the file they sit under.
    out = []
    for n in range(90):
        out.append(f"fees/f{n:02d}.py")
        for k in range(3):
            out += [f"    {k * 9 + 1}: DOC{code}: Function `fee_{n}_{k}`: text of {code}" for code in (101, 103, 109)]
        if n == 63:
            out += ["    40: DOC105: Function `refund_63`: Argument names match, but type hints do not match: amount",
                    "    40: DOC501: Function `refund_63` has raise statements, but no \"Raises\" section"]
        out.append("")
    lines = ("\n".join(out) + "\n").encode().split(b"\n")
    found = rarity.rare_findings(b"\n".join(lines), lines, {}, classifier().finding)[0]
    assert [lines[n].split()[1] for n in found] == [b"DOC105:", b"DOC501:"]
    shown = lines_of(view(b"\n".join(lines)))
    assert "fees/f63.py" in shown and out[out.index("fees/f63.py") + 10] in shown


def test_blank_lines_between_records_do_not_hide_a_rare_kind_of_record():
    # cfn-lint: 140 records of `W2001 …`, a location and a blank line each; two are errors.
    out = []
    for n in range(140):
        out += [f"W2001 Parameter Stage{n:02d}Name not used.", f"orders-stack.yaml:{3 * n + 4}:{3 + n % 5}", ""]
    out[3 * 100:3 * 100] = ["E3012 'thirty' is not of type 'integer'", "orders-stack.yaml:435:7", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=2))
    assert "E3012 'thirty' is not of type 'integer'" in shown


def test_a_row_whose_ruled_column_says_otherwise_stands_out():
    # An access log of 600 requests, one answered 500; a login report of 1,900 logins, three failed.
    log = [f'[2026-12-06 23:44:{56 + n // 470} +0000] [31881] [INFO] 127.0.0.1:{48400 + n} - - "GET /stock/{n} 1.1" '
           f'{500 if n == 388 else 200} - "-" "Python-urllib/3.11"' for n in range(600)]
    assert log[388] in lines_of(view(("\n".join(log) + "\n").encode(), exit_code=0))
    report = [f"{n}. 11/{n // 70 + 1:02d}/23 01:{n % 60:02d}:00 4001 198.51.100.{n % 250} ssh /usr/sbin/sshd "
              f"{'no' if n in (734, 735, 1523) else 'yes'} {50000 + n}" for n in range(1, 1900)]
    shown = lines_of(view(("\n".join(report) + "\n").encode(), exit_code=0))
    assert {report[733], report[734], report[1522]} <= shown


def test_rare_lines_inside_a_repetition_that_a_preamble_line_of_its_kind_precedes_are_kept():
    # fsck.fat: a preamble of sizes (one `Checking we can access …` line among them), 600 `Checking
    # file` lines, and two files that share clusters reported among them.
    out = ["fsck.fat 4.2 (2021-01-31)", "Checking we can access the last sector of the filesystem",
           "Boot sector contents:", 'System ID "mkfs.fat"', "Media byte 0xf8 (hard disk)"]
    out += [f"{'reserved first root data hidden total track heads'.split()[n % 8]} {n} sectors {'abcdefghijklmnop'[n]}"
            for n in range(14)]
    out += [f"Checking file /DCIM/10{n % 7}CAM/IMG_{n:04d}.JPG" for n in range(600)]
    out[300:300] = ["/DCIM/103CAM/IMG_0041.JPG  and", "/DCIM/103CAM/IMG_0042.JPG", "  share clusters.",
                    "  Truncating second to 0 bytes.", "/DCIM/103CAM/IMG_0042.JPG",
                    "  File size is 572 bytes, cluster chain length is 0 bytes.", "  Truncating file to 0 bytes."]
    out += ["Checking for unused clusters.", "Leaving filesystem unchanged.", "disk.img: 608 files, 612/8167 clusters"]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {"/DCIM/103CAM/IMG_0041.JPG  and", "  share clusters."} <= shown


def test_a_finding_without_a_heading_brings_the_first_line_of_its_record():
    # gcov: 320 records of a file, its coverage and the report written; two files nothing ran.
    out = []
    for n in range(320):
        covered = "0.00" if n in (88, 251) else "50.00"
        out += [f"File 'src/mod{n:03d}.c'", f"Lines executed:{covered}% of 6", f"Creating 'mod{n:03d}.c.gcov'", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {"File 'src/mod088.c'", "File 'src/mod251.c'"} <= shown


def test_a_scope_line_in_parentheses_is_a_heading():
    assert ranking.is_banner(b"src/item17.c: (in function item17_report)")
    assert not ranking.is_banner(b"src/item17.c:20:1: Variable total used before definition")


def test_where_one_kind_is_nearly_every_line_a_kind_seen_three_times_is_rare():
    # astyle --dry-run: 397 `Unchanged` files and three `Formatted`, between its banner and its count.
    out = ["Directory  /work/src/*.c", "-" * 60]
    out += [f"Unchanged  mod{n // 40:02d}/handler_{n:03d}.c" for n in range(400)]
    for at in (57, 212, 340):
        out[2 + at] = out[2 + at].replace("Unchanged", "Formatted ")
    out += ["-" * 60, " 3 formatted   397 unchanged   0.21 seconds   2,811 lines"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert {out[2 + at] for at in (57, 212, 340)} <= shown


def _rare_values_one_match_at_a_time(body: bytes, lines: list[bytes]) -> list[int]:
    """`rarity.rare_values` as it read fields before lines alike were matched once: every match of the whole
    text in turn, each value's offsets listed (the reference the test below crosses it with)."""
    field = re.compile(rarity.FIELD)
    sample = lines[::max(1, len(lines) // 256)]
    if len(body) > rarity.LONG_BYTES or len(lines) < rarity.MIN_FINDINGS or sum(
            field.match(line) is not None for line in sample) * 100 < len(sample) * rarity.FIELDS_SHARE:
        return rarity._rare_endings(body, lines, {})
    text = body.translate(None, b"0123456789")
    fields: dict = {}
    for match in field.finditer(text):
        fields.setdefault(match[1], {}).setdefault(match[2], []).append(match.start())
    out = []
    for values in fields.values():
        total = sum(len(offsets) for offsets in values.values())
        if total < rarity.MIN_FIELDS or len(values) < 2 or any(b"/" in value for value in values):
            continue
        top = max(values.values(), key=len)
        if len(top) * 100 >= total * rarity.FIELD_SHARE:
            out.extend(offset for offsets in values.values() if offsets is not top for offset in offsets)
            continue
        seldom = [offset for offsets in values.values() if len(offsets) <= 2 for offset in offsets]
        if len(seldom) * 100 <= total * rarity.SELDOM_SHARE:
            out.extend(seldom)
    numbers = [] if len(out) > rarity.MAX_RARE_LINES else [text.count(b"\n", 0, offset) for offset in out]
    for number in list(numbers):
        numbers.extend(rarity._record_after(lambda at: not lines[at].strip(), number, len(lines)))
    return sorted(set(numbers) | set(rarity._rare_endings(body, lines, {})))


_FIELD_LINES = st.sampled_from(["Status: Running", "Status: Failed", "Status: Pending job 7", "Rule : invalid-ref",
                                "Rule : no-unused", "Path : /a/b", "Contains null values:  False", "", "plain words",
                                "Contains null values:  True", "  Retries: 3 of 5", "  Retries: none", "ID: 9f3a2"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_FIELD_LINES, st.integers(0, 99)), min_size=8, max_size=400), st.booleans())
def test_fields_said_by_lines_alike_are_counted_as_each_line_said_them(rows, returns):
    # Lines the same once their digits are left out are matched once and counted as often as they come; a
    # value ends at a carriage return, where a text holds one (else it is read by the form without it).
    said = [line.replace("3", str(number)) if number % 2 else line for line, number in rows]
    if returns:
        said = [line + "\r" if number % 3 == 0 else line for line, (_, number) in zip(said, rows)]  # some CRLF
    body = "\n".join(said).encode()
    lines = body.split(b"\n")
    assert rarity.rare_values(body, lines, {}) == _rare_values_one_match_at_a_time(body, lines)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"yes", b"no", b"(2,", b"-"]), min_size=1, max_size=60),
       st.integers(0, 400), st.randoms(use_true_random=False))
def test_a_columns_rule_is_the_value_that_holds_its_share_of_rows(others, alike, random):
    # `_ruled` against every value counted: a column mostly one value, the others anywhere among it.
    column = others + [b"yes"] * alike
    random.shuffle(column)
    counts: dict[bytes, int] = {}
    for value in column:
        counts[value] = counts.get(value, 0) + 1
    top = max(counts, key=counts.__getitem__)
    expected = top if counts[top] * 100 >= len(column) * rarity.COLUMN_SHARE else None
    assert rarity._ruled(tuple(column)) == expected


def _repetition_by_every_line(keys: list[bytes], top: bytes) -> tuple[int, int]:
    """`rarity._repetition` as it read before it searched: every line of `top`, then `_run_bounds`."""
    return rarity._run_bounds([n for n, key in enumerate(keys) if key == top], lambda a, b: b - a <= rarity.RARE_REACH)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b"w w", b"w w", b"w: w", b"", b"- w", b"F"]), min_size=1, max_size=120),
       st.sampled_from([b"w w", b"w: w", b""]))
def test_where_a_repetition_starts_and_ends_is_found_as_every_line_of_it_says(keys, top):
    # Equal keys that are distinct objects, as shapes made apart are: one key all the same.
    keys = [bytes(bytearray(key)) if n % 3 else key for n, key in enumerate(keys)] + [top]
    assert rarity._repetition(keys, top) == _repetition_by_every_line(keys, top)
