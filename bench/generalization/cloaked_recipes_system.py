"""Cloaked recipes for VCS, services, data tools, filesystems and logs: journalctl, aureport, rclone, mr, FreeRADIUS,
Nagios, fsck.fat, xfs_repair, StGit, dnsmasq, Kea, lighttpd, rsyslogd, recfix, mdir, mcopy.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from cloaked_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "systemd-journal-remote": "252.39-1~deb12u2", "auditd": "1:3.0.9-1", "rclone": "1.60.1+dfsg-2+b5",
    "myrepos": "1.20180726", "freeradius": "3.2.1+dfsg-4+deb12u1", "xfsprogs": "6.1.0-1", "dosfstools": "4.2-1",
    "mtools": "4.0.33-1+really4.0.32-1", "stgit": "0.19-1.1", "dnsmasq": "2.90-4~deb12u2",
    "kea-dhcp4-server": "2.2.0-6", "lighttpd": "1.4.69-1", "rsyslog": "8.2302.0-1+deb12u2",
    "nagios4": "4.4.6-4+deb12u2", "recutils": "1.9-2",
}


# --- journalctl: a day of a web host's journal, read from its file; a few rare failures ----------------

_BOOT = "3f1e0c526a314f1b9a595c2d5b8c0e11"


def _journal_entry(t: int, ident: str, pid: int, prio: int, message: str) -> str:
    """One entry in the journal export format (the kernel's, pid 0, has no `_PID`)."""
    origin = f"_PID={pid}\n" if pid else "_TRANSPORT=kernel\n"
    return (f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={t - 1_699_990_000_000_000}\n_BOOT_ID={_BOOT}\n"
            f"_HOSTNAME=web01\nPRIORITY={prio}\nSYSLOG_IDENTIFIER={ident}\n{origin}MESSAGE={message}\n")


def _journal_export() -> str:
    """About 1,700 entries: requests, charges, timers; one failed charge, one OOM kill, one unit failure."""
    entries, t = [], 1_700_000_000_000_000
    for n in range(1700):
        t += 37_000_000 + (n % 11) * 1_000_000
        kind = n % 4
        if kind == 0:
            entries.append(_journal_entry(t, "api-gateway", 640, 6, f"GET /api/v2/orders/{4000 + n} 200 {12 + n % 30}ms"))
        elif kind == 1:
            entries.append(_journal_entry(t, "billing-worker", 812, 6, f"charge {9000 + n} settled in {40 + n % 17} ms"))
        elif kind == 2:
            entries.append(_journal_entry(t, "cache-warmer", 1290, 6, f"warmed {n % 64} keys for shard {n % 8}"))
        else:
            entries.append(_journal_entry(t, "systemd", 1, 6, "Finished logrotate.service - Rotate log files."
                                          if n % 40 == 3 else f"Started session-{n}.scope - Session {n} of User deploy."))
        if n == 611:
            entries.append(_journal_entry(t + 1, "billing-worker", 812, 3,
                                          "charge 9611 failed: card processor returned HTTP 502 after 3 retries"))
        if n == 1204:
            entries.append(_journal_entry(t + 1, "kernel", 0, 3,
                                          "Out of memory: Killed process 2231 (report-builder) total-vm:8123400kB, "
                                          "anon-rss:6011224kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:12044kB oom_score_adj:0"))
            entries.append(_journal_entry(t + 2, "systemd", 1, 4,
                                          "report-builder.service: Main process exited, code=killed, status=9/KILL"))
            entries.append(_journal_entry(t + 3, "systemd", 1, 4,
                                          "report-builder.service: Failed with result 'oom-kill'."))
    return "\n".join(entries) + "\n"


@recipe("journalctl-file-rare-failures", "journalctl", "log", ["journalctl", "--version"],
        needs=("journalctl",))
def _journalctl(root):
    """Write the `journalctl-file-rare-failures` project under `root`; return its command and signals."""
    write(root, "export.txt", _journal_export())
    os.makedirs(os.path.join(root, "logs"))
    sh(["/lib/systemd/systemd-journal-remote", "--output=" + os.path.join(root, "logs/web01.journal"), "export.txt"],
       root)
    return Run(["journalctl", "--file=logs/web01.journal", "--no-pager"], [
        S("stdout", r"billing-worker\[812\]: charge 9611 failed: card processor returned HTTP 502", "the one failed charge"),
        S("stdout", r"kernel: Out of memory: Killed process 2231 \(report-builder\)", "the OOM kill"),
        S("stdout", r"systemd\[1\]: report-builder\.service: Main process exited, code=killed, status=9/KILL$", "the unit died"),
        S("stdout", r"systemd\[1\]: report-builder\.service: Failed with result 'oom-kill'\.$", "the unit's failure"),
    ], expect_exit=exits(0))


# --- aureport: a month of deploy logins from the audit log, three failed --------------------------------

def _audit_log() -> str:
    """Login and syscall records of a deploy account; three logins from an unknown host fail."""
    lines, t = [], 1_698_800_000
    for n in range(1900):
        t += 1300 + (n % 7) * 60
        failed = n in (733, 734, 1522)
        host = "203.0.113.77" if failed else f"198.51.100.{10 + n % 4}"
        res = "failed" if failed else "success"
        lines.append(f"type=USER_LOGIN msg=audit({t}.{n % 1000:03d}:{50000 + 2 * n}): pid={3000 + n} uid=0 "
                     f"auid=4001 ses={n + 10} msg='op=login id=4001 exe=\"/usr/sbin/sshd\" hostname={host} "
                     f"addr={host} terminal=ssh res={res}'")
        lines.append(f"type=SYSCALL msg=audit({t + 2}.{n % 1000:03d}:{50001 + 2 * n}): arch=c000003e syscall=59 "
                     f"success=yes exit=0 a0=55d0 a1=55d1 a2=55d2 a3=0 items=2 ppid={3000 + n} pid={3100 + n} "
                     f"auid=4001 uid=4001 gid=4001 euid=4001 suid=4001 fsuid=4001 egid=4001 sgid=4001 fsgid=4001 "
                     f"tty=(none) ses={n + 10} comm=\"deploy.sh\" exe=\"/usr/bin/bash\" key=\"deploy-exec\"")
    return "\n".join(lines) + "\n"


@recipe("aureport-logins-three-failed", "aureport", "log", ["aureport", "-v"], needs=("aureport",))
def _aureport(root):
    """Write the `aureport-logins-three-failed` project under `root`; return its command and signals."""
    write(root, "audit/audit.log", _audit_log())
    return Run(["aureport", "-if", "audit/audit.log", "--login"], [
        S("stdout", r"^\d+\. \S+ \S+ 4001 203\.0\.113\.77 ssh /usr/sbin/sshd no \d+$", "the three failed logins among 1,900"),
    ], expect_exit=exits(0))


# --- rclone: copying a site's assets with --copy-links; one link dangles -------------------------------

@recipe("rclone-copy-dangling-link", "rclone", "system", ["rclone", "version"], needs=("rclone",))
def _rclone(root):
    """Write the `rclone-copy-dangling-link` project under `root`; return its command and signals."""
    for n in range(900):
        write(root, f"site/assets/{['img', 'css', 'js', 'fonts'][n % 4]}/asset_{n:04d}.dat", f"asset {n}\n" * (n % 9 + 1))
    os.symlink("../../shared/brand/logo-2023.svg", os.path.join(root, "site/assets/img/logo.svg"))
    write(root, "rclone.conf", "")
    return Run(["rclone", "copy", "--copy-links", "-v", "site", "backup/site"], [
        S("stderr", r"ERROR : assets/img/logo\.svg: Listing error: symlink: stat .*: no such file or directory$", "the error"),
        S("stderr", r"ERROR : Can't retry any of the errors - not attempting retries$", "no retry"),
        S("stderr", r"^Errors:\s+1 \(no need to retry\)$", "the error count"),
        S("stderr", r"^Transferred:\s+900 / 900, 100%$", "the file count"),
        S("stderr", r"Failed to copy: symlink: stat ", "the verdict"),
    ], env={"RCLONE_CONFIG": os.path.join(root, "rclone.conf")}, expect_exit=exits(6))


# --- mr (myrepos): updating 24 checkouts; one has local edits the pull would overwrite -----------------

_GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.org", "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.org", "GIT_AUTHOR_DATE": "2024-03-01T12:00:00Z",
            "GIT_COMMITTER_DATE": "2024-03-01T12:00:00Z", "GIT_CONFIG_GLOBAL": "/dev/null"}


