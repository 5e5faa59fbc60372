"""Veiled recipes for VCS, services, data tools, listings and logs: diff3, gpg, e2fsck, msgfmt,
systemd-analyze, datamash, symlinks, darcs, brz, squid, apache2ctl, postfix, slaptest, testparm,
unbound-checkconf.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from veiled_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "darcs": "2.16.5-1", "brz": "3.3.2-3", "squid": "5.7-2+deb12u6", "apache2": "2.4.71-1~deb12u1",
    "postfix": "3.7.11-0+deb12u1", "slapd": "2.5.13+dfsg-5", "samba-common-bin": "2:4.17.12+dfsg-0+deb12u4",
    "symlinks": "1.4-4", "datamash": "1.7-2", "unbound": "1.17.1-2+deb12u4",
}


def _settings(port: str, workers: str, level: str) -> str:
    """A long service configuration whose three tunables differ between the versions merged."""
    body = "".join(f"route.{n:03d}.path = /api/v1/resource{n:03d}\nroute.{n:03d}.timeout = {n % 9 + 1}s\n"
                   for n in range(140))
    return (f"[server]\nport = {port}\nhost = 0.0.0.0\n\n[routes]\n{body}\n[pool]\nworkers = {workers}\n"
            f"queue = 64\n\n[logging]\nlevel = {level}\nformat = json\n")


@recipe("diff3-merge-conflicting-settings", "diff3", "vcs", ["diff3", "--version"], needs=("diff3",))
def _diff3(root):
    """Write the `diff3-merge-conflicting-settings` project under `root`; return its command and signals."""
    write(root, "base.ini", _settings("8080", "4", "info"))
    write(root, "mine.ini", _settings("8443", "4", "debug"))
    write(root, "theirs.ini", _settings("9090", "16", "warning"))
    return Run(["diff3", "-m", "mine.ini", "base.ini", "theirs.ini"], [
        S("stdout", r"^<<<<<<< mine\.ini$", "where each conflict starts"),
        S("stdout", r"^>>>>>>> theirs\.ini$", "where each conflict ends"),
    ], expect_exit=exits(1))


@recipe("gpg-verify-tampered-release", "gpg", "security", ["gpg", "--version"], needs=("gpg",))
def _gpg(root):
    """Write the `gpg-verify-tampered-release` project under `root`; return its command and signals."""
    home = os.path.join(root, "gnupg")
    os.makedirs(home, mode=0o700)
    env = {"GNUPGHOME": home}
    sh(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Release Bot <release@example.org>",
        "ed25519", "sign", "never"], root, env=env)
    for n in range(3):
        write(root, f"dist/app-1.4.{n}.tar", "".join(f"file {k} of release 1.4.{n}\n" for k in range(200)))
        sh(["gpg", "--batch", "--detach-sign", "--armor", f"dist/app-1.4.{n}.tar"], root, env=env)
    write(root, "dist/app-1.4.1.tar", "".join(f"file {k} of release 1.4.1\n" for k in range(199)) + "patched\n")
    return Run(["gpg", "--verify", "dist/app-1.4.1.tar.asc", "dist/app-1.4.1.tar"], [
        S("stderr", r'^gpg: BAD signature from "Release Bot <release@example\.org>"', "the verdict"),
    ], env=env, expect_exit=exits(1))


def _e2fs_tree(root: str) -> None:
    """A small tree of files to build the image from."""
    for n in range(60):
        write(root, f"tree/data/report{n:02d}.txt", f"report {n}\n" * 40)
    write(root, "tree/etc/app.conf", "port = 80\n")


@recipe("e2fsck-damaged-image", "e2fsck", "system", ["e2fsck", "-V"], needs=("e2fsck", "mke2fs", "debugfs"))
def _e2fsck(root):
    """Write the `e2fsck-damaged-image` project under `root`; return its command and signals."""
    _e2fs_tree(root)
    sh(["mke2fs", "-q", "-F", "-t", "ext4", "-d", "tree", "-E", "hash_seed=3f1e0c52-6a31-4f1b-9a59-5c2d5b8c0e11",
        "-U", "9b0c1f52-1c7e-4f55-8a2e-6d0a7e3b2c11", "disk.img", "8M"], root, env={"E2FSPROGS_FAKE_TIME": "1700000000"})
    sh(["debugfs", "-w", "-R", "clri /data/report17.txt", "disk.img"], root)
    sh(["debugfs", "-w", "-R", "sif /data/report42.txt links_count 3", "disk.img"], root)
    return Run(["e2fsck", "-f", "-n", "disk.img"], [
        S("stdout", r"^Entry 'report17\.txt' in /data \(12\) has deleted/unused inode \d+\.", "the dangling entry"),
        S("stdout", r"^Entry 'report17\.txt' in /data \(12\) has an incorrect filetype", "its second problem"),
        S("stdout", r"^Inode \d+ ref count is 3, should be 1\.", "the wrong link count"),
        S("stdout", r"^Block bitmap differences: |^Inode bitmap differences: ", "the bitmap problems"),
        S("stdout", r"WARNING: Filesystem still has errors", "the verdict"),
        S("stdout", r"^disk\.img: \d+/\d+ files", "the summary"),
    ], expect_exit=exits(4))


@recipe("msgfmt-check-translation", "msgfmt", "linter", ["msgfmt", "--version"], needs=("msgfmt",))
def _msgfmt(root):
    """Write the `msgfmt-check-translation` project under `root`; return its command and signals."""
    head = ('msgid ""\nmsgstr ""\n"Project-Id-Version: shop 2.1\\n"\n"Language: de\\n"\n'
            '"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            '"Content-Transfer-Encoding: 8bit\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n')
    entries = "".join(f'#: src/views.c:{10 + n}\nmsgid "Item {n} saved"\nmsgstr "Artikel {n} gespeichert"\n\n'
                      for n in range(40))
    bad = ('#: src/cart.c:88\n#, c-format\nmsgid "%d items in cart for %s"\nmsgstr "%s hat %d Artikel im Warenkorb"\n\n'
           '#, fuzzy\n#: src/cart.c:95\nmsgid "Checkout"\nmsgstr "Kasse"\n\n'
           '#: src/cart.c:120\n#, c-format\nmsgid "Total: %.2f EUR"\nmsgstr "Summe: %.2f"\n\n'
           '#: src/cart.c:130\nmsgid "Remove"\nmsgstr ""\n')
    write(root, "po/de.po", head + entries + bad)
    return Run(["msgfmt", "-c", "--statistics", "-o", "/dev/null", "po/de.po"], [
        S("stderr", r"^po/de\.po:\d+: format specifications in 'msgid' and 'msgstr' for argument 1 are not the same$",
          "the fatal error and its place"),
        S("stderr", r"^msgfmt: found 1 fatal error$", "the count"),
        S("stderr", r"^42 translated messages, 1 fuzzy translation, 1 untranslated message\.$", "the statistics"),
    ], expect_exit=exits(1))


@recipe("systemd-analyze-verify-units", "systemd-analyze", "service", ["systemd-analyze", "--version"],
        needs=("systemd-analyze",))
def _systemd_analyze(root):
    """Write the `systemd-analyze-verify-units` project under `root`; return its command and signals."""
    write(root, "units/shop-web.service", "[Unit]\nDescription=Shop web\nAfter=network.target\nRequires=shop-db.service\n\n"
          "[Service]\nType=simple\nExecStart=/usr/bin/shop-web --port 8080\nRestart=on-failur\nUser=shop\n"
          "Enviroment=MODE=prod\n\n[Install]\nWantedBy=multi-user.target\n")
    write(root, "units/shop-worker.service", "[Unit]\nDescription=Shop worker\n\n[Service]\nExecStart=shop-worker\n"
          "Nice=5\n")
    write(root, "units/shop-cleanup.timer", "[Unit]\nDescription=Cleanup\n\n[Timer]\nOnCalendar=daily at 3\n"
          "Unit=shop-cleanup.service\n\n[Install]\nWantedBy=timers.target\n")
    return Run(["systemd-analyze", "verify", "--man=no", "units/shop-web.service", "units/shop-worker.service",
                "units/shop-cleanup.timer"], [
        S("stderr", r"shop-web\.service:9: Failed to parse service restart specifier", "a bad setting"),
        S("stderr", r"shop-web\.service:11: Unknown key 'Enviroment'", "a misspelt key"),
        S("stderr", r"shop-cleanup\.timer:5: Failed to parse calendar specification", "a bad calendar"),
        S("stderr", r"^shop-cleanup\.timer: Timer unit lacks value setting\. Refusing\.$", "the refused unit"),
        S("stderr", r"^Unit shop-cleanup\.timer has a bad unit file setting\.$", "the verdict on it"),
        S("stderr", r"Unit shop-db\.service not found\.$", "the missing dependency"),
        S("stderr", r"is not executable: No such file or directory$", "the missing commands"),
    ], expect_exit=exits(1))


@recipe("datamash-groupby-bad-value", "datamash", "data", ["datamash", "--version"], needs=("datamash",))
def _datamash(root):
    """Write the `datamash-groupby-bad-value` project under `root`; return its command and signals."""
    rows = []
    for n in range(6000):
        amount = "n/a" if n == 4711 else f"{(n * 37) % 500 + 0.25:.2f}"
        rows.append(f"2026-{n % 12 + 1:02d}-{n % 28 + 1:02d},store{n // 8:03d},sku{n % 97:02d},{amount}")
    write(root, "sales.csv", "date,store,sku,amount\n" + "\n".join(rows) + "\n")
    return Run(["datamash", "-t,", "-H", "-g", "2", "count", "4", "sum", "4", "mean", "4"], [
        S("stderr", r"^datamash: invalid numeric value in line 4713 field 4: 'n/a'$", "the error and its place"),
    ], command="datamash -t, -H -g 2 count 4 sum 4 mean 4 < sales.csv", expect_exit=exits(1))


@recipe("symlinks-dangling-in-tree", "symlinks", "listing", ["dpkg-query", "-W", "-f", "${Version}", "symlinks"],
        needs=("symlinks",))
def _symlinks(root):
    """Write the `symlinks-dangling-in-tree` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"srv/releases/r{n:03d}/VERSION", f"{n}\n")
    for app in range(30):
        for n in range(120):
            link = os.path.join(root, f"srv/apps/app{app:02d}/versions/v{n:03d}")
            os.makedirs(os.path.dirname(link), exist_ok=True)
            target = f"../../../releases/r{n:03d}"
            if (app, n) == (17, 88):
                target = "../../../releases/r188"
            os.symlink(target, link)
    return Run(["symlinks", "-rv", "srv"], [
        S("stdout", r"^dangling: .*/srv/apps/app17/versions/v088 -> \.\./\.\./\.\./releases/r188$",
          "the one dangling link among 3,600"),
    ], expect_exit=exits(0))


