"""Shrouded recipes for VCS, services, system, storage, network and data tools, listings and logs: tcpdump, dos2unix,
tree, diffstat, rg, named-checkconf, dhcpd, btrfs check, pwck, netplan, sgdisk, guilt, pflogsumm. `rg` runs as
`nobody` (`setpriv`) so its permission error is real; `pwck` checks an image root given by absolute path (`-R`).

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os
import struct

from shrouded_common import Run, S, exits, recipe, sh, write

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "tcpdump": "4.99.3-1", "dos2unix": "7.4.3-1", "tree": "2.1.0-1", "btrfs-progs": "6.2-1+deb12u2",
    "netplan.io": "0.106-2+deb12u1", "ripgrep": "13.0.0-4+b2", "guilt": "0.36-3", "isc-dhcp-server": "4.4.3-P1-2",
    "gdisk": "1.0.9-2.1", "pflogsumm": "1.1.5-8",
}

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


# --- tcpdump: reading a capture of an API host's traffic; one reset and one unreachable DNS server -------

def _ip_checksum(header: bytes) -> int:
    """The IPv4 header checksum."""
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _frame(src: str, dst: str, proto: int, l4: bytes) -> bytes:
    """An Ethernet frame carrying one IPv4 packet."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0x1234, 0x4000, 64, proto, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    ip = ip[:10] + struct.pack("!H", _ip_checksum(ip)) + ip[12:]
    return b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + l4


def _tcp(sport: int, dport: int, seq: int, ack: int, flags: int, payload: bytes = b"") -> bytes:
    """A TCP segment without options (checksum left zero; tcpdump checks it only when verbose)."""
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 0x50, flags, 64240, 0, 0) + payload


def _dns_query(name: str) -> bytes:
    """A UDP datagram holding a DNS A query for `name`."""
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\x00"
    dns = struct.pack("!HHHHHH", 0x4a1f, 0x0100, 1, 0, 0, 0) + qname + struct.pack("!HH", 1, 1)
    return struct.pack("!HHHH", 40000, 53, 8 + len(dns), 0) + dns


