"""The view reads records, task prefixes and reports the way their lines are laid out, for any tool.

Each test builds an output in the shape a real tool prints (the recorded runs are in
`bench/generalization/`) and checks one rule: a record of a rare kind among a few kinds of
records comes whole, a shape stands out beside rare first words, a failure that ends with a
colon brings the reason below it, a runner's task prefix does not hide a block's caret and
source, a leak report is a failure, and one omitted line shorter than its marker is shown.
"""

from __future__ import annotations

from view_of import lines_of, view
from yarp.view.salience import classifier


def test_a_record_of_a_rare_kind_among_a_few_kinds_of_records_comes_whole():
    # ansible-lint: records of a rule and its place, of four kinds that each recur, none of them
    # most of the lines; three records of two rare kinds, with no severity mark, are the failures.
    out = []
    for n in range(300):
        place = f"playbooks/deploy-{n // 10:02d}.yml:{4 * (n % 10) + 6}"
        out += ["fqcn[action-core]: Use FQCN for builtin module actions (copy). (warning)", f"{place}:7 Use FQCN.", "",
                "name[missing]: All tasks should be named. (warning)", f"{place} Task/Handler: copy src=f{n}", ""]
        if n % 10 == 0:
            out += ["yaml[truthy]: Truthy value should be one of [false, true] (warning)", f"{place[:-2]}4", ""]
        if n in (170, 260):
            out += ["no-changed-when: Commands should not change things if nothing needs doing.",
                    f"{place} Task/Handler: copy src=g{n}", ""]
    out += ["risky-shell-pipe: Shells that use pipes should set the pipefail option.",
            "playbooks/deploy-29.yml:41 Task/Handler: copy src=h", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=2))
    assert {"playbooks/deploy-17.yml:6 Task/Handler: copy src=g170",
            "playbooks/deploy-26.yml:6 Task/Handler: copy src=g260",
            "playbooks/deploy-29.yml:41 Task/Handler: copy src=h"} <= shown


def test_a_line_of_a_rare_shape_stands_out_beside_lines_of_rare_first_words():
    # pwck: 240 users whose home is missing, one whose group is missing; and, by their first words
    # already, its duplicate and invalid entries, each with the deletion it offers.
    out = [f"user 'svc{n:03d}': directory '/srv/svc{n:03d}' does not exist" for n in range(240)]
    out[170:170] = ["user 'svc211': no group 4242"]
    for at, entry in ((9, "duplicate password entry"), (120, "invalid password file entry"),
                      (215, "no matching password file entry in /etc/shadow"), (238, "duplicate password entry")):
        out[at:at] = [entry, f"delete line 'svc{at:03d}:x:{at}:{at}:Service:/srv/s:/usr/sbin/nologin'? No"]
    out.append("pwck: no changes")
    assert "user 'svc211': no group 4242" in lines_of(view(("\n".join(out) + "\n").encode(), exit_code=2))


def test_a_failure_that_ends_with_a_colon_brings_the_reason_below_its_blank_line():
    # xmlschema: each invalid document's failure, a blank line, its reason, then a long schema excerpt.
    out = [f"invoices/inv-{n:04d}.xml is valid" for n in range(200)] + ["invoices/inv-0071.xml is not valid"]
    for k in range(5):
        out += [f"failed decoding '12,5{k}' with XsdAtomicBuiltin(name='xs:decimal'):", "",
                f"Reason: invalid value '12,5{k}' for xs:decimal", "", "Schema component:", ""]
        out += [f"  <hfp:hasFacet name=\"facet{m}\" />" for m in range(30)]
        out += ["", f"Path: /invoice/line[{k}]/amount", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=7))
    assert {f"Reason: invalid value '12,5{k}' for xs:decimal" for k in range(5)} <= shown


def test_a_runner_s_task_prefix_does_not_hide_the_lines_that_lead_into_a_failure():
    # nx: each project's lines after its name; one project's script throws from node's loader.
    out = []
    for p in range(12):
        out += [f"@shop/p{p}: > node build.js"] + [f"@shop/p{p}: bundled src/mod{m:02d}.js -> dist/mod{m:02d}.js"
                                                  for m in range(40)]
    out += ["@shop/shipping: node:internal/modules/cjs/loader:1210", "@shop/shipping:   throw err;",
            "@shop/shipping:   ^", "@shop/shipping: Error: Cannot find module './zones.json'",
            "@shop/shipping: Require stack:", "@shop/shipping: - /w/packages/shipping/src/mod09.js"]
    out += [f"@shop/shipping:     at Module._load (node:internal/modules/cjs/loader:{1038 + k}:27)" for k in range(9)]
    out += ["@shop/shipping: Node.js v20.20.2", "@shop/shipping: npm error Lifecycle script `build` failed with error:"]
    out += [f"@shop/q{p}: bundled src/mod{m:02d}.js" for p in range(6) for m in range(40)]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=1))
    assert {"@shop/shipping: node:internal/modules/cjs/loader:1210", "@shop/shipping:   throw err;"} <= shown