def _darcs_repo(path: str, env: dict) -> None:
    """An upstream darcs repository with one recorded patch."""
    os.makedirs(path)
    sh(["darcs", "init"], path, env=env)
    for n in range(30):
        write(path, f"lib/part{n:02d}.hs", f"module Part{n} where\nvalue = {n}\n")
    write(path, "shop.cabal", "name: shop\nversion: 0.1.0\nbuild-depends: base >= 4.14\n")
    sh(["darcs", "record", "-l", "-a", "-m", "Import", "-A", "dev@example.org"], path, env=env)


@recipe("darcs-pull-conflict", "darcs", "vcs", ["darcs", "--version"], needs=("darcs",))
def _darcs(root):
    """Write the `darcs-pull-conflict` project under `root`; return its command and signals."""
    env = {"DARCS_EMAIL": "dev@example.org"}
    up = os.path.join(root, "upstream")
    _darcs_repo(up, env)
    sh(["darcs", "clone", "upstream", "mine"], root, env=env)
    mine = os.path.join(root, "mine")
    for n in range(0, 30, 3):
        write(up, f"lib/part{n:02d}.hs", f"module Part{n} where\nvalue = {n} * 2\n")
    write(up, "shop.cabal", "name: shop\nversion: 0.2.0\nbuild-depends: base >= 4.16\n")
    sh(["darcs", "record", "-a", "-m", "Bump to 0.2.0"], up, env=env)
    write(mine, "shop.cabal", "name: shop\nversion: 0.1.1\nbuild-depends: base >= 4.14, text\n")
    sh(["darcs", "record", "-a", "-m", "Add text"], mine, env=env)
    return Run(["darcs", "pull", "-a", "../upstream"], [
        S("stderr", r"^We have conflicts in the following files:$", "the conflict"),
        S("stderr", r"^\./shop\.cabal$", "the conflicted file"),
    ], cwd="mine", env=env, expect_exit=exits(0, 1, 2))


