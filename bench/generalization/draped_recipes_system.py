"""Draped recipes for VCS, services, storage, network configuration, data, listings and logs: SpamAssassin's
lint, qemu-img check, RHash, licensecheck, SCCS (CSSC), ferm, qpdf, Borg, tai64nlocal, syslog-ng, Tor, amtool,
findmnt, wiggle.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from draped_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "spamassassin": "4.0.1-1~deb12u1", "qemu-utils": "1:7.2+dfsg-7+deb12u18+b3", "rhash": "1.4.3-3",
    "licensecheck": "3.3.5-1", "cssc": "1.4.1-1", "ferm": "2.5.1-1.1", "qpdf": "11.3.0-1+deb12u1",
    "borgbackup": "1.2.4-1", "syslog-ng-core": "3.38.1-5+deb12u1", "tor": "0.4.9.11-0+deb12u1",
    "prometheus-alertmanager": "0.25.0-1+b4", "util-linux": "2.38.1-5+deb12u3", "daemontools": "1:0.76-8.1",
    "wiggle": "1.1-1",
}


# --- spamassassin --lint -D: a mail relay's site rules after an edit; a typo, a bad pattern, a stray score ------

def _site_rules() -> str:
    """The relay's 140 local body rules for invoice fraud; rule 97's pattern lost its closing parenthesis."""
    rules = []
    for n in range(140):
        pattern = f"/(?:overdue|unpaid) invoice {n}(?: attached/i" if n == 97 else f"/(?:overdue|unpaid) invoice {n}(?: attached)?/i"
        rules.append(f"body     LOCAL_INVOICE_{n:03d}  {pattern}\ndescribe LOCAL_INVOICE_{n:03d}  Invoice lure {n}\n"
                     f"score    LOCAL_INVOICE_{n:03d}  {0.5 + (n % 8) / 4:.2f}\n\n")
    return "".join(rules)


@recipe("spamassassin-lint-debug-site-rules", "spamassassin", "config-check", ["spamassassin", "--version"],
        needs=("spamassassin",))
def _spamassassin(root):
    """Write the `spamassassin-lint-debug-site-rules` project under `root`; return its command and signals."""
    sh("cp /etc/spamassassin/*.pre site/ 2>/dev/null || { mkdir -p site && cp /etc/spamassassin/*.pre site/; }", root)
    write(root, "site/local.cf", "required_score 5.0\nreport_safe 1\nuse_bayes 1\nbayes_auto_learn 1\n"
          "rewrite_header Subjct ***SPAM***\nscore LOCAL_INVOICE_LURE 2.5\ninclude local_rules.cf\n")
    write(root, "site/local_rules.cf", _site_rules())
    return Run(["spamassassin", "--lint", "-D", "--siteconfigpath=site"], [
        S("stderr", r"\] warn: config: ", "the two configuration errors among the debug log: a typo, a broken pattern"),
    ], expect_exit=exits(1))


# --- qemu-img check: a VM disk after a host crash: one L2 table lost, one cluster's refcount zeroed ---------------

def _damage_qcow2(path: str) -> None:
    """Zero the image's second L2 table (its data clusters leak) and the refcount of a cluster the third maps."""
    import struct

    with open(path, "r+b") as image:
        header = image.read(72)
        cluster_bits = struct.unpack(">I", header[20:24])[0]
        l1_offset, refcount_offset = struct.unpack(">QQ", header[40:56])
        size = 1 << cluster_bits
        image.seek(l1_offset)
        l1 = struct.unpack(">4Q", image.read(32))
        l2_lost, l2_kept = (entry & 0x00FFFFFFFFFFFE00 for entry in (l1[1], l1[2]))
        image.seek(l2_lost)
        image.write(bytes(size))
        image.seek(l2_kept + 8 * 100)
        cluster = (struct.unpack(">Q", image.read(8))[0] & 0x00FFFFFFFFFFFE00) >> cluster_bits
        per_block = size // 2
        image.seek(refcount_offset + 8 * (cluster // per_block))
        block = struct.unpack(">Q", image.read(8))[0]
        image.seek(block + 2 * (cluster % per_block))
        image.write(b"\0\0")


@recipe("qemu-img-check-leaks-one-refcount-error", "qemu-img", "storage", ["qemu-img", "--version"], needs=("qemu-img", "qemu-io"))
def _qemu_img(root):
    """Write the `qemu-img-check-leaks-one-refcount-error` project under `root`; return its command and signals."""
    sh(["qemu-img", "create", "-q", "-f", "qcow2", "-o", "cluster_size=4096", "vm-disk.qcow2", "64M"], root)
    sh(["qemu-io", "-c", "write -P 0x5a 0 12M", "vm-disk.qcow2"], root)
    _damage_qcow2(f"{root}/vm-disk.qcow2")
    return Run(["qemu-img", "check", "vm-disk.qcow2"], [
        S("stderr", r"^ERROR ", "the corruption: a mapped cluster whose refcount is 0, among 512 leaks"),
        S("stdout", r"^2 errors were found on the image\.$", "the count of errors"),
        S("stdout", r"^512 leaked clusters were found on the image\.$", "the count of leaks"),
    ], expect_exit=exits(2))


# --- rhash -c: verifying a mirrored dataset of 6,000 files against its MD5 list; two differ, one is missing -------

@recipe("rhash-check-mirror-two-mismatches", "rhash", "data", ["rhash", "--version"], needs=("rhash",))
def _rhash(root):
    """Write the `rhash-check-mirror-two-mismatches` project under `root`; return its command and signals."""
    for n in range(6000):
        write(root, f"mirror/station_{n // 200:02d}/day_{n % 200:03d}.csv",
              f"station,day,temp\n{n // 200},{n % 200},{(n * 7) % 40 - 10}\n")
    sh(["rhash", "-r", "--md5", "--simple", "-o", "mirror.md5", "mirror"], root)
    write(root, "mirror/station_07/day_143.csv", "station,day,temp\n7,143,\n")
    write(root, "mirror/station_22/day_018.csv", "station,day,temp\n22,18,19\n22,18,19\n")
    sh(["rm", "mirror/station_25/day_199.csv"], root)
    return Run(["rhash", "-c", "mirror.md5"], [
        S("stdout", r"\s(ERR|No such file or directory)$", "the two files that differ and the one missing, among 6,000"),
        S("stdout", r"^Errors Occurred: Errors:2\s+Miss:1\s+Success:5997\s+Total:6000$", "the totals"),
    ], expect_exit=exits(1))


# --- licensecheck -r: the license audit of a vendored tree before release; two files are GPL, one has no notice ---

_MIT = ("Copyright (c) 2021 The Maintainers\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n"
        "of this software and associated documentation files (the \"Software\"), to deal\nin the Software without restriction, "
        "including without limitation the rights\nto use, copy, modify, merge, publish, distribute, sublicense, and/or sell\n"
        "copies of the Software, and to permit persons to whom the Software is\nfurnished to do so, subject to the following "
        "conditions:\n\nThe above copyright notice and this permission notice shall be included in\nall copies or substantial "
        "portions of the Software.\n")
_APACHE = ("Copyright 2020 The Authors\n\nLicensed under the Apache License, Version 2.0 (the \"License\");\nyou may not use this "
           "file except in compliance with the License.\nYou may obtain a copy of the License at\n\n"
           "    http://www.apache.org/licenses/LICENSE-2.0\n")
_GPL = ("Copyright (C) 2019 Free Parser Project\n\nThis program is free software: you can redistribute it and/or modify\n"
        "it under the terms of the GNU General Public License as published by\nthe Free Software Foundation, either version 3 "
        "of the License, or\n(at your option) any later version.\n")


@recipe("licensecheck-vendor-tree-two-gpl", "licensecheck", "listing", ["licensecheck", "--version"], needs=("licensecheck",))
def _licensecheck(root):
    """Write the `licensecheck-vendor-tree-two-gpl` project under `root`; return its command and signals."""
    for n in range(2400):
        package = f"vendor/pkg_{n // 60:02d}"
        notice = _APACHE if (n // 60) % 3 == 0 else _MIT
        if n in (1333, 1337):
            notice = _GPL
        comment = "".join(f"// {line}\n" if line else "//\n" for line in notice.splitlines())
        if n == 2011:
            comment = "// helper generated from the schema\n"
        write(root, f"{package}/module_{n % 60:02d}.c", f"{comment}\nint module_{n}_init(void)\n{{\n    return {n % 7};\n}}\n")
    return Run(["licensecheck", "-r", "vendor"], [
        S("stdout", r": GNU General Public License", "the two GPL files in a tree released under MIT and Apache terms"),
        S("stdout", r": \*No copyright\* UNKNOWN$", "the file with no notice at all"),
    ], expect_exit=exits(0))


# --- sccs get SCCS: checking out a legacy billing system's 240 SCCS files; one s-file's checksum is off, ----------
# --- and one file is still checked out for editing with local changes

@recipe("sccs-get-all-bad-checksum-writable", "sccs", "vcs", ["sccs", "--version"], needs=("sccs",))
def _sccs(root):
    """Write the `sccs-get-all-bad-checksum-writable` project under `root`; return its command and signals."""
    import os

    os.makedirs(f"{root}/SCCS")
    names = [f"bill{n:03d}.c" for n in range(240)]
    for n, name in enumerate(names):
        write(root, name, f"/* billing step {n} */\nint bill_{n}(int cents)\n{{\n    return cents * {n % 9 + 1};\n}}\n")
    sh(["sccs", "create", *names], root)
    sh(["rm", "-f", *names, *(f",{name}" for name in names)], root)
    sh(["sccs", "edit", *names[::8]], root)
    for name in names[::8]:
        with open(f"{root}/{name}", "a", encoding="utf-8") as handle:
            handle.write(f"/* rounding fixed for {name} */\n")
    sh(["sccs", "delta", "-yround half up", *names[::8]], root)
    sh(["sccs", "edit", "bill150.c"], root)
    with open(f"{root}/bill150.c", "a", encoding="utf-8") as handle:
        handle.write("int bill_150_tax(int cents)\n{\n    return cents / 5;\n}\n")
    sh("sed -i 's/return cents \\* 6;/return cents * 7;/' SCCS/s.bill077.c", root)
    return Run(["sccs", "get", "SCCS"], [
        S("stderr", r"^get: bill150\.c: File exists and is writable\.$", "the file not checked out: it is being edited"),
        S("stderr", r"bad checksum \(expected=\d+, calculated \d+\)", "the damaged s-file, among 240 keyword warnings"),
    ], expect_exit=exits(1))


# --- ferm --noexec --lines: a database host's firewall with 120 client networks; one rule misspells saddr -------------

def _ferm_conf() -> str:
    """The host's firewall: the usual input policy, then a rule per client network; network 87's has a typo."""
    rules = []
    for n in range(120):
        key = "sadr" if n == 87 else "saddr"
        rules.append(f"        # client network {n}: reporting replica {n % 6}\n"
                     f"        proto tcp dport 5432 {key} 10.{n // 50}.{n % 50}.0/24 ACCEPT;\n")
    return ("@def $ADMIN = (192.0.2.10 192.0.2.11);\n\ntable filter {\n    chain INPUT {\n        policy DROP;\n"
            "        mod state state INVALID DROP;\n        mod state state (ESTABLISHED RELATED) ACCEPT;\n"
            "        interface lo ACCEPT;\n        proto tcp dport 22 saddr $ADMIN ACCEPT;\n" + "".join(rules) +
            "        proto icmp ACCEPT;\n    }\n    chain OUTPUT policy ACCEPT;\n    chain FORWARD policy DROP;\n}\n")


@recipe("ferm-noexec-unrecognized-keyword", "ferm", "network-config", ["ferm", "--version"], needs=("ferm",))
def _ferm(root):
    """Write the `ferm-noexec-unrecognized-keyword` project under `root`; return its command and signals."""
    write(root, "ferm.conf", _ferm_conf())
    return Run(["ferm", "--noexec", "--lines", "ferm.conf"], [
        S("stderr", r"^Error in ferm\.conf line \d+:$", "where the error is"),
        S("stderr", r"^Unrecognized keyword: sadr$", "the error"),
    ], expect_exit=exits(255))


# --- qpdf --check: a 300-page statement export whose generator wrote one stream's length wrong ----------------------

def _statement_pdf(pages: int) -> bytes:
    """A plain PDF of `pages` pages, one line of text each; page 212's stream states a wrong /Length."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None,
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for n in range(pages):
        text = f"BT /F1 11 Tf 72 720 Td (Statement page {n + 1} of {pages}) Tj ET".encode()
        length = len(text) + (40 if n == 211 else 0)
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (length, text))
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
                       b" /Contents %d 0 R >>" % (len(objects)))
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Count %d /Kids [%s] >>" % (pages, b" ".join(b"%d 0 R" % k for k in kids))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@recipe("qpdf-check-statements-stream-length", "qpdf", "data", ["qpdf", "--version"], needs=("qpdf",))
def _qpdf(root):
    """Write the `qpdf-check-statements-stream-length` project under `root`; return its command and signals."""
    with open(f"{root}/statements.pdf", "wb") as handle:
        handle.write(_statement_pdf(300))
    return Run(["qpdf", "--check", "statements.pdf"], [
        S("stderr", r"^WARNING: statements\.pdf \(object \d+ 0, offset \d+\): ", "the damaged stream and its recovery"),
        S("stderr", r"^qpdf: operation succeeded with warnings$", "the verdict"),
    ], expect_exit=exits(3))


# --- borg check -v --verify-data: a site's backup repository after a disk error flipped a byte of its segment -------

@recipe("borg-check-segment-checksum-mismatch", "borg", "storage", ["borg", "--version"], needs=("borg",))
def _borg(root):
    """Write the `borg-check-segment-checksum-mismatch` project under `root`; return its command and signals."""
    import os

    for n in range(2000):
        write(root, f"site/pages_{n // 100:02d}/page_{n:04d}.html",
              f"<html><body><h1>Page {n}</h1>" + f"<p>section {n} of the handbook</p>" * (n % 40 + 10) + "</body></html>\n")
    env = {"BORG_PASSPHRASE": "", "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes", "HOME": f"{root}/.home"}
    sh(["borg", "init", "-e", "none", "backup"], root, env=env)
    for day in ("mon", "tue", "wed"):
        sh(["borg", "create", "-C", "none", f"backup::site-{day}", "site"], root, env=env)
    segments = f"{root}/backup/data/0"
    largest = max(os.listdir(segments), key=lambda name: os.path.getsize(f"{segments}/{name}"))
    with open(f"{segments}/{largest}", "r+b") as segment:
        segment.seek(os.path.getsize(f"{segments}/{largest}") * 2 // 5)
        byte = segment.read(1)[0]
        segment.seek(-1, 1)
        segment.write(bytes([byte ^ 0xFF]))
    return Run(["borg", "check", "-v", "--verify-data", "backup"], [
        S("stderr", r"^Data integrity error: Segment entry checksum mismatch", "the corruption"),
        S("stderr", r"^Index object count mismatch\.$", "what it did to the index"),
        S("stderr", r"^(committed|rebuilt) index:\s+\d+ objects$", "how many objects the index lost"),
        S("stderr", r"^Finished full repository check, errors found\.$", "the verdict"),
    ], env=env, expect_exit=exits(1))


# --- tai64nlocal: reading a supervised payment worker's log; 5,000 jobs, three of them fail ----------------------

def _worker_log() -> str:
    """The worker's `current` log as multilog writes it: a TAI64N label, then the line; jobs 1718, 3090 and 4741
    fail (a declined card, a gateway timeout, a duplicate charge refused)."""
    failures = {1718: "ERROR job 1718 charge failed: card declined by issuer (code 05) order=ORD-101718",
                3090: "ERROR job 3090 charge failed: gateway timeout after 30s order=ORD-103090, will retry",
                4741: "ERROR job 4741 refused: duplicate charge for order=ORD-104741 (idempotency key reused)"}
    lines, start = [], 1_765_000_000
    for n in range(5000):
        when = start + n * 3
        label = f"@{(1 << 62) + when + 10:016x}{(n * 7919) % 1_000_000_000:08x}"
        lines.append(f"{label} INFO job {n} picked up queue=payments attempt=1\n")
        message = failures.get(n, f"INFO job {n} charged {((n * 37) % 5000) / 100:.2f} EUR order=ORD-{100000 + n}")
        lines.append(f"{label} {message}\n")
    return "".join(lines)


@recipe("tai64nlocal-worker-log-three-errors", "tai64nlocal", "log", ["sh", "-c", "dpkg-query -W daemontools"],
        needs=("tai64nlocal",))
def _tai64nlocal(root):
    """Write the `tai64nlocal-worker-log-three-errors` project under `root`; return its command and signals."""
    write(root, "log/payments/current", _worker_log())
    return Run(["tai64nlocal"], [
        S("stdout", r" ERROR job \d+ ", "the three failed jobs among 10,000 lines"),
    ], command="tai64nlocal < log/payments/current", expect_exit=exits(0))


# --- syslog-ng --syntax-only: a central log host's config with a destination per team; one driver name is misspelt --

def _syslog_ng_conf() -> str:
    """The log host's config: one network source, a filter and a file destination per team; team 14's says flie."""
    parts = ["@version: 3.38\n\noptions { chain_hostnames(off); flush_lines(0); use_dns(no); create_dirs(yes); };\n\n",
             "source s_net { network(transport(\"udp\") port(5514)); network(transport(\"tcp\") port(5514)); };\n\n"]
    for n in range(24):
        driver = "flie" if n == 14 else "file"
        parts.append(f"filter f_team{n:02d} {{ program(\"team{n:02d}-.*\") or host(\"team{n:02d}-.*\"); }};\n"
                     f"destination d_team{n:02d} {{ {driver}(\"/var/log/teams/team{n:02d}/${{YEAR}}-${{MONTH}}-${{DAY}}.log\""
                     f" template(\"${{ISODATE}} ${{HOST}} ${{PROGRAM}}: ${{MSG}}\\n\")); }};\n"
                     f"log {{ source(s_net); filter(f_team{n:02d}); destination(d_team{n:02d}); }};\n\n")
    return "".join(parts)


@recipe("syslog-ng-syntax-only-unknown-driver", "syslog-ng", "config-check", ["syslog-ng", "--version"], needs=("syslog-ng",))
def _syslog_ng(root):
    """Write the `syslog-ng-syntax-only-unknown-driver` project under `root`; return its command and signals."""
    write(root, "syslog-ng.conf", _syslog_ng_conf())
    return Run(["syslog-ng", "--syntax-only", "--cfgfile=syslog-ng.conf"], [
        S("stderr", r"^Error parsing config, ", "the error and where it is"),
        S("stderr", r"^64---->", "the line it points at"),
    ], expect_exit=exits(1))


# --- tor --verify-config: an onion host for twelve internal services; one section misspells HiddenServicePort -------

def _torrc(root: str) -> str:
    """The host's torrc: a data directory, then a hidden service per internal app; app 9's port line is misspelt."""
    parts = [f"DataDirectory {root}/data\nSocksPort 0\nLog notice stdout\n\n"]
    for n in range(12):
        key = "HiddenServicePrt" if n == 9 else "HiddenServicePort"
        parts.append(f"HiddenServiceDir {root}/data/app{n:02d}\nHiddenServiceVersion 3\n{key} 80 127.0.0.1:{8100 + n}\n\n")
    return "".join(parts)


@recipe("tor-verify-config-unknown-option", "tor", "config-check", ["tor", "--version"], needs=("tor",))
def _tor(root):
    """Write the `tor-verify-config-unknown-option` project under `root`; return its command and signals."""
    import os

    os.makedirs(f"{root}/data", mode=0o700)
    write(root, "torrc", _torrc(root))
    return Run(["tor", "--verify-config", "-f", "torrc"], [
        S("stdout", r"\[warn\] Failed to parse/validate config: Unknown option 'HiddenServicePrt'", "the error"),
        S("stdout", r"\[err\] Reading config failed", "tor's verdict"),
    ], expect_exit=exits(1))


# --- amtool check-config: three environments' Alertmanager configs; production routes to a receiver it lacks -------

def _alertmanager_yml(env: str, teams: int, missing: int | None) -> str:
    """One environment's config: a receiver and a route per team; team `missing` routes to an undefined pager."""
    receivers = "".join(f"  - name: team{n:02d}-{env}\n    email_configs:\n      - to: team{n:02d}-alerts@example.org\n"
                        for n in range(teams))
    routes = "".join(f"    - matchers: ['team=\"team{n:02d}\"']\n      receiver: "
                     f"{'pager-oncall' if n == missing else f'team{n:02d}-{env}'}\n" for n in range(teams))
    return (f"global:\n  smtp_smarthost: mail.example.org:587\n  smtp_from: alertmanager-{env}@example.org\n\n"
            f"route:\n  receiver: team00-{env}\n  group_by: [alertname, cluster]\n  routes:\n{routes}\n"
            f"receivers:\n{receivers}")


@recipe("amtool-check-config-undefined-receiver", "amtool", "config-check", ["amtool", "--version"], needs=("amtool",))
def _amtool(root):
    """Write the `amtool-check-config-undefined-receiver` project under `root`; return its command and signals."""
    for env, missing in (("staging", None), ("production", 17), ("dr", None)):
        write(root, f"alertmanager/{env}.yml", _alertmanager_yml(env, 30, missing))
    return Run(["amtool", "check-config", "alertmanager/staging.yml", "alertmanager/production.yml", "alertmanager/dr.yml"], [
        S("stdout", r"^Checking 'alertmanager/production\.yml'\s+FAILED: undefined receiver", "the failing file and why"),
        S("stderr", r"^amtool: error: failed to validate 1 file\(s\)$", "the verdict"),
    ], expect_exit=exits(1))


# --- findmnt --verify --verbose: a build host's fstab of 48 bind mounts and scratch tmpfs; one target dir is gone ----

def _fstab(root: str) -> str:
    """Bind mounts of each runner's workspace and a tmpfs per runner; runner 31's scratch mount point was deleted."""
    lines = ["# build host: per-runner workspaces and scratch space\n"]
    for n in range(24):
        lines.append(f"{root}/srv/runners/r{n:02d} {root}/mnt/workspace/r{n:02d} none bind,nodev 0 0\n")
        lines.append(f"tmpfs {root}/mnt/scratch/r{n + 20:02d} tmpfs rw,nosuid,size=2g,mode=1777 0 0\n")
    return "".join(lines)


@recipe("findmnt-verify-fstab-missing-target", "findmnt", "system", ["findmnt", "--version"], needs=("findmnt",))
def _findmnt(root):
    """Write the `findmnt-verify-fstab-missing-target` project under `root`; return its command and signals."""
    import os

    for n in range(24):
        os.makedirs(f"{root}/srv/runners/r{n:02d}")
        os.makedirs(f"{root}/mnt/workspace/r{n:02d}")
        if n + 20 != 31:
            os.makedirs(f"{root}/mnt/scratch/r{n + 20:02d}")
    write(root, "etc/fstab", _fstab(root))
    return Run(["findmnt", "--verify", "--verbose", "--tab-file", "etc/fstab"], [
        S("stdout", r"^/.*/mnt/scratch/r31$", "the entry with the error"),
        S("stdout", r"^\s+\[E\] ", "the error: its mount point does not exist"),
        S("stderr", r"^0 parse errors, 1 error, 0 warnings$", "the counts"),
    ], expect_exit=exits(1))


# --- wiggle --merge: a downstream patch to a scheduler, carried to upstream's next release; two hunks conflict -------

def _scheduler_c(release: int, patched: bool) -> str:
    """The scheduler's 160 queue handlers; the downstream patch raises every eighth handler's retry limit, and the
    next release changed two of those lines its own way and made one of the same changes itself."""
    parts = ["#include \"sched.h\"\n\n"]
    for n in range(160):
        limit = 3
        if patched and n % 8 == 0:
            limit = 5
        if release == 2 and n in (40, 96):
            limit = 4
        if release == 2 and n == 128:
            limit = 5
        parts.append(f"int queue_{n:03d}_handle(struct job *job)\n{{\n    if (job->attempts > {limit})\n"
                     f"        return sched_fail(job, \"queue {n}: too many attempts\");\n"
                     f"    job->attempts++;\n    return sched_run(job, {n % 12});\n}}\n\n")
    return "".join(parts)


@recipe("wiggle-merge-scheduler-two-conflicts", "wiggle", "vcs", ["wiggle", "--version"], needs=("wiggle",))
def _wiggle(root):
    """Write the `wiggle-merge-scheduler-two-conflicts` project under `root`; return its command and signals."""
    import os

    write(root, "a/src/scheduler.c", _scheduler_c(1, False))
    write(root, "b/src/scheduler.c", _scheduler_c(1, True))
    patch = sh(["diff", "-u", "--label", "a/src/scheduler.c", "--label", "b/src/scheduler.c", "a/src/scheduler.c",
                "b/src/scheduler.c"], root, check=False).stdout
    os.makedirs(f"{root}/patches")
    with open(f"{root}/patches/retry-limits.patch", "wb") as handle:
        handle.write(patch)
    write(root, "src/scheduler.c", _scheduler_c(2, False))
    sh(["rm", "-r", "a", "b"], root)
    return Run(["wiggle", "--merge", "src/scheduler.c", "patches/retry-limits.patch"], [
        S("stdout", r"^(<<<<<<< found|>>>>>>> replacement)$", "where each of the two conflicts starts and ends in the merged file"),
        S("stderr", r"^2 unresolved conflicts found$", "the count"),
    ], expect_exit=exits(1))