def test_a_memory_leak_report_is_a_failure_and_a_zero_is_not():
    sal = classifier()
    for line in (b"2.40K leaked over 5000 calls from:", b"total memory leaked: 6.50K", b"MEMORY LEAKS",
                 b"==7== ERROR: LeakSanitizer: detected memory leaks",
                 b"==7==    definitely lost: 40 bytes in 1 blocks"):
        assert sal.classify(line) == "failure", line
    for line in (b"==7==    definitely lost: 0 bytes in 0 blocks",
                 b"All heap blocks were freed -- no leaks are possible",
                 b"total memory leaked: 0B"):
        assert sal.classify(line) == "plain", line


def test_one_omitted_line_shorter_than_its_marker_is_shown():
    # A failure, a blank line and its reason, in a long output: a marker in place of the blank line
    # would say less in more bytes.
    out = [f"step {n} ok" for n in range(400)] + ["FAILED: could not write the report", "", "disk quota exceeded"]
    out += [f"cleanup {n} ok" for n in range(400)]
    text = view(("\n".join(out) + "\n").encode())
    assert "FAILED: could not write the report\n\ndisk quota exceeded\n" in text
    assert "omitted 1 line(s)" not in text


def test_where_nearly_every_line_s_kind_recurs_the_few_that_do_not_come_before_file_headers():
    # diff -ru of 400 reports whose timestamp changed: one total changed too, one report is gone.
    out = []
    for n in range(400):
        out += [f"diff -ru golden/r/report_{n:03d}.txt out/r/report_{n:03d}.txt",
                f"--- golden/r/report_{n:03d}.txt\t2026-12-07 02:04:01.{n:06d} +0000",
                f"+++ out/r/report_{n:03d}.txt\t2026-12-07 02:04:01.{n:06d} +0000", "@@ -1,3 +1,3 @@",
                f" Report {n}", "-Generated: 2026-01-05 09:00:00", "+Generated: 2026-03-02 14:32:07", " Region: north"]
        if n == 212:
            out += ["@@ -33,2 +33,2 @@", "   item 29  qty 31  price 90.50", "-Total: 8844.50", "+Total: 8880.50"]
    out.insert(8 * 377 + 4, "Only in golden/r: report_377.txt")
    shown = lines_of(view(("\n".join(out) + "\n").encode()))
    assert {"-Total: 8844.50", "+Total: 8880.50", "Only in golden/r: report_377.txt"} <= shown


def test_a_rare_second_word_stands_out_where_every_line_has_the_same_first_word_and_brings_its_headings():
    # prospector: per file, per line, `pylint: CHECK / message`; two undefined names among 330 findings.
    out = ["Messages", "========", ""]
    for f in range(30):
        out.append(f"inventory/stock{f:02d}.py")
        checks = ("unused-import", "unused-argument", "bare-except", "unused-argument", "bare-except",
                  "unused-argument", "bare-except", "unused-argument", "bare-except", "trailing-newlines")
        for k, check in enumerate(checks):
            out += [f"  Line: {4 * k + 1}", f"    pylint: {check} / Unused name 'note{k}' (col {k})"]
        if f in (8, 19):
            out += ["  Line: 38", f"    pylint: undefined-variable / Undefined variable 'NAME{f}' (col 11)"]
        out.append("")
    out += ["Check Information", "=================", "  Messages Found: 302"]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=1))
    assert {"    pylint: undefined-variable / Undefined variable 'NAME8' (col 11)", "inventory/stock08.py",
            "    pylint: undefined-variable / Undefined variable 'NAME19' (col 11)", "inventory/stock19.py"} <= shown


def test_the_one_line_ending_in_another_status_inside_a_run_of_one_status_is_kept():
    # A verifier: 300 files found, one missing, then counts and verdicts whose last words are rare too.
    out = ["Loading: 99.8%\rNo new packets found", "", "There are 300 recoverable files and 0 other files.",
           "The block size used was 16384 bytes.", "There are a total of 300 data blocks.", "",
           "Verifying source files:", ""]
    for n in range(300):
        out += [f'Opening: "data/chunk_{n:03d}.csv"',
                f'Target: "data/chunk_{n:03d}.csv" - {"missing" if n == 244 else "found"}']
        if n % 7 == 0:
            out.append(f'Scanning: "data/chunk_{n:03d}.csv"')
    out += ["", "1 file(s) are missing", "1 file(s) exist but are damaged", "Repair is required", "Repair is possible"]
    assert 'Target: "data/chunk_244.csv" - missing' in lines_of(view(("\n".join(out) + "\n").encode(), exit_code=1))