def _mr_repos(root: str, count: int) -> None:
    """Origins with twelve modules each, clones of them, then two more commits upstream; clone 13 edits a
    module upstream also changes."""
    for n in range(count):
        origin, clone = f"origin/svc{n:02d}", f"checkouts/svc{n:02d}"
        for k in range(12):
            write(root, f"{origin}/src/module{k}.py", f"VERSION = 1\nNAME = 'svc{n:02d}.module{k}'\n")
        sh(f"git -c init.defaultBranch=main init -q {origin} && git -C {origin} add -A"
           f" && git -C {origin} commit -q -m 'initial' && git clone -q {origin} {clone}", root, env=_GIT_ENV)
        for step in (2, 3):
            for k in range(12):
                write(root, f"{origin}/src/module{k}.py", f"VERSION = {step}\nNAME = 'svc{n:02d}.module{k}'\n")
            sh(f"git -C {origin} commit -q -am 'bump to {step}'", root, env=_GIT_ENV)
    write(root, "checkouts/svc13/src/module4.py", "VERSION = 1\nNAME = 'svc13.module4'\nDEBUG = True\n")
    write(root, ".mrconfig", "".join(f"[checkouts/svc{n:02d}]\ncheckout = git clone ../origin/svc{n:02d} svc{n:02d}\n\n"
                                      for n in range(count)))


