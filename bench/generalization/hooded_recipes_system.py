"""Hooded recipes for VCS, services, system, storage, network, data tools, listings and logs: last, dumpe2fs,
wdiff, tshark, unsquashfs, hledger, varnishd, monit, ldns-verify-zone, bsdtar, ausearch.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from hooded_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "tshark": "4.0.17-0+deb12u3", "wireshark-common": "4.0.17-0+deb12u3", "hledger": "1.25-2+b5",
    "varnish": "7.1.1-2+deb12u1", "monit": "1:5.33.0-1", "ldnsutils": "1.8.3-1+b1", "wdiff": "1.2.2-5",
    "util-linux": "2.38.1-5+deb12u3", "squashfs-tools": "1:4.5.1-1", "libarchive-tools": "3.6.2-1+deb12u5",
    "auditd": "1:3.0.9-1",
}


# --- last -x: a build server's wtmp over 90 days of logins; one boot ended without a shutdown -------------

_USERS = ("deploy", "ana", "ben", "chen", "dana", "ci-runner", "ops")


def _wtmp_text(days: int) -> str:
    """utmpdump's text of a wtmp: a boot a day, 16 sessions a day, a shutdown each night but day 61's, whose last session stays open."""
    rows, pid = [], 1000

    def row(kind, user, line, host, stamp, term="ts/0"):
        """One utmpdump record."""
        return (f"[{kind}] [{pid:05d}] [{term:<4}] [{user:<8}] [{line:<12}] [{host:<20}] [{host if kind == 7 else '0.0.0.0':<15}] "
                f"[{stamp},000000+00:00]\n")

    for day in range(days):
        date = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}"
        rows.append(row(2, "reboot", "~", "6.1.0-18-amd64", f"{date}T06:00:00", "~~"))
        rows.append(row(1, "runlevel", "~", "6.1.0-18-amd64", f"{date}T06:00:04", "~~"))
        for n in range(16):
            pid += 1
            user, tty = _USERS[(day + n) % len(_USERS)], f"pts/{n % 6}"
            host = f"10.20.{n % 4}.{10 + (day * 3 + n) % 200}"
            rows.append(row(7, user, tty, host, f"{date}T{7 + n // 2:02d}:{(n * 7) % 60:02d}:11", f"ts/{n % 6}"))
            if not (day == 61 and n == 15):
                rows.append(row(8, "", tty, "", f"{date}T{8 + n // 2:02d}:{(n * 11) % 60:02d}:42", f"ts/{n % 6}"))
        if day != 61:
            rows.append(row(1, "shutdown", "~~", "6.1.0-18-amd64", f"{date}T23:30:00", "~~"))
    return "".join(rows)


@recipe("last-wtmp-one-crash", "last", "log", ["last", "--version"], needs=("last", "utmpdump"))
def _last(root):
    """Write the `last-wtmp-one-crash` project under `root`; return its command and signals."""
    write(root, "wtmp.txt", _wtmp_text(84))
    sh("utmpdump -r < wtmp.txt > wtmp", root)
    return Run(["last", "-x", "-F", "-f", "wtmp"], [
        S("stdout", r"^\S+\s+pts/\d+\s+.* - crash\s", "the session the unclean shutdown cut, among 1,300"),
        S("stdout", r"^wtmp begins ", "where the record starts"),
    ], expect_exit=exits(0))


# --- dumpe2fs: a 1 GiB ext4 image with one group descriptor whose checksum no longer matches --------------

@recipe("dumpe2fs-group-descriptor-checksum", "dumpe2fs", "system", ["sh", "-c", "dumpe2fs -V 2>&1"],
        needs=("dumpe2fs", "mke2fs"))
def _dumpe2fs(root):
    """Write the `dumpe2fs-group-descriptor-checksum` project under `root`; return its command and signals."""
    fake = {"E2FSPROGS_FAKE_TIME": "1767600000"}
    sh("truncate -s 1G data.img && mke2fs -q -F -t ext4 -b 1024 -L data -U 0b7c1f2a-4d5e-4f60-8a9b-1c2d3e4f5a6b "
       "-E hash_seed=5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0 data.img", root, env=fake)
    with open(f"{root}/data.img", "r+b") as handle:
        handle.seek(2048 + 64 * 77 + 0x1E)  # group 77's bg_checksum, in the descriptor table at block 2
        handle.write(b"\x5a\xa5")
    return Run(["dumpe2fs", "data.img"], [
        S("stdout", r"^Group 77: .*EXPECTED", "the one group of 128 whose descriptor checksum does not match"),
        S("stdout", r"^\*\*\* Run e2fsck now!$", "what dumpe2fs says to do"),
        S("stderr", r"^dumpe2fs: .* does not match", "the error it stopped on"),
    ], expect_exit=exits(156))


# --- wdiff -s: the contract's revision against the signed version; two changes in 4,700 words ----------

def _contract(revised: bool) -> str:
    """A services agreement of 120 clauses; the revision changes a notice period and drops a liability cap."""
    clauses = []
    for n in range(1, 121):
        text = (f"{n}. Clause {n}. The Supplier shall provide the services described in Schedule {n % 9 + 1} "
                f"with reasonable skill and care, and shall keep records of each delivery for {n % 5 + 2} years. "
                f"The Customer shall pay each invoice within {30 + n % 3 * 15} days of receipt.")
        if n == 47:
            text += f" Either party may end this agreement on {'60' if revised else '90'} days' written notice."
        if n == 88 and not revised:
            text += " The Supplier's total liability shall not exceed the fees paid in the preceding twelve months."
        clauses.append(text)
    return "\n\n".join(clauses) + "\n"


@recipe("wdiff-contract-revision-statistics", "wdiff", "vcs", ["wdiff", "--version"], needs=("wdiff",))
def _wdiff(root):
    """Write the `wdiff-contract-revision-statistics` project under `root`; return its command and signals."""
    write(root, "signed/agreement.txt", _contract(False))
    write(root, "draft/agreement.txt", _contract(True))
    return Run(["wdiff", "-s", "signed/agreement.txt", "draft/agreement.txt"], [
        S("stdout", r"\[-|\{\+", "the two changed clauses among 120"),
        S("stdout", r"^(signed|draft)/agreement\.txt: \d+ words", "the statistics"),
    ], expect_exit=exits(1))


# --- tshark -r: a resolver's capture of 4,000 DNS packets; one answer SERVFAILs, one is cut short ---------

def _dns_name(name: str) -> bytes:
    """A name in DNS wire form."""
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"


def _udp_frame(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    """An Ethernet/IPv4/UDP frame carrying `payload` (the IP header checksum filled in, no UDP checksum)."""
    import struct

    ip = lambda a: bytes(int(x) for x in a.split("."))  # noqa: E731
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), sport & 0xFFFF, 0x4000, 64, 17, 0, ip(src), ip(dst))
    total = sum(struct.unpack("!10H", head))
    total = (total & 0xFFFF) + (total >> 16)
    head = head[:10] + struct.pack("!H", ~total & 0xFFFF) + head[12:]
    return b"\x02\x00\x00\x00\x00\x53\x02\x00\x00\x00\x00\x05\x08\x00" + head + udp


def _dns_capture(pairs: int) -> bytes:
    """A pcap of `pairs` A-record lookups and their answers; pair 1337 fails, pair 1789's answer is truncated."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for n in range(pairs):
        qname = _dns_name(f"{['api', 'cdn', 'db', 'auth', 'mail'][n % 5]}{n % 97}.svc.example.net")
        question = qname + b"\x00\x01\x00\x01"
        client = f"10.1.{n % 8}.{20 + n % 50}"
        query = struct.pack("!HHHHHH", n, 0x0100, 1, 0, 0, 0) + question
        rcode, answers = (2, b"") if n == 1337 else (0, b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x01\x2c\x00\x04"
                                                      + bytes([10, 9, n % 250, 1 + n % 200]))
        reply = struct.pack("!HHHHHH", n, 0x8180 | rcode, 1, 1 if answers else 0, 0, 0) + question + answers
        if n == 1789:
            reply = reply[:-9]
        for k, frame in enumerate((_udp_frame(client, "10.0.0.53", 40000 + n % 20000, 53, query),
                                   _udp_frame("10.0.0.53", client, 53, 40000 + n % 20000, reply))):
            usec = n * 2500 + k * 400 + (n * 37) % 300
            out.append(struct.pack("<IIII", 1767600000 + usec // 1000000, usec % 1000000, len(frame), len(frame)) + frame)
    return b"".join(out)


@recipe("tshark-read-dns-capture-servfail", "tshark", "network", ["tshark", "--version"], needs=("tshark",))
def _tshark(root):
    """Write the `tshark-read-dns-capture-servfail` project under `root`; return its command and signals."""
    with open(os.path.join(root, "resolver.pcap"), "wb") as handle:
        handle.write(_dns_capture(2000))
    return Run(["tshark", "-n", "-r", "resolver.pcap"], [
        S("stdout", r"Server failure", "the one failed answer among 2,000"),
        S("stdout", r"\[Malformed Packet\]", "the one answer cut short"),
    ], expect_exit=exits(0))


# --- unsquashfs: restoring a 1,500-file release image in which one data block is damaged ---------------

@recipe("unsquashfs-extract-damaged-block", "unsquashfs", "system", ["unsquashfs", "-version"],
        needs=("unsquashfs", "mksquashfs"))
def _unsquashfs(root):
    """Write the `unsquashfs-extract-damaged-block` project under `root`; return its command and signals."""
    for n in range(1500):
        area = ["bin", "lib", "share/doc", "share/locale", "etc"][n % 5]
        body = "".join(f"{area} entry {n} line {k}: {'%08x' % (n * 2654435761 % 2**32 ^ k * 40503)}\n" for k in range(40 + n % 90))
        write(root, f"release/{area}/part_{n:04d}.dat", body)
    write(root, "release/lib/libcore.so.data", "".join(f"{k:06d} {'%016x' % (k * 11400714819323198485 % 2**64)}\n"
                                                      for k in range(60000)))
    sh("mksquashfs release release.sqfs -noappend -no-progress -quiet -all-root -mkfs-time 1767600000 "
       "-all-time 1767600000 -no-fragments -comp gzip", root)
    data = bytearray(open(os.path.join(root, "release.sqfs"), "rb").read())
    marker = data.find(b"\x78\xda", 96 + 200000)  # a zlib stream well inside the data: corrupt its body
    for k in range(marker + 40, marker + 90):
        data[k] ^= 0xFF
    with open(os.path.join(root, "release.sqfs"), "wb") as handle:
        handle.write(data)
    return Run(["unsquashfs", "-i", "-d", "restored", "release.sqfs"], [
        S("stderr", r"uncompress failed", "the damaged block"),
        S("stderr", r"^FATAL ERROR: ", "the file it is in, where the restore stopped"),
    ], expect_exit=exits(1))


# --- hledger balance: a year's household journal of 700 transactions; one does not balance --------------

@recipe("hledger-balance-unbalanced-entry", "hledger", "data", ["hledger", "--version"], needs=("hledger",))
def _hledger(root):
    """Write the `hledger-balance-unbalanced-entry` project under `root`; return its command and signals."""
    entries = ["account assets:checking\naccount expenses:groceries\naccount expenses:utilities\n"
               "account expenses:transport\naccount income:salary\n\n"]
    for n in range(700):
        date = f"2025-{1 + n // 60:02d}-{1 + n % 28:02d}"
        kind = ["groceries", "utilities", "transport"][n % 3]
        amount = f"{(n * 37) % 180 + 12}.{n % 100:02d}"
        other = f"-{amount}" if n != 433 else f"-{amount[:-1]}0" if amount[-1] != "0" else f"-{amount[:-1]}5"
        entries.append(f"{date} * Payee {n % 41} {kind}\n    expenses:{kind}    {amount} EUR\n"
                       f"    assets:checking    {other} EUR\n\n")
        if n % 60 == 0:
            entries.append(f"{date} * Employer\n    assets:checking    3200.00 EUR\n    income:salary\n\n")
    write(root, "household.journal", "".join(entries))
    return Run(["hledger", "-f", "household.journal", "balance"], [
        S("stderr", r'^hledger: ".*household\.journal" \(lines \d+-\d+\)$', "where the error is"),
        S("stderr", r"^could not balance this transaction:$", "the error"),
        S("stderr", r"^real postings' sum should be 0 but is: ", "by how much"),
    ], expect_exit=exits(1))


# --- varnishd -C: the cache's VCL after a backend was renamed; one route still names the old one ----------

@recipe("varnishd-compile-renamed-backend", "varnishd", "service", ["varnishd", "-V"], needs=("varnishd",))
def _varnishd(root):
    """Write the `varnishd-compile-renamed-backend` project under `root`; return its command and signals."""
    backends = "".join(f'backend shop_{n} {{ .host = "10.2.0.{10 + n}"; .port = "8080"; }}\n' for n in range(6))
    routes = "".join(f'    {"if" if n == 0 else "} elsif"} (req.url ~ "^/shop/{n}/") {{\n        set req.backend_hint = shop_{n};\n'
                     for n in range(6))
    write(root, "default.vcl", 'vcl 4.1;\n\nimport std;\n\nbackend api { .host = "10.2.0.2"; .port = "8081"; }\n'
          'backend assets { .host = "10.2.0.3"; .port = "8082"; }\n' + backends + "\nsub vcl_recv {\n" + routes
          + '    } elsif (req.url ~ "^/api/") {\n        set req.backend_hint = api;\n'
          '    } elsif (req.url ~ "^/static/") {\n        set req.backend_hint = static_files;\n    }\n'
          '    if (req.method == "PURGE") {\n        return (purge);\n    }\n}\n\n'
          'sub vcl_backend_response {\n    if (bereq.url ~ "\\.(css|js|png)$") {\n        set beresp.ttl = 1h;\n    }\n}\n')
    return Run(["varnishd", "-C", "-f", f"{root}/default.vcl", "-n", f"{root}/varnish"], [
        S("stderr", r"^Unused backend assets, defined:$", "the error: the renamed backend no route uses"),
        S("stderr", r"default\.vcl' Line \d+ Pos \d+\)$", "where it is"),
        S("stderr", r"^VCL compilation failed$", "the outcome"),
    ], expect_exit=exits(2))


# --- monit -t: a monitrc of 40 services checked before reload; one action word is misspelt --------------

@recipe("monit-config-test-syntax-error", "monit", "service", ["monit", "-V"], needs=("monit",))
def _monit(root):
    """Write the `monit-config-test-syntax-error` project under `root`; return its command and signals."""
    checks = [f"set daemon 30\nset log {root}/monit.log\nset idfile {root}/monit.id\nset statefile {root}/monit.state\n\n"]
    for n in range(40):
        action = "alrt" if n == 27 else "alert"
        checks.append(f"check process worker_{n} with pidfile /run/worker_{n}.pid\n"
                      f"    start program = \"/usr/bin/systemctl start worker@{n}\"\n"
                      f"    stop program = \"/usr/bin/systemctl stop worker@{n}\"\n"
                      f"    if cpu > 80% for 3 cycles then restart\n"
                      f"    if memory usage > {n % 4 + 1} GB then {action}\n"
                      f"    if 5 restarts within 5 cycles then unmonitor\n\n")
    write(root, "monitrc", "".join(checks), mode=0o600)
    return Run(["monit", "-t", "-c", "monitrc"], [
        S("stderr", r"monitrc:\d+: syntax error 'alrt'", "the error and its line"),
    ], expect_exit=exits(1))


# --- ldns-verify-zone: a signed zone of 300 hosts in which one address was edited after signing ----------

@recipe("ldns-verify-zone-bogus-signature", "ldns-verify-zone", "service", ["ldns-verify-zone", "-v"],
        needs=("ldns-verify-zone", "ldns-signzone", "ldns-keygen"))
def _ldns(root):
    """Write the `ldns-verify-zone-bogus-signature` project under `root`; return its command and signals."""
    hosts = "".join(f"host{n} IN A 192.0.2.{n % 250 + 2}\n" for n in range(1, 301))
    write(root, "example.org.zone", "$ORIGIN example.org.\n$TTL 3600\n@ IN SOA ns1.example.org. hostmaster.example.org. "
          "2026010501 7200 3600 1209600 3600\n@ IN NS ns1.example.org.\nns1 IN A 192.0.2.1\n" + hosts)
    sh("ldns-signzone -e 20270101000000 -i 20260101000000 example.org.zone "
       "$(ldns-keygen -a ECDSAP256SHA256 -k example.org) $(ldns-keygen -a ECDSAP256SHA256 example.org)", root)
    sh(r"sed -i 's/^\(host142\.example\.org\.\s\+3600\s\+IN\s\+A\s\+\)192\.0\.2\.144/\1192.0.2.244/' "
       "example.org.zone.signed", root)
    return Run(["ldns-verify-zone", "example.org.zone.signed"], [
        S("stderr", r"^Error: Bogus DNSSEC signature for host142\.example\.org\.", "the record edited after signing"),
        S("stderr", r"^There were errors in the zone$", "the outcome"),
    ], expect_exit=exits(35))


# --- bsdtar -xv: restoring a 2,400-file backup whose archive was cut short in transfer ---------------------

@recipe("bsdtar-extract-truncated-archive", "bsdtar", "system", ["bsdtar", "--version"], needs=("bsdtar",))
def _bsdtar(root):
    """Write the `bsdtar-extract-truncated-archive` project under `root`; return its command and signals."""
    import gzip
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for n in range(2400):
            data = "".join(f"record {n}.{k}: {(n * 7919 + k * 104729) % 1000003:07d}\n" for k in range(30 + n % 40)).encode()
            info = tarfile.TarInfo(f"home/{['ana', 'ben', 'chen'][n % 3]}/projects/p{n % 40:02d}/data_{n:04d}.txt")
            info.size, info.mtime, info.mode, info.uname, info.gname = len(data), 1767600000 + n, 0o644, "backup", "backup"
            archive.addfile(info, io.BytesIO(data))
    packed = gzip.compress(buffer.getvalue(), mtime=0)
    with open(os.path.join(root, "home-backup.tar.gz"), "wb") as handle:
        handle.write(packed[: len(packed) * 83 // 100])
    os.makedirs(os.path.join(root, "restore"))
    return Run(["bsdtar", "-xvzf", "home-backup.tar.gz", "-C", "restore"], [
        S("stderr", r"^x home/\S+: truncated gzip input", "where the archive ends early, among 2,400 extracted files"),
        S("stderr", r"^bsdtar: Error exit delayed from previous errors\.$", "the outcome"),
    ], expect_exit=exits(1))


# --- ausearch -k: 420 audited writes under /etc over a week; one was denied ---------------------------------

def _audit_log(events: int) -> str:
    """A raw audit log of `events` watched opens of files under /etc; event 318 is denied to uid 1003."""
    files = ["nginx/nginx.conf", "ssh/sshd_config", "hosts", "resolv.conf", "sudoers.d/deploy", "cron.d/backup"]
    comms = [("vim", "/usr/bin/vim.basic"), ("ansible", "/usr/bin/python3.11"), ("sed", "/usr/bin/sed")]
    out = []
    for n in range(events):
        serial, stamp = 20000 + n * 3, f"{1767600000 + n * 1437}.{n * 37 % 1000:03d}"
        denied = n == 318
        comm, exe = comms[n % 3]
        uid = 1003 if denied else 0
        result = "success=no exit=-13" if denied else "success=yes exit=3"
        out.append(f"type=SYSCALL msg=audit({stamp}:{serial}): arch=c000003e syscall=257 {result} a0=ffffff9c "
                   f"a1=55d0c2a1e2a0 a2=241 a3=1b6 items=2 ppid={1200 + n} pid={1300 + n} auid={1000 + n % 4} uid={uid} "
                   f"gid={uid} euid={uid} suid={uid} fsuid={uid} egid={uid} sgid={uid} fsgid={uid} tty=pts{n % 3} "
                   f"ses={n % 9 + 1} comm=\"{comm}\" exe=\"{exe}\" subj=unconfined key=\"etc_watch\"\n"
                   f"type=CWD msg=audit({stamp}:{serial}): cwd=\"/root\"\n"
                   f"type=PATH msg=audit({stamp}:{serial}): item=0 name=\"/etc/{files[n % 6]}\" inode={393000 + n % 6} "
                   f"dev=08:01 mode=0100644 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 "
                   f"cap_frootid=0\n"
                   f"type=PROCTITLE msg=audit({stamp}:{serial}): proctitle={comm.encode().hex().upper()}\n")
    return "".join(out)


@recipe("ausearch-key-one-denied-write", "ausearch", "log", ["ausearch", "--version"], needs=("ausearch",))
def _ausearch(root):
    """Write the `ausearch-key-one-denied-write` project under `root`; return its command and signals."""
    write(root, "audit.log", _audit_log(420))
    return Run(["ausearch", "-i", "-if", "audit.log", "-k", "etc_watch"], [
        S("stdout", r"success=no exit=EACCES", "the one denied write among 420"),
        S("stdout", r"^type=PATH msg=audit\(01/10/26 14:56:06\.766:20954\) : item=0 name=/etc/", "the file it was denied"),
    ], expect_exit=exits(0))