@recipe("brz-merge-text-conflicts", "brz", "vcs", ["brz", "--version"], needs=("brz",))
def _brz(root):
    """Write the `brz-merge-text-conflicts` project under `root`; return its command and signals."""
    env = {"BRZ_EMAIL": "Dev <dev@example.org>"}
    trunk = os.path.join(root, "trunk")
    os.makedirs(trunk)
    sh(["brz", "init", "-q"], trunk, env=env)
    for n in range(400):
        write(trunk, f"src/handlers/handler_{n:03d}.py", f"def handle_{n}(request):\n    return {n}\n")
    write(trunk, "src/settings.py", "DEBUG = False\nPORT = 8000\n")
    write(trunk, "src/urls.py", "ROUTES = ['home', 'cart']\n")
    sh("brz add -q && brz commit -q -m Import", trunk, env=env)
    sh(["brz", "branch", "-q", "trunk", "feature"], root, env=env)
    feature = os.path.join(root, "feature")
    for n in range(400):
        write(feature, f"src/handlers/handler_{n:03d}.py", f"def handle_{n}(request):\n    return {n} + 1\n")
    write(feature, "src/settings.py", "DEBUG = True\nPORT = 8000\n")
    write(feature, "src/urls.py", "ROUTES = ['home', 'cart', 'checkout']\n")
    sh(["brz", "commit", "-q", "-m", "Feature"], feature, env=env)
    write(trunk, "src/settings.py", "DEBUG = False\nPORT = 9000\n")
    write(trunk, "src/urls.py", "ROUTES = ['home', 'basket']\n")
    sh(["brz", "commit", "-q", "-m", "Trunk"], trunk, env=env)
    return Run(["brz", "merge", "../feature"], [
        S("stderr", r"^Text conflict in src/(settings|urls)\.py$", "the two conflicted files among 402 merged"),
        S("stderr", r"^2 conflicts encountered\.$", "the count"),
    ], cwd="trunk", env={**env, "PATH": "/usr/bin:/bin"}, expect_exit=exits(0, 1))