@recipe("mr-update-local-changes", "mr", "vcs", ["dpkg-query", "-W", "-f", "${Version}\\n", "myrepos"], needs=("mr", "git"))
def _mr(root):
    """Write the `mr-update-local-changes` project under `root`; return its command and signals."""
    _mr_repos(root, 40)
    return Run(["mr", "update"], [
        S("stderr", r"^error: Your local changes to the following files would be overwritten by merge:$", "the error"),
        S("stderr", r"^\tsrc/module4\.py$", "the file in the way"),
        S("stderr", r"^mr update: command failed$", "mr's failure"),
        S("stdout", r"^mr update: /.*/checkouts/svc13$", "the checkout it happened in"),
        S("stdout", r"^mr update: finished \(39 ok; 1 failed\)$", "the verdict"),
    ], env={**_GIT_ENV, "HOME": root}, expect_exit=exits(1))


# --- FreeRADIUS: checking a configuration in debug mode; the site calls a module nobody enabled ---------

@recipe("freeradius-xc-unknown-module", "freeradius", "service", ["freeradius", "-v"], needs=("freeradius",))
def _freeradius(root):
    """Write the `freeradius-xc-unknown-module` project under `root`; return its command and signals."""
    sh(["cp", "-a", "/etc/freeradius/3.0", os.path.join(root, "raddb")], root)
    clients = "".join(f"client ap-{n:02d} {{\n\tipaddr = 192.0.2.{10 + n}\n\tsecret = ap-secret-{n:02d}\n"
                      f"\tshortname = ap-{n:02d}\n}}\n\n" for n in range(12))
    with open(os.path.join(root, "raddb/clients.conf"), "a", encoding="utf-8") as handle:
        handle.write("\n" + clients)
    site = os.path.join(root, "raddb/sites-available/default")
    with open(site, encoding="utf-8") as handle:
        text = handle.read()
    with open(site, "w", encoding="utf-8") as handle:
        handle.write(text.replace("authorize {\n", "authorize {\n\trate_limit_check\n", 1))
    return Run(["freeradius", "-XC", "-d", "raddb"], [
        S("stdout", r'^raddb/sites-enabled/default\[286\]: Failed to find "rate_limit_check" as a module or policy\.$',
          "the error and its place"),
        S("stdout", r"^raddb/sites-enabled/default\[286\]: Please verify that the configuration exists in "
          r"raddb/mods-enabled/rate_limit_check\.$", "what to check"),
        S("stdout", r"^raddb/sites-enabled/default\[285\]: Errors parsing authorize section\.", "the section that failed"),
        S("stdout", r"^server default \{ # from file raddb/sites-enabled/default$", "the server being loaded"),
    ], expect_exit=exits(1))


# --- Nagios: verifying a configuration where one service names a host with a typo --------------------

