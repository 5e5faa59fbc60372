"""Swathed recipes for VCS, service config checks, system, storage, network-config and data tools, listings and
logs: git-annex, bzip2, GNU parallel, zip, knotc, doveconf, nft, ifup, logwatch, genisoimage, hashdeep, git-lfs.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import bz2
import os

from swathed_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "git-annex": "10.20230126-3", "bzip2": "1.0.8-5+b1", "parallel": "20221122+ds-2", "zip": "3.0-13+deb12u1",
    "knot": "3.2.6-1", "dovecot-core": "1:2.3.19.1+dfsg1-2.1+deb12u7", "nftables": "1.0.6-2+deb12u2",
    "ifupdown": "0.8.41", "logwatch": "7.7-1", "genisoimage": "9:1.1.11-3.4",
    "hashdeep": "4.4-7.1+b1", "git-lfs": "3.3.0-1+deb12u2",
}


def _debver(package: str) -> list[str]:
    """A version command for a Debian package whose tool prints no plain version of its own."""
    return ["dpkg-query", "-W", "-f=${Version}\n", package]


def _log_line(day: int, n: int) -> str:
    """One line of a service's event log."""
    return (f"2024-05-{day:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z INFO request id={day * 100000 + n} "
            f"path=/api/v1/items/{n % 997} status=200 duration_ms={n % 83 + 4}\n")


# --- git annex fsck: a data set of 1,400 annexed samples; one object's content was overwritten ---------

@recipe("git-annex-fsck-one-bad-content", "git-annex", "vcs", ["git-annex", "version", "--raw"], needs=("git-annex",))
def _git_annex(root):
    """Write the `git-annex-fsck-one-bad-content` project under `root`; return its command and signals."""
    for n in range(1400):
        rows = "".join(f"{n},{k},{(n * 31 + k * 7) % 1000 / 10:.1f}\n" for k in range(20))
        write(root, f"data/samples/sample-{n:04d}.csv", "sample,reading,value\n" + rows)
    sh("git init -q && git config user.name 'Sam Field' && git config user.email sam@example.org && "
       "git annex init -q laptop && git annex add -q data && git commit -q -m 'Add the samples'", root)
    key = sh("git annex lookupkey data/samples/sample-0877.csv", root).stdout.decode().strip()
    where = sh(f"git annex contentlocation {key}", root).stdout.decode().strip()
    sh(f"chmod u+w $(dirname {where}) {where} && printf 'sample,reading,value\\n877,0,0.0\\n' > {where}", root)
    return Run(["git", "annex", "fsck"], [
        S("stdout", r"fsck data/samples/sample-0877\.csv ", "the file whose check failed"),
        S("stdout", r"^failed$", "its result"),
        S("stderr", r"sample-0877\.csv: Bad file", "what was wrong with it"),
        S("stderr", r"No known copies exist of data/samples/sample-0877\.csv", "that the data is lost"),
        S("stderr", r"fsck: 1 failed", "the totals"),
    ], expect_exit=exits(1))


# --- bzip2 -tv: a month of archived logs, 6,200 files; one was truncated in a copy ---------------------