def test_seldom_lines_among_a_few_kinds_of_lines_stand_out_though_they_are_more_than_one_in_a_hundred():
    # A service's log of three kinds of lines, none most of them, and ten lines of kinds seen once each.
    out = []
    for n in range(300):
        out += [f"GET /items/{n} 12ms", f"POST /orders/{n} 31ms", f"cache hit items:{n} 0ms"]
    for k, word in enumerate(("rebalancing", "quorum", "snapshot", "compacting", "electing", "fencing", "draining",
                              "resharding", "vacuuming", "rotating")):
        out.insert(80 * k + 40, f"{word} shard {k} of 8" if word != "quorum" else "quorum lost on node c")
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=0))
    assert {"quorum lost on node c", "snapshot shard 2 of 8", "rotating shard 9 of 8"} <= shown


def test_an_odd_line_of_a_capture_larger_than_the_rare_line_search_stands_out_by_its_shape():
    # tcpdump of 3,600 packets (over 256 KiB): one reset among ordinary flags, one ICMP unreachable.
    out = []
    for n in range(3600):
        flags = "R." if n == 2329 else "SFP."[n % 4] + "."
        out.append(f"12:00:{n // 1000:02d}.{n % 1000:06d} IP 10.0.{n % 7}.{n % 200}.{40000 + n} > 10.0.1.5.443: "
                   f"Flags [{flags}], seq {n}:{n + 120}, ack {n + 1}, win 64240, length 120")
    out[2715] = "12:00:02.715000 IP 10.0.0.53 > 10.0.1.5: ICMP 10.0.0.53 udp port 53 unreachable, length 36"
    data = ("\n".join(out) + "\n").encode()
    assert len(data) > 256 << 10
    assert out[2715] in lines_of(view(data, exit_code=0))


def test_a_field_value_said_once_where_the_field_s_other_values_recur_comes_with_its_record():
    # A validator's findings: Message, Rule, Path and Line per record, twenty rules that each recur,
    # and one broken reference.
    rules = [f"style-rule-{chr(97 + k)}" for k in range(20)]
    out = ["Validation Results for openapi.json:", "", "Errors:", ""]
    for n in range(400):
        rule = "invalid-ref" if n == 211 else rules[n % 20]
        out += [f"  Message :   Finding number {n % 20} of this kind", f"  Rule    :   {rule}",
                f"  Path    :   paths.fleet{n}.get.responses", f"  Line    :   {10 + n}", ""]
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=1))
    assert {"  Rule    :   invalid-ref", "  Path    :   paths.fleet211.get.responses"} <= shown


def test_a_step_printed_again_over_itself_keeps_its_indentation_for_headings():
    # radish: each step printed, then printed again after a carriage return; a failed step's scenario
    # and feature head it.
    out = []
    for f in range(12):
        out += [f"Feature: Shipping rates for zone {f}  # features/zone{f:02d}.feature", ""]
        for s in range(20):
            out += [f"    Scenario: zone {f} parcel {s}", f"        Given a parcel of {s} kg to zone {f}",
                    f"\r        Given a parcel of {s} kg to zone {f}", "        Then the price is 20.0 EUR",
                    "\r        Then the price is 20.0 EUR"]
            if (f, s) == (7, 16):
                out.append("          AssertionError: quoted 24.8, expected 25.4")
            out.append("")
    shown = lines_of(view(("\n".join(out) + "\n").encode(), exit_code=1))
    assert {"    Scenario: zone 7 parcel 16", "Feature: Shipping rates for zone 7  # features/zone07.feature"} <= shown


def test_a_boxed_traceback_and_totals_in_words_are_read_as_what_they_say():
    sal = classifier()
    title = "╭───────── Traceback (most recent call last) ─────────╮".encode()
    assert sal.classify(title) == "traceback"
    for line in (b"  Total number of errors   : 322", b"154,284,073 (100.0%)  PROGRAM TOTALS",
                 b"Found and reported 8 problems."):
        assert sal.classify(line) == "summary", line
    assert sal.classify(b"Total: 8844.50") == "plain"


def test_source_quoted_behind_a_line_number_and_a_box_rule_is_not_a_failure():
    # semgrep quotes the matched code as `  9┆ print('charge failed for', account)`.
    sal = classifier()
    for line in ("            9┆ print('charge failed for', account)", "  12 │ raise ValueError('bad')"):
        assert sal.classify(line.encode()) != "failure", line
    assert sal.classify(b"charge failed for account 12") == "failure"