def _squid_conf() -> str:
    """A proxy configuration with many ACLs; one ACL has a type squid does not know."""
    nets = "".join(f"acl office{n:02d} src 10.{n}.0.0/16\nhttp_access allow office{n:02d} Safe_ports\n"
                   for n in range(80))
    sites = "".join(f"acl blocked{n:02d} dstdomain .ads{n:02d}.example.net\nhttp_access deny blocked{n:02d}\n"
                    for n in range(60))
    return ("http_port 3128\nacl Safe_ports port 80 443 8080\nacl CONNECT method CONNECT\n"
            "http_access deny CONNECT !Safe_ports\n" + sites + nets
            + "acl partners dst_domain .partner.example.com\nhttp_access allow partners\n"
            "http_access deny all\ncache_mem 256 MB\nmaximum_object_size 64 MB\ncoredump_dir /var/spool/squid\n")


@recipe("squid-parse-bad-acl", "squid", "service", ["squid", "-v"], needs=("squid",))
def _squid(root):
    """Write the `squid-parse-bad-acl` project under `root`; return its command and signals."""
    write(root, "squid.conf", _squid_conf())
    return Run(["squid", "-k", "parse", "-f", "squid.conf"], [
        S("stderr", r"\| FATAL: Invalid ACL type 'dst_domain'$", "the error"),
        S("stderr", r"\| FATAL: Bungled .*squid\.conf line 285: acl partners dst_domain", "its place"),
        S("stderr", r"\| Squid Cache \(Version [\d.]+\): Terminated abnormally\.$", "the verdict"),
    ], command=["squid", "-N", "-k", "parse", "-f", os.path.join(root, "squid.conf")], expect_exit=exits(0, 1))