def _nagios_objects() -> str:
    """Commands, a time period, a contact, 120 hosts, services on the first 80; one service names `db-O7`."""
    base = ("define command {\n  command_name check-host-alive\n  command_line /usr/lib/nagios/plugins/check_ping"
            " -H $HOSTADDRESS$ -w 3000,80% -c 5000,100% -p 1\n}\n\n"
            "define command {\n  command_name check_tcp\n  command_line /usr/lib/nagios/plugins/check_tcp"
            " -H $HOSTADDRESS$ -p $ARG1$\n}\n\n"
            "define command {\n  command_name notify-by-log\n  command_line /bin/true\n}\n\n"
            "define timeperiod {\n  timeperiod_name 24x7\n  alias always\n  sunday 00:00-24:00\n"
            "  monday 00:00-24:00\n  tuesday 00:00-24:00\n  wednesday 00:00-24:00\n  thursday 00:00-24:00\n"
            "  friday 00:00-24:00\n  saturday 00:00-24:00\n}\n\n"
            "define contact {\n  contact_name ops\n  alias Operations\n  host_notification_period 24x7\n"
            "  service_notification_period 24x7\n  host_notification_options d,u,r\n"
            "  service_notification_options w,u,c,r\n  host_notification_commands notify-by-log\n"
            "  service_notification_commands notify-by-log\n}\n\n")
    hosts = "".join(f"define host {{\n  host_name {kind}-{n:02d}\n  alias {kind} {n}\n  address 10.20.{i // 40}.{n + 10}\n"
                    f"  check_command check-host-alive\n  max_check_attempts 3\n  check_period 24x7\n"
                    f"  notification_interval 30\n  notification_period 24x7\n  contacts ops\n}}\n\n"
                    for i, (kind, n) in enumerate((k, n) for k in ("web", "db", "cache") for n in range(40)))
    services = "".join(f"define service {{\n  host_name {'db-O7' if (kind, n) == ('db', 7) else f'{kind}-{n:02d}'}\n"
                       f"  service_description tcp-{port}\n  check_command check_tcp!{port}\n  max_check_attempts 3\n"
                       f"  check_interval 5\n  retry_interval 1\n  check_period 24x7\n  notification_interval 30\n"
                       f"  notification_period 24x7\n  contacts ops\n}}\n\n"
                       for kind, port in (("web", 443), ("db", 5432)) for n in range(40))
    return base + hosts + services


@recipe("nagios4-verify-undefined-host", "nagios4", "service", ["nagios4", "--version"], needs=("nagios4",))
def _nagios(root):
    """Write the `nagios4-verify-undefined-host` project under `root`; return its command and signals."""
    write(root, "etc/objects.cfg", _nagios_objects())
    write(root, "etc/nagios.cfg", f"log_file={root}/var/nagios.log\ncfg_file={root}/etc/objects.cfg\n"
          f"object_cache_file={root}/var/objects.cache\nstatus_file={root}/var/status.dat\n"
          f"check_result_path={root}/var/spool\nlock_file={root}/var/nagios.lock\ntemp_file={root}/var/nagios.tmp\n"
          "nagios_user=root\nnagios_group=root\n")
    os.makedirs(os.path.join(root, "var/spool"))
    return Run(["nagios4", "-v", "etc/nagios.cfg"], [
        S("stdout", r"^Error: Could not find any host matching 'db-O7' \(config file '.*/etc/objects\.cfg', starting on line 2090\)$",
          "the error and its place"),
        S("stdout", r"^Error: Failed to expand host list 'db-O7' for service 'tcp-5432' ", "the service it breaks"),
        S("stdout", r"^   Error processing object config files!$", "the stage that failed"),
        S("stdout", r"^\*\*\*> One or more problems was encountered while processing the config files\.\.\.$", "the verdict"),
    ], expect_exit=exits(1))


# --- fsck.fat: a camera card's image where two files share clusters ------------------------------------