@recipe("bzip2-test-log-archive-one-crc-error", "bzip2", "storage", _debver("bzip2"), needs=("bzip2",))
def _bzip2(root):
    """Write the `bzip2-test-log-archive-one-crc-error` project under `root`; return its command and signals."""
    for day in range(1, 32):
        os.makedirs(os.path.join(root, f"archive/2024-05-{day:02d}"))
        for hour in range(200):
            text = "".join(_log_line(day, hour * 60 + k) for k in range(12))
            data = bz2.compress(text.encode())
            if (day, hour) == (19, 137):
                data = data[: len(data) // 2] + bytes(b ^ 0x5A for b in data[len(data) // 2: len(data) // 2 + 8]) \
                    + data[len(data) // 2 + 8:]
            with open(os.path.join(root, f"archive/2024-05-{day:02d}/events-{hour:03d}.log.bz2"), "wb") as out:
                out.write(data)
    return Run(["bzip2", "-tv", "archive/*/*.bz2"], [
        S("stderr", r"2024-05-19/events-137\.log\.bz2: (?!ok$)", "the damaged archive among 6,200"),
    ], command="bzip2 -tv archive/*/*.bz2", expect_exit=exits(2))


# --- parallel: summarising 3,000 CSV shards two at a time; one shard has a row that is not a number -----

_SUMMARIZE_SH = """\
#!/bin/sh
# summarize SHARD: count the rows of one shard and total its amounts.
awk -F, -v shard="$1" '
NR == 1 { next }
$3 !~ /^[0-9]+(\\.[0-9]+)?$/ { printf "summarize: %s line %d: amount \\"%s\\" is not a number\\n", shard, NR, $3 > "/dev/stderr"; bad = 1; exit 1 }
{ rows++; total += $3 }
END { if (!bad) { printf "%s: %d rows read, %d accepted\\n%s: total amount %.2f EUR\\n", shard, rows, rows, shard, total } }
' "$1"
"""


@recipe("parallel-shards-halt-on-failure", "parallel", "system", ["parallel", "--version"], needs=("parallel",))
def _parallel(root):
    """Write the `parallel-shards-halt-on-failure` project under `root`; return its command and signals."""
    write(root, "summarize.sh", _SUMMARIZE_SH, mode=0o755)
    for n in range(3000):
        rows = [f"{n}-{k},customer-{(n + k) % 501},{(n * 13 + k * 7) % 900 + 0.5}\n" for k in range(12)]
        if n == 2950:
            rows[6] = f"{n}-6,customer-{(n + 6) % 501},N/A\n"
        write(root, f"shards/shard-{n:05d}.csv", "id,customer,amount\n" + "".join(rows))
    return Run(["parallel", "-k", "--halt", "soon,fail=1", "./summarize.sh", ":::", "shards/*.csv"], [
        S("stderr", r"shard-02950\.csv line \d+: amount \"N/A\" is not a number", "the failing job's own error"),
        S("stderr", r"^parallel: This job failed:", "parallel's report of it"),
        S("stderr", r"^\./summarize\.sh shards/shard-02950\.csv$", "the failed command"),
    ], command="parallel -k --halt soon,fail=1 ./summarize.sh ::: shards/*.csv", expect_exit=exits(1))


# --- zip -r: packaging a static site of 4,800 files for release; the changelog named on the line is missing

@recipe("zip-release-site-name-not-matched", "zip", "storage", _debver("zip"), needs=("zip",))
def _zip(root):
    """Write the `zip-release-site-name-not-matched` project under `root`; return its command and signals."""
    for n in range(1600):
        section = ("guide", "api", "blog", "news")[n % 4]
        write(root, f"build/{section}/page-{n:04d}/index.html", f"<!doctype html><title>Page {n}</title>\n"
              + f"<p>Section {section}, page {n}: how the release pipeline handles stage {n % 37}.</p>\n" * (n % 9 + 3))
        write(root, f"build/{section}/page-{n:04d}/data.json", f'{{"page": {n}, "section": "{section}"}}\n')
        write(root, f"build/assets/img/figure-{n:04d}.svg", f"<svg xmlns='http://www.w3.org/2000/svg'><circle r='{n % 40}'/></svg>\n")
    write(root, "LICENSE", "MIT License\n\nCopyright (c) 2024 The Site Authors\n")
    return Run(["zip", "-r", "release.zip", "build", "LICENSE", "docs/CHANGELOG.md"], [
        S("stdout", r"zip warning: name not matched: docs/CHANGELOG\.md", "the file that was left out"),
    ], expect_exit=exits(12, 0))


# --- knotc conf-check: an authoritative server's 60 zones; one zone names an ACL that is not defined ----

def _knot_conf() -> str:
    """A Knot DNS configuration of 60 zones sharing a transfer ACL; zone 37 misspells it."""
    zones = "".join(f"  - domain: example-{n:03d}.org\n    notify: secondary1\n    "
                    f"acl: {'allow-transfr' if n == 37 else 'allow-transfer'}\n" for n in range(60))
    return ("server:\n    listen: 127.0.0.1@5353\n\nlog:\n  - target: stderr\n    any: info\n\nkey:\n"
            "  - id: transfer-key\n    algorithm: hmac-sha256\n    secret: Wm9uZSB0cmFuc2ZlciBrZXkgZm9yIHRlc3RzIG9ubHk=\n\n"
            "remote:\n  - id: secondary1\n    address: 192.0.2.10\n    key: transfer-key\n\n"
            "acl:\n  - id: allow-transfer\n    address: 192.0.2.10\n    key: transfer-key\n    action: transfer\n\n"
            "template:\n  - id: default\n    storage: /var/lib/knot\n    file: \"%s.zone\"\n\nzone:\n" + zones)


@recipe("knotc-conf-check-undefined-acl", "knotc", "config-check", ["knotc", "--version"], needs=("knotc",))
def _knotc(root):
    """Write the `knotc-conf-check-undefined-acl` project under `root`; return its command and signals."""
    write(root, "knot.conf", _knot_conf())
    return Run(["knotc", "-c", "knot.conf", "conf-check"], [
        S("stderr", r"allow-transfr", "the misspelt reference and where it is"),
        S("stderr", r"^error: failed to load configuration file", "the check's failure"),
    ], expect_exit=lambda code: code != 0)


# --- doveconf -n: a mail server's configuration; one setting name is misspelt -------------------------

@recipe("doveconf-unknown-setting", "doveconf", "config-check", ["dovecot", "--version"], needs=("doveconf",))
def _doveconf(root):
    """Write the `doveconf-unknown-setting` project under `root`; return its command and signals."""
    write(root, "dovecot.conf", "protocols = imap lmtp\nlisten = 127.0.0.1\nbase_dir = /tmp/dovecot-run\n"
          "ssl = no\ndisable_plaintext_auth = no\nauth_mechanisms = plain login\n"
          "mail_loaction = maildir:~/Maildir\nmail_privileged_group = mail\nfirst_valid_uid = 1000\n"
          "namespace inbox {\n  inbox = yes\n  mailbox Drafts {\n    special_use = \\Drafts\n  }\n"
          "  mailbox Sent {\n    special_use = \\Sent\n  }\n}\npassdb {\n  driver = passwd-file\n"
          "  args = /etc/dovecot/users\n}\nuserdb {\n  driver = passwd-file\n  args = /etc/dovecot/users\n}\n")
    return Run(["doveconf", "-n", "-c", "dovecot.conf"], [
        S("stderr", r"Unknown setting: mail_loaction", "the error and its line"),
    ], expect_exit=lambda code: code != 0)


# --- nft -c: a host firewall of 90 rules checked before loading; one verdict is misspelt ---------------

@recipe("nft-check-firewall-syntax-error", "nft", "network-config", ["nft", "--version"], needs=("nft",))
def _nft(root):
    """Write the `nft-check-firewall-syntax-error` project under `root`; return its command and signals."""
    rules = "".join(f"    ip saddr 198.51.100.{n} tcp dport {8000 + n} {'acept' if n == 61 else 'accept'}\n"
                    for n in range(90))
    write(root, "firewall.nft", "flush ruleset\n\ntable inet filter {\n  set blocklist {\n    type ipv4_addr\n"
          "    elements = { 203.0.113.5, 203.0.113.9 }\n  }\n\n  chain input {\n"
          "    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n"
          "    iif lo accept\n    ip saddr @blocklist drop\n    tcp dport { 22, 80, 443 } accept\n" + rules
          + "  }\n\n  chain forward {\n    type filter hook forward priority 0; policy drop;\n  }\n}\n")
    return Run(["nft", "-c", "-f", "firewall.nft"], [
        S("stderr", r"^firewall\.nft:\d+:\d+-\d+: Error:", "the error and its place"),
        S("stderr", r"tcp dport 8061 acept", "the rule it is in"),
    ], expect_exit=exits(1))


# --- ifup --no-act: a router's interfaces file of 24 stanzas; one method is misspelt -----------------

@recipe("ifup-no-act-unknown-method", "ifup", "network-config", ["ifup", "--version"], needs=("ifup",))
def _ifup(root):
    """Write the `ifup-no-act-unknown-method` project under `root`; return its command and signals."""
    stanzas = ["auto lo\niface lo inet loopback\n\n"]
    for n in range(24):
        method = "dchp" if n == 17 else ("dhcp" if n % 3 == 0 else "static")
        body = "" if method != "static" else f"    address 10.{n}.0.1/24\n    mtu 1500\n"
        stanzas.append(f"auto vlan{100 + n}\niface vlan{100 + n} inet {method}\n    vlan-raw-device eth0\n{body}\n")
    write(root, "interfaces", "".join(stanzas))
    os.makedirs(os.path.join(root, "state"))
    return Run(["ifup", "--no-act", "-a", "-i", "interfaces", "--state-dir", "state"], [
        S("stderr", r"interfaces:\d+: unknown or no method", "the error and its line"),
        S("stderr", r"couldn't read interfaces file", "why nothing was done"),
    ], expect_exit=lambda code: code != 0)


# --- logwatch: a bastion host's auth log of a week; a burst of failed root logins from one address ------

def _auth_log() -> str:
    """A week of sshd and sudo lines: routine key logins, and one address guessing passwords on day 5."""
    lines = []
    for n in range(9000):
        day, sec = 1 + n // 1300, (n * 67) % 86400
        stamp = f"May  {day} {sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d} bastion"
        user = ("deploy", "alice", "bob", "carol", "backup")[n % 5]
        lines.append(f"{stamp} sshd[{2000 + n}]: Accepted publickey for {user} from 10.0.{n % 7}.{n % 200 + 1} port "
                     f"{40000 + n % 20000} ssh2: ED25519 SHA256:k{n % 5}Zr9xQ\n")
        if n % 9 == 0:
            lines.append(f"{stamp} sudo:    {user} : TTY=pts/{n % 4} ; PWD=/home/{user} ; USER=root ; "
                         f"COMMAND=/usr/bin/systemctl restart app@{n % 6}\n")
        if 5200 <= n < 5240:
            lines.append(f"{stamp} sshd[{9000 + n}]: Failed password for root from 203.0.113.77 port {50000 + n} ssh2\n")
    return "".join(lines)


@recipe("logwatch-sshd-failed-root-logins", "logwatch", "log", ["logwatch", "--version"], needs=("logwatch",))
def _logwatch(root):
    """Write the `logwatch-sshd-failed-root-logins` project under `root`; return its command and signals."""
    write(root, "logs/auth.log", _auth_log())
    return Run(["logwatch", "--logdir", "logs", "--range", "All", "--detail", "High", "--service", "sshd",
                "--service", "sudo", "--output", "stdout"], [
        S("stdout", r"^\s*Failed logins from:$", "the heading of the failures"),
        S("stdout", r"203\.0\.113\.77", "the address that guessed passwords"),
        S("stdout", r"^\s*root/password: 40 Times$", "the account it guessed"),
    ], expect_exit=exits(0))


# --- genisoimage: a documentation site mastered with Joliet names; two long names collide ---------------

@recipe("genisoimage-joliet-name-collision", "genisoimage", "storage", ["genisoimage", "--version"],
        needs=("genisoimage",))
def _genisoimage(root):
    """Write the `genisoimage-joliet-name-collision` project under `root`; return its command and signals."""
    for n in range(900):
        write(root, f"site/chapter-{n // 30:02d}/section-{n:04d}.html", f"<h1>Section {n}</h1>\n" * 40)
    long = "migration-guide-from-the-legacy-configuration-format-to-the-new-one"
    write(root, f"site/guides/{long}-part-one.html", "<h1>Part one</h1>\n")
    write(root, f"site/guides/{long}-part-two.html", "<h1>Part two</h1>\n")
    return Run(["genisoimage", "-v", "-J", "-r", "-V", "DOCS", "-o", "docs.iso", "site"], [
        S("stderr", r"have the same Joliet name", "the collision"),
        S("stderr", r"Joliet tree sort failed", "why the image was not written"),
    ], expect_exit=lambda code: code != 0)


# --- hashdeep -a: auditing a photo archive of 2,400 files against last month's manifest; all match ---

@recipe("hashdeep-audit-photo-archive-passed", "hashdeep", "storage", ["hashdeep", "-V"], needs=("hashdeep",))
def _hashdeep(root):
    """Write the `hashdeep-audit-photo-archive-passed` project under `root`; return its command and signals."""
    for n in range(2400):
        write(root, f"photos/{2015 + n // 300}/IMG_{n:05d}.txt", f"frame {n} exposure {n % 60}\n" * (n % 50 + 1))
    sh("hashdeep -r -l photos > known.txt", root)
    return Run(["hashdeep", "-r", "-l", "-a", "-vv", "-k", "known.txt", "photos"], [
        S("stdout", r"^hashdeep: Audit passed", "the verdict"),
        S("stdout", r"^\s*Files matched: 2400$", "how many files it covered"),
    ], expect_exit=exits(0))


# --- git lfs fsck: a model repository of 300 LFS files; one stored object was overwritten --------------

@recipe("git-lfs-fsck-corrupt-object", "git-lfs", "vcs", ["git-lfs", "version"], needs=("git-lfs",))
def _git_lfs(root):
    """Write the `git-lfs-fsck-corrupt-object` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"models/layer-{n:03d}.bin", f"weights {n} " * (200 + n))
    sh("git init -q && git config user.name 'Mo Del' && git config user.email mo@example.org && "
       "git lfs install --local >/dev/null && git lfs track '*.bin' >/dev/null && git add -A && "
       "git commit -q -m 'Add the model layers'", root)
    oid = sh("git lfs ls-files -l | grep 'layer-211.bin' | cut -d' ' -f1", root).stdout.decode().strip()
    write(root, f".git/lfs/objects/{oid[:2]}/{oid[2:4]}/{oid}", "truncated during copy\n")
    return Run(["git", "lfs", "fsck"], [
        S("stdout", r"layer-211\.bin", "the corrupt object's file"),
    ], expect_exit=lambda code: code != 0)