def _apache_site(n: int) -> str:
    """One virtual host; the shop's uses mod_rewrite, which the server does not load."""
    rewrite = "    RewriteEngine On\n    RewriteRule ^/old/(.*)$ /new/$1 [R=301,L]\n" if n == 7 else ""
    return (f"<VirtualHost *:8080>\n    ServerName site{n}.example.org\n    DocumentRoot {{ROOT}}/www/site{n}\n"
            f"{rewrite}    ErrorLog {{ROOT}}/log/site{n}-error.log\n</VirtualHost>\n")


@recipe("apache2ctl-configtest-module", "apache2ctl", "service", ["apache2", "-v"], needs=("apache2ctl",))
def _apache2ctl(root):
    """Write the `apache2ctl-configtest-module` project under `root`; return its command and signals."""
    conf = os.path.join(root, "apache2")
    write(conf, "envvars", f"export APACHE_RUN_USER=www-data\nexport APACHE_RUN_GROUP=www-data\n"
          f"export APACHE_PID_FILE={root}/run/apache2.pid\nexport APACHE_RUN_DIR={root}/run\n"
          f"export APACHE_LOCK_DIR={root}/lock\nexport APACHE_LOG_DIR={root}/log\nexport LANG=C\n")
    write(conf, "apache2.conf", "DefaultRuntimeDir ${APACHE_RUN_DIR}\nPidFile ${APACHE_PID_FILE}\n"
          "User ${APACHE_RUN_USER}\nGroup ${APACHE_RUN_GROUP}\nErrorLog ${APACHE_LOG_DIR}/error.log\n"
          "LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so\n"
          "LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so\n"
          "Listen 8080\nServerName localhost\nIncludeOptional sites/*.conf\n")
    for n in range(12):
        os.makedirs(os.path.join(root, f"www/site{n}"))
        write(conf, f"sites/site{n:02d}.conf", _apache_site(n).replace("{ROOT}", root))
    for sub in ("run", "lock", "log"):
        os.makedirs(os.path.join(root, sub))
    return Run(["apache2ctl", "configtest"], [
        S("stderr", r"^AH00526: Syntax error on line 4 of .*/sites/site07\.conf:$", "the error's place"),
        S("stderr", r"^Invalid command 'RewriteEngine', perhaps misspelled", "the error"),
        S("stdout", r"^Action 'configtest' failed\.$", "the verdict"),
    ], env={"APACHE_CONFDIR": conf}, expect_exit=exits(1))


def _main_cf() -> str:
    """A mail server's main.cf; two parameter names are misspelt."""
    return ("compatibility_level = 3.6\nmyhostname = mail.example.org\nmydomain = example.org\n"
            "myorigin = $mydomain\ninet_interfaces = all\ninet_protocols = ipv4\nmydestination = $myhostname, localhost\n"
            "mynetworks = 127.0.0.0/8 10.0.0.0/8\nrelayhost = [smtp.example.net]:587\nsmtp_tls_security_level = encrypt\n"
            "smtp_sasl_auth_enable = yes\nsmtp_sasl_password_maps = hash:/etc/postfix/sasl_passwd\n"
            "smtp_sasl_security_options = noanonymous\nsmtpd_tls_cert_file = /etc/ssl/certs/mail.pem\n"
            "smtpd_tls_key_file = /etc/ssl/private/mail.key\nsmtpd_tls_security_level = may\n"
            "smtpd_relay_restrictons = permit_mynetworks, reject_unauth_destination\n"
            "smtpd_recipient_restrictions = permit_mynetworks, reject_unauth_destination\n"
            "message_size_limit = 52428800\nmailbox_size_limit = 0\nrecipient_delimiter = +\n"
            "alias_maps = hash:/etc/aliases\nalias_database = hash:/etc/aliases\nhome_mailbox = Maildir/\n"
            "virtual_mailbox_domian = example.com\nmaximal_queue_lifetime = 2d\n")