@recipe("fsck-fat-shared-clusters", "fsck.fat", "system", ["fsck.fat", "--help"], needs=("fsck.fat", "mkfs.fat", "mcopy"))
def _fsck_fat(root):
    """Write the `fsck-fat-shared-clusters` project under `root`; return its command and signals."""
    for d in range(6):
        for n in range(100):
            write(root, f"card/dcim/{100 + d}cam/img_{n:04d}.jpg", f"frame {d}-{n}\n" * (40 + n % 30))
    sh("mkfs.fat -C -i 1a2b3c4d -n CAMERA disk.img 16384 >/dev/null && mcopy -s -i disk.img card/dcim ::/", root,
       env={"MTOOLS_SKIP_CHECK": "1", "SOURCE_DATE_EPOCH": "1700000000"})
    path = os.path.join(root, "disk.img")
    with open(path, "rb") as handle:
        data = bytearray(handle.read())
    a, b = data.find(b"IMG_0041JPG"), data.find(b"IMG_0042JPG")
    data[b + 26:b + 28] = data[a + 26:a + 28]
    with open(path, "wb") as handle:
        handle.write(bytes(data))
    return Run(["fsck.fat", "-n", "-v", "-l", "disk.img"], [
        S("stdout", r"^/DCIM/103CAM/IMG_004[12]\.JPG(  and)?$", "the two files (and the second's own finding)"),
        S("stdout", r"^  share clusters\.$", "the cross-link"),
        S("stdout", r"^  File size is 572 bytes, cluster chain length is 0 bytes\.$", "the damage it means"),
        S("stdout", r"^Reclaimed 1 unused cluster \(2048 bytes\)\.$", "the lost cluster"),
        S("stdout", r"^disk\.img: 608 files, 612/8167 clusters$", "the summary"),
    ], expect_exit=exits(1))


# --- small checks: xfs_repair, stg, dnsmasq, kea-dhcp4, lighttpd, rsyslogd, recfix -------------------------

@recipe("xfs-repair-dry-run-counters", "xfs_repair", "system", ["xfs_repair", "-V"], needs=("xfs_repair", "xfs_db"))
def _xfs_repair(root):
    """Write the `xfs-repair-dry-run-counters` project under `root`; return its command and signals."""
    sh("truncate -s 320M disk.img && mkfs.xfs -q -f -m uuid=5d7c1c2e-52a7-4bd3-9b7e-2a6a1e0c9f11 disk.img"
       " && xfs_db -x -c 'agf 1' -c 'write -d freeblks 12345' disk.img"
       " && xfs_db -x -c 'sb 0' -c 'write -d fdblocks 4242' disk.img", root)
    return Run(["xfs_repair", "-n", "-f", "disk.img"], [
        S("stderr", r"^Metadata corruption detected at 0x[0-9a-f]+, xfs_agf block 0x28001/0x200$", "the corruption"),
        S("stderr", r"^agf_freeblks 12345, counted 20470 in ag 1$", "the wrong free count"),
        S("stderr", r"^sb_fdblocks 4242, counted 65504$", "the superblock's wrong count"),
    ], expect_exit=exits(1))


@recipe("stg-push-reordered-conflict", "stg", "vcs", ["stg", "--version"], needs=("stg", "git"))
def _stg(root):
    """Write the `stg-push-reordered-conflict` project under `root`; return its command and signals."""
    env = {**_GIT_ENV, "HOME": root}
    write(root, "app.conf", "".join(f"option_{n} = {n}\n" for n in range(20)))
    sh("git -c init.defaultBranch=main init -q . && git add app.conf && git commit -q -m base && stg init"
       " && stg new -m 'raise limits' raise-limits"
       " && sed -i 's/^option_5 = 5$/option_5 = 500/' app.conf && stg refresh"
       " && stg new -m 'tune limits' tune-limits"
       " && sed -i 's/^option_5 = 500$/option_5 = 750/' app.conf && stg refresh"
       " && stg pop -a", root, env=env)
    return Run(["stg", "push", "tune-limits"], [
        S("stderr", r"^Error: 1 merge conflict\(s\)$", "the error"),
        S("stderr", r"CONFLICT \(content\): Merge conflict in app\.conf$", "the conflicted file"),
    ], env=env, expect_exit=exits(3))