def _capture() -> bytes:
    """600 HTTPS exchanges between clients and the API host; connection 388 is reset by the database
    port, and one DNS query is answered by an ICMP port unreachable."""
    packets, t = [], 1_717_243_200_000_000
    for n in range(600):
        client, port, seq, srv = f"10.0.0.{10 + n % 40}", 40000 + n, 1000 * n, 500000 + 1000 * n
        if n == 388:
            packets += [("10.0.1.5", "10.0.2.7", 6, _tcp(51000, 5432, seq, 0, 0x02)),
                        ("10.0.2.7", "10.0.1.5", 6, _tcp(5432, 51000, 0, seq + 1, 0x14))]
        if n == 452:
            query = _dns_query("db.internal.example")
            packets += [("10.0.1.5", "10.0.0.53", 17, query),
                        ("10.0.0.53", "10.0.1.5", 1, struct.pack("!BBHI", 3, 3, 0, 0)
                         + _frame("10.0.1.5", "10.0.0.53", 17, query)[14:42])]
        body = b"x" * (200 + n % 300)
        packets += [(client, "10.0.1.5", 6, _tcp(port, 443, seq, 0, 0x02)),
                    ("10.0.1.5", client, 6, _tcp(443, port, srv, seq + 1, 0x12)),
                    (client, "10.0.1.5", 6, _tcp(port, 443, seq + 1, srv + 1, 0x10)),
                    (client, "10.0.1.5", 6, _tcp(port, 443, seq + 1, srv + 1, 0x18, b"q" * 120)),
                    ("10.0.1.5", client, 6, _tcp(443, port, srv + 1, seq + 121, 0x18, body)),
                    (client, "10.0.1.5", 6, _tcp(port, 443, seq + 121, srv + 1 + len(body), 0x11))]
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for k, (src, dst, proto, l4) in enumerate(packets):
        frame = _frame(src, dst, proto, l4)
        stamp = t + k * 1370
        out.append(struct.pack("<IIII", stamp // 1_000_000, stamp % 1_000_000, len(frame), len(frame)) + frame)
    return b"".join(out)


@recipe("tcpdump-read-capture-reset", "tcpdump", "network", ["tcpdump", "--version"], needs=("tcpdump",))
def _tcpdump(root):
    """Write the `tcpdump-read-capture-reset` project under `root`; return its command and signals."""
    with open(os.path.join(root, "api-host.pcap"), "wb") as handle:
        handle.write(_capture())
    return Run(["tcpdump", "-nn", "-r", "api-host.pcap"], [
        S("stdout", r"IP 10\.0\.2\.7\.5432 > 10\.0\.1\.5\.51000: Flags \[R\.\]", "the database's reset"),
        S("stdout", r"IP 10\.0\.0\.53 > 10\.0\.1\.5: ICMP 10\.0\.0\.53 udp port 53 unreachable", "the DNS server unreachable"),
    ], expect_exit=exits(0))


# --- dos2unix: converting a docs tree's 700 files; two are binary and skipped, one name is wrong ----------

@recipe("dos2unix-docs-binary-skipped", "dos2unix", "data", ["dos2unix", "--version"], needs=("dos2unix",))
def _dos2unix(root):
    """Write the `dos2unix-docs-binary-skipped` project under `root`; return its command and signals."""
    for n in range(700):
        path = os.path.join(root, f"docs/page_{n:03d}.txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        body = f"Page {n}\r\n\r\nSection text for page {n}.\r\n".encode()
        if n in (233, 561):
            body = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
        with open(path, "wb") as handle:
            handle.write(body)
    return Run(["dos2unix", "docs/*.txt", "docs/INDEX.txt"], [
        S("stderr", r"^dos2unix: Binary symbol 0x[0-9A-F]{2} found at line \d+$", "why the two files were skipped"),
        S("stderr", r"^dos2unix: Skipping binary file docs/page_(233|561)\.txt$", "the two files skipped among 700"),
        S("stderr", r"^dos2unix: (docs/INDEX\.txt: No such file or directory|Skipping docs/INDEX\.txt, not a regular file\.)$",
          "the missing file"),
    ], command="dos2unix docs/*.txt docs/INDEX.txt", expect_exit=exits(2))


# --- tree: the listing of a large service's source tree; its signal is the count at the end -------------

@recipe("tree-source-listing-summary", "tree", "listing", ["tree", "--version"], needs=("tree",))
def _tree(root):
    """Write the `tree-source-listing-summary` project under `root`; return its command and signals."""
    for pkg in range(24):
        for sub in ("api", "models", "services", "tests"):
            for n in range(40):
                write(root, f"src/pkg_{pkg:02d}/{sub}/module_{n:02d}.py", "")
    return Run(["tree", "src"], [
        S("stdout", r"^121 directories, 3840 files$", "the count"),
    ], expect_exit=exits(0))


# --- diffstat: the summary of a large refactoring patch; its signal is the totals line -------------------

def _refactor_patch() -> str:
    """A patch renaming a helper across 640 modules, with a few larger rewrites."""
    out = []
    for n in range(640):
        extra = "".join(f"+    log.debug('step {k}')\n" for k in range(n % 5 * 6)) if n % 53 == 0 else ""
        out.append(f"diff --git a/services/svc_{n // 40:02d}/handler_{n:03d}.py b/services/svc_{n // 40:02d}/handler_{n:03d}.py\n"
                   f"--- a/services/svc_{n // 40:02d}/handler_{n:03d}.py\n+++ b/services/svc_{n // 40:02d}/handler_{n:03d}.py\n"
                   f"@@ -10,4 +10,4 @@ def handle_{n}(request):\n     data = request.json\n-    return old_helper(data)\n"
                   f"+    return new_helper(data)\n{extra}     # end\n")
    return "".join(out)


@recipe("diffstat-refactor-patch", "diffstat", "vcs", ["diffstat", "-V"], needs=("diffstat",))
def _diffstat(root):
    """Write the `diffstat-refactor-patch` project under `root`; return its command and signals."""
    write(root, "rename-helper.patch", _refactor_patch())
    return Run(["diffstat", "-p1", "rename-helper.patch"], [
        S("stdout", r"^ 640 files changed, \d+ insertions\(\+\), 640 deletions\(-\)$", "the totals"),
    ], expect_exit=exits(0))


# --- rg: looking for a deprecated call across a monorepo, as the CI user; one directory is unreadable ----

@recipe("rg-deprecated-calls-unreadable-dir", "rg", "listing", ["rg", "--version"], needs=("rg", "setpriv"))
def _rg(root):
    """Write the `rg-deprecated-calls-unreadable-dir` project under `root`; return its command and signals."""
    for n in range(1200):
        body = "".join(f"def f{k}(x):\n    return legacy_fetch(x, retries={k})\n" if k % 3 == 0 else
                       f"def f{k}(x):\n    return fetch(x)\n" for k in range(9))
        write(root, f"services/svc_{n // 60:02d}/mod_{n:04d}.py", body)
    write(root, "services/billing/secrets/keys.py", "legacy_fetch = None\n")
    os.chmod(os.path.join(root, "services/billing/secrets"), 0o700)
    return Run(["rg", "-n", r"legacy_fetch\("], [
        S("stderr", r"^\./services/billing/secrets: Permission denied \(os error 13\)$", "the one unreadable directory"),
    ], command=NOBODY + ["rg", "-n", r"legacy_fetch\("], expect_exit=exits(2))


@recipe("named-checkconf-bad-options", "named-checkconf", "service", ["named-checkconf", "-v"], needs=("named-checkconf",))
def _named_checkconf(root):
    """Write the `named-checkconf-bad-options` project under `root`; return its command and signals."""
    zones = "".join(f"zone \"site{n}.example\" {{\n    type primary;\n    file \"{root}/zones/site{n}.db\";\n}};\n\n"
                    for n in range(6))
    write(root, "named.conf", "options {\n    directory \"" + root + "\";\n    recursion no;\n"
          "    listen-on port 53 { 127.0.0.1; };\n    allow-transfer { none; }\n    dnssec-validaton auto;\n};\n\n"
          + zones + "zone \"site2.example\" {\n    type secondary;\n    primaries { 192.0.2.1; };\n};\n")
    return Run(["named-checkconf", "named.conf"], [
        S("stdout", r"^named\.conf:6: missing ';' before 'dnssec-validaton'$", "the first error"),
        S("stdout", r"^named\.conf:6: unknown option 'dnssec-validaton'$", "the second"),
    ], expect_exit=exits(1))


@recipe("dhcpd-test-config-error", "dhcpd", "service", ["dhcpd", "--version"], needs=("dhcpd",))
def _dhcpd(root):
    """Write the `dhcpd-test-config-error` project under `root`; return its command and signals."""
    hosts = "".join(f"host printer{n:02d} {{\n  hardware ethernet 02:00:00:00:01:{n:02x};\n"
                    f"  fixed-address 192.168.10.{50 + n};\n}}\n" for n in range(12))
    write(root, "dhcpd.conf", "default-lease-time 600;\nmax-lease-time 7200;\nauthoritative;\n\n"
          "subnet 192.168.10.0 netmask 255.255.255.0 {\n  range 192.168.10.100 192.168.10.200;\n"
          "  option routers 192.168.10.1;\n  option domain-name-servers 192.168.10.2\n"
          "  option domain-name \"office.example\";\n}\n\n" + hosts)
    return Run(["dhcpd", "-t", "-cf", "dhcpd.conf"], [
        S("stderr", r"^dhcpd\.conf line 9: ", "the error and its line"),
        S("stderr", r"^Configuration file errors encountered -- exiting$", "the verdict"),
    ], expect_exit=exits(1))


# --- btrfs check: a disk image built from a config tree; one metadata block was damaged ----------------

@recipe("btrfs-check-damaged-image", "btrfs", "system", ["btrfs", "--version"], needs=("btrfs", "mkfs.btrfs"))
def _btrfs(root):
    """Write the `btrfs-check-damaged-image` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"rootfs/etc/app/conf_{n:03d}.cfg", f"setting {n}\n")
    with open(os.path.join(root, "disk.img"), "wb") as handle:
        handle.truncate(256 * 1024 * 1024)
    sh(["mkfs.btrfs", "-q", "-m", "single", "--rootdir", "rootfs", "disk.img"], root)
    with open(os.path.join(root, "disk.img"), "r+b") as handle:
        data = handle.read()
        handle.seek(data.find(b"conf_150.cfg") + 5)
        handle.write(b"X")
    return Run(["btrfs", "check", "disk.img"], [
        S("stderr", r"^checksum verify failed on \d+ wanted 0x[0-9a-f]+ found 0x[0-9a-f]+$", "the damaged block, each time it is read"),
        S("stderr", r"^root \d+ inode \d+ errors 200, dir isize wrong$", "the directory whose entries are lost"),
        S("stderr", r"^ERROR: errors found in ", "the verdicts"),
        S("stdout", r"^found \d+ bytes used, error\(s\) found$", "the summary"),
        S("stdout", r"^The following tree block\(s\) is corrupted in tree \d+:$", "the damage"),
    ], expect_exit=exits(1))


# --- pwck: checking a container image's account files; three broken entries among 300 service accounts --

@recipe("pwck-image-accounts", "pwck", "system", ["dpkg-query", "-W", "-f", "${Version}\\n", "passwd"], needs=("pwck",))
def _pwck(root):
    """Write the `pwck-image-accounts` project under `root`; return its command and signals."""
    image = os.path.join(root, "image")
    passwd, shadow, group = ["root:x:0:0:root:/root:/bin/bash"], ["root:*:19000:0:99999:7:::"], ["root:x:0:"]
    os.makedirs(os.path.join(image, "root"))
    write(image, "bin/bash", "")
    write(image, "usr/sbin/nologin", "")
    for n in range(300):
        name = f"svc{n:03d}"
        if n % 5 == 0:
            os.makedirs(os.path.join(image, "srv", name))
        passwd.append(f"{name}:x:{2000 + n}:{2000 + n if n != 211 else 4242}:Service {n}:/srv/{name}:/usr/sbin/nologin")
        if n != 262:
            shadow.append(f"{name}:!:19000::::::")
        group.append(f"{name}:x:{2000 + n}:")
    passwd.insert(150, "backup-agent:x:900:900:Backup:/var/backups")
    passwd.append("svc010:x:3010:2010:Service 10 (old):/srv/svc010:/usr/sbin/nologin")
    for rel, lines in (("etc/passwd", passwd), ("etc/shadow", shadow), ("etc/group", group)):
        write(image, rel, "\n".join(lines) + "\n")
    return Run(["pwck", "-r", "-R", image], [
        S("stdout", r"^(duplicate|invalid) password file entry$", "the broken entries"),
        S("stdout", r"^delete line '(svc010|backup-agent):", "which lines"),
        S("stdout", r"^user 'svc211': no group 4242$", "the account without its group"),
        S("stdout", r"^no matching password file entry in /etc/shadow$", "the account without a shadow entry"),
        S("stdout", r"^add user 'svc262' in /etc/shadow\? No$", "which one"),
    ], expect_exit=exits(2))


@recipe("netplan-generate-bad-value", "netplan", "network", ["dpkg-query", "-W", "-f", "${Version}\\n", "netplan.io"],
        needs=("netplan",))
def _netplan(root):
    """Write the `netplan-generate-bad-value` project under `root`; return its command and signals."""
    write(root, "etc/netplan/01-office.yaml", "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n"
          "    eno1:\n      dhcp4: false\n      addresses: [192.168.10.5/24]\n      routes:\n        - to: default\n"
          "          via: 192.168.10.1\n      nameservers:\n        addresses: [192.168.10.2]\n    eno2:\n"
          "      dhcp4: maybe\n  bridges:\n    br0:\n      interfaces: [eno2]\n", mode=0o600)
    return Run(["netplan", "generate", "--root-dir", "."], [
        S("stderr", r"01-office\.yaml:14:\d+: Error in network definition: invalid boolean value 'maybe'$", "the error and its place"),
    ], expect_exit=exits(1))


@recipe("sgdisk-verify-bad-table-crc", "sgdisk", "system", ["sgdisk", "--version"], needs=("sgdisk",))
def _sgdisk(root):
    """Write the `sgdisk-verify-bad-table-crc` project under `root`; return its command and signals."""
    with open(os.path.join(root, "disk.img"), "wb") as handle:
        handle.truncate(64 * 1024 * 1024)
    sh(["sgdisk", "-n1:2048:+16M", "-t1:ef00", "-c1:EFI", "-n2:0:+20M", "-c2:root", "-n3:0:0", "-c3:data", "disk.img"], root)
    with open(os.path.join(root, "disk.img"), "r+b") as handle:
        handle.seek(1024 + 128 + 40)
        handle.write(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    return Run(["sgdisk", "-v", "disk.img"], [
        S("stdout", r"^Problem: The CRC for the main partition table is invalid\.", "the problem"),
        S("stdout", r"^Identified 1 problems!$", "the count"),
        S("stderr", r"^Main partition table: ERROR$", "the damaged table"),
        S("stderr", r"Warning! Main partition table CRC mismatch! Loaded backup partition table$",
          "what was loaded instead (after a bell character)"),
    ], expect_exit=exits(0))


# --- guilt: pushing a 240-patch queue onto a rebased branch; one patch no longer applies ---------------

_GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.org", "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.org", "GIT_AUTHOR_DATE": "2024-03-01T12:00:00Z",
            "GIT_COMMITTER_DATE": "2024-03-01T12:00:00Z", "GIT_CONFIG_GLOBAL": "/dev/null"}


@recipe("guilt-push-all-one-fails", "guilt", "vcs", ["guilt", "--version"], needs=("guilt", "git"))
def _guilt(root):
    """Write the `guilt-push-all-one-fails` project under `root`; return its command and signals."""
    for n in range(240):
        write(root, f"conf/unit_{n:03d}.conf", f"name=unit{n}\nreplicas=1\nlog=info\n")
    sh("git init -q -b main && git add -A && git commit -q -m 'Import unit configs' && guilt init", root, env=_GIT_ENV)
    series = []
    for n in range(240):
        old = "log=info" if n != 173 else "log=warn"
        name = f"{n:03d}-unit-{n}-replicas.patch"
        series.append(name)
        write(root, f".git/patches/main/{name}", f"Scale unit {n}\n\n---\n--- a/conf/unit_{n:03d}.conf\n"
              f"+++ b/conf/unit_{n:03d}.conf\n@@ -1,3 +1,3 @@\n name=unit{n}\n-replicas=1\n+replicas=3\n {old}\n")
    write(root, ".git/patches/main/series", "\n".join(series) + "\n")
    return Run(["guilt", "push", "-a"], [
        S("stderr", r"^error: patch failed: conf/unit_173\.conf:1$", "the failed patch's file"),
        S("stderr", r"^error: conf/unit_173\.conf: patch does not apply$", "the error"),
        S("stdout", r"^Applying patch\.\.173-unit-173-replicas\.patch$", "which patch"),
    ], env=_GIT_ENV, expect_exit=exits(1))


# --- pflogsumm: a day's report of a mail relay's log; one fatal error and rejects among 1,400 messages ---

def _maillog() -> str:
    """A postfix log: 1,400 delivered messages from 120 senders to 300 recipients, some relay rejects, a
    few deferrals, one smtpd fatal error on a missing lookup table."""
    lines = []
    for n in range(1400):
        ts = f"Jun  3 {n * 61 // 3600:02d}:{n * 61 // 60 % 60:02d}:{n * 61 % 60:02d}"
        qid, pid = f"{0x4B2C000 + n * 7:X}", 3000 + n
        sender, rcpt = f"user{n % 120}@corp.example", f"contact{n % 300}@partner{n % 25}.example"
        client = f"app{n % 6}.corp.example[10.1.0.{10 + n % 6}]"
        lines += [f"{ts} mx1 postfix/smtpd[{pid}]: connect from {client}",
                  f"{ts} mx1 postfix/smtpd[{pid}]: {qid}: client={client}",
                  f"{ts} mx1 postfix/cleanup[{pid + 1}]: {qid}: message-id=<{n}.{qid}@corp.example>",
                  f"{ts} mx1 postfix/qmgr[900]: {qid}: from=<{sender}>, size={2000 + n % 700 * 13}, nrcpt=1 (queue active)"]
        if n % 97 == 13:
            lines.append(f"{ts} mx1 postfix/smtp[{pid + 2}]: {qid}: to=<{rcpt}>, relay=none, delay=30, "
                         f"delays=0.1/0/30/0, dsn=4.4.1, status=deferred (connect to mx.partner{n % 25}.example"
                         f"[198.51.100.{n % 25}]:25: Connection timed out)")
        else:
            lines.append(f"{ts} mx1 postfix/smtp[{pid + 2}]: {qid}: to=<{rcpt}>, relay=mx.partner{n % 25}.example"
                         f"[198.51.100.{n % 25}]:25, delay=0.4, delays=0.1/0/0.1/0.2, dsn=2.0.0, status=sent (250 2.0.0 Ok)")
            lines.append(f"{ts} mx1 postfix/qmgr[900]: {qid}: removed")
        lines.append(f"{ts} mx1 postfix/smtpd[{pid}]: disconnect from {client} ehlo=1 mail=1 rcpt=1 data=1 quit=1 commands=5")
        if n % 200 == 77:
            lines.append(f"{ts} mx1 postfix/smtpd[{pid + 5}]: NOQUEUE: reject: RCPT from unknown[203.0.113.{n % 50}]: "
                         "554 5.7.1 <victim@elsewhere.example>: Relay access denied; from=<spam@bulk.example> "
                         "to=<victim@elsewhere.example> proto=ESMTP helo=<bulk.example>")
        if n == 911:
            lines.append(f"{ts} mx1 postfix/smtpd[{pid + 6}]: fatal: open database /etc/postfix/sender_access.db: "
                         "No such file or directory")
    return "\n".join(lines) + "\n"


@recipe("pflogsumm-relay-day-report", "pflogsumm", "log", ["dpkg-query", "-W", "-f", "${Version}\\n", "pflogsumm"],
        needs=("pflogsumm",))
def _pflogsumm(root):
    """Write the `pflogsumm-relay-day-report` project under `root`; return its command and signals."""
    write(root, "log/mail.log", _maillog())
    return Run(["pflogsumm", "log/mail.log"], [
        S("stdout", r"^Fatal Errors$", "the section of the one fatal error"),
        S("stdout", r"^\s+1\s+open database /etc/postfix/sender_access\.db: No such file", "the fatal error (cut by the report)"),
        S("stdout", r"^\s+Relay access denied \(total: 7\)$", "the rejects"),
        S("stdout", r"^\s+15\s+25: Connection timed out$", "the deferrals' cause"),
    ], expect_exit=exits(0))