@recipe("postconf-unused-parameters", "postconf", "service", ["postconf", "-d", "mail_version"], needs=("postconf",))
def _postconf(root):
    """Write the `postconf-unused-parameters` project under `root`; return its command and signals."""
    write(root, "postfix/main.cf", _main_cf())
    write(root, "postfix/master.cf", "smtp      inet  n       -       y       -       -       smtpd\n"
          "pickup    unix  n       -       y       60      1       pickup\n"
          "cleanup   unix  n       -       y       -       0       cleanup\n"
          "qmgr      unix  n       -       n       300     1       qmgr\n")
    return Run(["postconf", "-c", "postfix", "-n"], [
        S("stderr", r"^postconf: warning: postfix/main\.cf: unused parameter: "
          r"(virtual_mailbox_domian|smtpd_relay_restrictons)=", "the two misspelt parameters, the only findings"),
    ], expect_exit=exits(0))


@recipe("slaptest-bad-directive", "slaptest", "service", ["slapd", "-VV"], needs=("slaptest",))
def _slaptest(root):
    """Write the `slaptest-bad-directive` project under `root`; return its command and signals."""
    os.makedirs(os.path.join(root, "data"))
    write(root, "slapd.conf", "include /etc/ldap/schema/core.schema\ninclude /etc/ldap/schema/cosine.schema\n"
          f"include /etc/ldap/schema/inetorgperson.schema\npidfile {root}/slapd.pid\n"
          "modulepath /usr/lib/ldap\nmoduleload back_mdb\n\ndatabase mdb\nsuffix \"dc=example,dc=org\"\n"
          "rootdn \"cn=admin,dc=example,dc=org\"\nrootpw secret\n"
          f"directory {root}/data\nindex objectClass eq\nindex uid eq\nindx mail eq\n"
          "access to attrs=userPassword by self write by anonymous auth by * none\n")
    return Run(["slaptest", "-u", "-f", "slapd.conf"], [
        S("stderr", r"^slapd\.conf: line 15: unknown directive <indx> inside backend database definition\.$",
          "the error and its place"),
        S("stderr", r"^slaptest: bad configuration file!$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("testparm-unknown-parameter", "testparm", "service", ["testparm", "-V"], needs=("testparm",))
def _testparm(root):
    """Write the `testparm-unknown-parameter` project under `root`; return its command and signals."""
    shares = "".join(f"[team{n:02d}]\n   path = /srv/samba/team{n:02d}\n   read only = no\n"
                     f"   valid users = @team{n:02d}\n   create mask = 0660\n\n" for n in range(20))
    write(root, "smb.conf", "[global]\n   workgroup = EXAMPLE\n   server string = Files\n   security = user\n"
          "   map to guest = bad user\n   log file = /var/log/samba/%m.log\n   max log size = 1000\n\n"
          + shares.replace("[team13]\n   path = /srv/samba/team13\n   read only = no\n",
                           "[team13]\n   path = /srv/samba/team13\n   read onyl = no\n"))
    return Run(["testparm", "-s", "smb.conf"], [
        S("stderr", r'^Unknown parameter encountered: "read onyl"$', "the misspelt parameter"),
        S("stderr", r'^Ignoring unknown parameter "read onyl"$', "what became of it"),
        S("stderr", r"^Loaded services file OK\.$", "the verdict"),
    ], expect_exit=exits(0, 1))


@recipe("unbound-checkconf-syntax", "unbound-checkconf", "service", ["unbound", "-V"], needs=("unbound-checkconf",))
def _unbound(root):
    """Write the `unbound-checkconf-syntax` project under `root`; return its command and signals."""
    zones = "".join(f"    local-data: \"host{n:02d}.lan. IN A 192.168.1.{n + 10}\"\n" for n in range(30))
    write(root, "unbound.conf", "server:\n    interface: 127.0.0.1\n    port: 5353\n    do-ip6: no\n"
          "    access-control: 127.0.0.0/8 allow\n    cache-max-ttl: 86400\n    prefetch: yes\n"
          "    local-zone: \"lan.\" static\n" + zones + "    num-threds: 2\n\nforward-zone:\n"
          "    name: \".\"\n    forward-addr: 9.9.9.9@853\n    forward-tls-upstream: yes\n")
    return Run(["unbound-checkconf", "unbound.conf"], [
        S("stderr", r"^unbound\.conf:39: error: ", "the errors and their line"),
        S("stderr", r"^read unbound\.conf failed: 3 errors in configuration file$", "the verdict"),
    ], expect_exit=exits(1))