@recipe("dnsmasq-test-bad-range", "dnsmasq", "service", ["dnsmasq", "--version"], needs=("dnsmasq",))
def _dnsmasq(root):
    """Write the `dnsmasq-test-bad-range` project under `root`; return its command and signals."""
    hosts = "".join(f"dhcp-host=52:54:00:12:34:{n:02x},lab-{n:02d},192.168.50.{100 + n}\n" for n in range(24))
    write(root, "dnsmasq.conf", "domain-needed\nbogus-priv\nno-resolv\nserver=192.0.2.53\nlocal=/lab/\n"
          "domain=lab\nlisten-address=127.0.0.1\nbind-interfaces\n" + hosts
          + "dhcp-range=192.168.50.10,192.168.50.300,12h\ndhcp-option=option:router,192.168.50.1\n")
    return Run(["dnsmasq", "--test", "--conf-file=dnsmasq.conf"], [
        S("stderr", r"^dnsmasq: bad dhcp-range at line 33 of dnsmasq\.conf$", "the error and its line"),
    ], expect_exit=exits(1))


def _kea_config() -> str:
    """A DHCPv4 server with three subnets; the third's pool lies outside it."""
    subnets = []
    for n, (net, pool) in enumerate((("10.1.0.0/24", "10.1.0.100 - 10.1.0.200"), ("10.2.0.0/24", "10.2.0.50 - 10.2.0.150"),
                                     ("10.3.0.0/24", "10.3.1.10 - 10.3.1.90"))):
        subnets.append(f'      {{ "id": {n + 1}, "subnet": "{net}", "pools": [ {{ "pool": "{pool}" }} ],\n'
                       f'        "option-data": [ {{ "name": "routers", "data": "{net.rsplit(".", 1)[0]}.1" }} ] }}')
    return ('{\n  "Dhcp4": {\n    "interfaces-config": { "interfaces": [ "lo" ] },\n'
            '    "lease-database": { "type": "memfile", "persist": false },\n    "valid-lifetime": 4000,\n'
            '    "subnet4": [\n' + ",\n".join(subnets) + '\n    ]\n  }\n}\n')


@recipe("kea-dhcp4-test-pool-outside", "kea-dhcp4", "service", ["kea-dhcp4", "-v"], needs=("kea-dhcp4",))
def _kea(root):
    """Write the `kea-dhcp4-test-pool-outside` project under `root`; return its command and signals."""
    write(root, "kea-dhcp4.conf", _kea_config())
    return Run(["kea-dhcp4", "-t", "kea-dhcp4.conf"], [
        S("stdout", r" ERROR \[kea-dhcp4\.dhcp4/[\d.]+\] DHCP4_PARSER_FAIL .*10\.3\.1\.10-10\.3\.1\.90 does not match the "
          r"prefix of a subnet: 10\.3\.0\.0/24 .*\(kea-dhcp4\.conf:11:7\)$", "the logged error"),
        S("stderr", r"^Error encountered: subnet configuration failed: .*\(kea-dhcp4\.conf:11:7\)$", "the verdict"),
    ], env={"KEA_LOCKFILE_DIR": "none", "KEA_PIDFILE_DIR": root}, expect_exit=exits(1))


@recipe("lighttpd-test-bad-rewrite", "lighttpd", "service", ["lighttpd", "-v"], needs=("lighttpd",))
def _lighttpd(root):
    """Write the `lighttpd-test-bad-rewrite` project under `root`; return its command and signals."""
    write(root, "lighttpd.conf", f"""\
        server.modules = ("mod_access", "mod_rewrite", "mod_redirect")
        server.document-root = "{root}/www"
        server.port = 18931
        server.max-conections = 512
        index-file.names = ("index.html")
        url.rewrite-once = (
            "^/api/v1/(.*)$" => "/api/v2/$1",
            "^/static/((css|js)/(.*)$" => "/assets/$1",
        )
        """)
    os.makedirs(os.path.join(root, "www"))
    return Run(["lighttpd", "-tt", "-f", "lighttpd.conf"], [
        S("stderr", r"pcre2_compile: missing closing parenthesis at offset 24, regex: \^/static/", "the error"),
        S("stderr", r"\(mod_rewrite\.c\.\d+\) pcre-compile failed for ", "the module it broke"),
        S("stderr", r"Configuration of plugins failed\. Going down\.$", "the verdict"),
    ], expect_exit=exits(255))


@recipe("rsyslogd-n1-config-errors", "rsyslogd", "service", ["rsyslogd", "-v"], needs=("rsyslogd",))
def _rsyslogd(root):
    """Write the `rsyslogd-n1-config-errors` project under `root`; return its command and signals."""
    write(root, "rsyslog.conf", f"""\
        global(workDirectory="{root}/spool")
        module(load="imuxsock" SysSock.Use="off")
        module(load="imfile")
        input(type="imfile" File="{root}/app/*.log" Tag="app:")
        template(name="json" type="list") {{
            property(name="timereported" dateFormat="rfc3339")
            constant(value=" ")
            property(name="msg")
        }}
        if $programname == "app" then {{
            action(type="omfile" file="{root}/out/app.log" template="json")
            action(type="omfwd" target="logs.example.org" port="6514" protocol="tcp" tempalte="json")
        }}
        *.info action(type="omfile" file="{root}/out/all.log")
        """)
    os.makedirs(os.path.join(root, "spool"))
    return Run(["rsyslogd", "-N1", "-f", "rsyslog.conf"], [
        S("stderr", r"^rsyslogd: error during parsing file rsyslog\.conf, on or before line 12: parameter 'tempalte' not known",
          "the error and its line"),
    ], expect_exit=exits(1))


@recipe("recfix-inventory-integrity", "recfix", "data", ["recfix", "--version"], needs=("recfix",))
def _recfix(root):
    """Write the `recfix-inventory-integrity` project under `root`; return its command and signals."""
    records = []
    for n in range(60):
        name = "" if n == 23 else f"Name: part {n}\n"
        ident = 12 if n == 41 else n
        qty = "many" if n == 52 else str(n * 3)
        records.append(f"Id: {ident}\n{name}Qty: {qty}\nBin: B{n % 9}\n")
    write(root, "inventory.rec", "%rec: Part\n%key: Id\n%type: Id,Qty int\n%mandatory: Name\n\n" + "\n".join(records))
    return Run(["recfix", "inventory.rec"], [
        S("stderr", r"^inventory\.rec:\d+: error: ", "the four integrity errors"),
    ], expect_exit=exits(1))


# --- mtools: listing a clean camera card image, and copying footage onto one too small -----------------

_MTOOLS_ENV = {"MTOOLS_SKIP_CHECK": "1", "SOURCE_DATE_EPOCH": "1700000000"}


@recipe("mdir-recursive-card-listing", "mdir", "listing", ["mdir", "--version"], needs=("mdir", "mkfs.fat", "mcopy"))
def _mdir(root):
    """Write the `mdir-recursive-card-listing` project under `root`; return its command and signals."""
    for d in range(6):
        for n in range(100):
            write(root, f"card/dcim/{100 + d}cam/img_{n:04d}.jpg", f"frame {d}-{n}\n" * (40 + n % 30))
    sh("mkfs.fat -C -i 5e6f7a8b -n CAMERA card.img 16384 >/dev/null && mcopy -s -i card.img card/dcim ::/", root,
       env=_MTOOLS_ENV)
    return Run(["mdir", "-/", "-i", "card.img", "::"], [
        S("stdout", r"^Total files listed:$", "the summary's heading"),
        S("stdout", r"^      621 files             350 430 bytes$", "the totals"),
        S("stdout", r"^                         15 470 592 bytes free$", "the free space"),
    ], env=_MTOOLS_ENV, expect_exit=exits(0))


@recipe("mcopy-verbose-disk-full", "mcopy", "system", ["mcopy", "--version"], needs=("mcopy", "mkfs.fat"))
def _mcopy(root):
    """Write the `mcopy-verbose-disk-full` project under `root`; return its command and signals."""
    for n in range(1400):
        write(root, f"footage/day{n // 200}/clip_{n:04d}_take.raw", f"{n:08d}" * 375)
    sh("mkfs.fat -C -i 0badcafe -n FOOTAGE stick.img 4096 >/dev/null", root, env=_MTOOLS_ENV)
    return Run(["mcopy", "-s", "-v", "-i", "stick.img", "footage", "::/"], [
        S("stderr", r"^Disk full$", "the failure"),
        S("stderr", r"^No free cluster \d+ \d+$", "what ran out"),
        S("stderr", r"^buffer_flush: write: No space left on device$", "the failed write"),
    ], env=_MTOOLS_ENV, expect_exit=exits(1))
