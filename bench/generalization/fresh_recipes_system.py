"""Fresh recipes for VCS, databases, data and system tools: git, sqlite3, jq, tar, rsync, openssl, systemctl.

Each signal is written from the raw output's meaning, before any view of it.
"""

from __future__ import annotations

import os

from fresh_common import NOBODY, Run, S, exits, recipe, sh, write
from generate_native import GIT_PEOPLE, Repo, git_env

GIT = ["git", "--version"]


@recipe("git-log-graph-branches", "git", "vcs", GIT, needs=("git",))
def _git_log_graph(root):
    repo = Repo(root)
    repo.write("README.md", "# shop\n")
    repo.commit("Initial commit")
    for b in range(9):
        repo.git("checkout", "-q", "-b", f"topic/feature-{b}", "main")
        for c in range(12):
            repo.write(f"src/f{b}/part{c}.py", f"VALUE = {b * 10 + c}\n")
            repo.commit(f"feature {b}: step {c} of the {['cart', 'search', 'auth', 'tax', 'mail', 'export', 'audit', 'ui', 'cli'][b]} work",
                        GIT_PEOPLE[c % 4])
        repo.git("checkout", "-q", "main")
        if b < 7:
            repo.tick += 1
            repo.git("merge", "-q", "--no-ff", "-m", f"Merge branch 'topic/feature-{b}'", f"topic/feature-{b}")
        repo.write(f"CHANGES-{b}.md", f"release note {b}\n")
        repo.commit(f"Release notes for {b}")
    repo.git("checkout", "-q", "topic/feature-8")
    return Run(["git", "log", "--graph", "--oneline", "--decorate", "--all"], [
        S("stdout", r"^[*|/\\ ]+ [0-9a-f]{7} \((HEAD -> |main\)|topic/)", "where HEAD and each branch tip are"),
    ], env=git_env(),
               expect_exit=exits(0))


@recipe("git-cherry-pick-conflict", "git", "vcs", GIT, needs=("git",))
def _git_cherry_pick(root):
    repo = Repo(root)
    repo.write("app/settings.py", "TIMEOUT = 30\nRETRIES = 3\nREGION = 'eu'\n")
    repo.write("app/version.py", "VERSION = '1.4.0'\n")
    repo.commit("Settings for 1.4")
    repo.git("checkout", "-q", "-b", "hotfix")
    repo.write("app/settings.py", "TIMEOUT = 90\nRETRIES = 5\nREGION = 'eu'\n")
    repo.write("app/version.py", "VERSION = '1.4.1'\n")
    repo.write("app/notes.txt", "hotfix\n")
    repo.commit("Raise the timeout and retries for the slow gateway")
    repo.git("checkout", "-q", "main")
    repo.write("app/settings.py", "TIMEOUT = 45\nRETRIES = 3\nREGION = 'eu-west-1'\n")
    repo.write("app/version.py", "VERSION = '1.5.0.dev0'\n")
    repo.commit("Start 1.5")
    return Run(["git", "cherry-pick", "hotfix"], [
        S("stderr", r"^error: could not apply [0-9a-f]{7}\.\.\. Raise the timeout", "which commit did not apply"),
        S("stdout", r"^CONFLICT \(content\): Merge conflict in app/(settings|version)\.py$", "each conflicted file"),
    ], env=git_env(), expect_exit=exits(1))


@recipe("git-fsck-missing-blob", "git", "vcs", GIT, needs=("git",))
def _git_fsck(root):
    repo = Repo(root)
    for i in range(5):
        repo.write(f"data/table{i}.csv", f"id,value\n{i},{i * i}\n")
        repo.commit(f"Add table {i}")
    blob = repo.git("rev-parse", "HEAD~2:data/table2.csv").stdout.decode().strip()
    os.remove(os.path.join(root, ".git", "objects", blob[:2], blob[2:]))
    return Run(["git", "fsck", "--full"], [
        S("stdout", r"^missing blob [0-9a-f]{40}$", "the corruption: an object the history needs is gone"),
    ], env=git_env(), expect_exit=exits(2, 3, 4, 5, 6, 7, 8))


@recipe("git-diff-stat-large", "git", "vcs", GIT, needs=("git",))
def _git_diff_stat(root):
    repo = Repo(root)
    for i in range(420):
        repo.write(f"src/pkg{i % 12}/mod_{i:03d}.py", "".join(f"x{k} = {k}\n" for k in range(10)))
    repo.commit("Baseline")
    repo.git("tag", "v2.0")
    for i in range(420):
        if i % 3:
            repo.write(f"src/pkg{i % 12}/mod_{i:03d}.py", "".join(f"x{k} = {k + 1}\n" for k in range(10 + i % 5)))
    os.makedirs(os.path.join(root, "assets"))
    with open(os.path.join(root, "assets/logo.bin"), "wb") as handle:
        handle.write(bytes(range(256)) * 300)
    os.remove(os.path.join(root, "src/pkg5/mod_005.py"))
    repo.commit("Bump every value")
    return Run(["git", "diff", "--stat=100", "v2.0", "HEAD"], [
        S("stdout", r"^ assets/logo\.bin +\| Bin 0 -> 76800 bytes$", "the one binary file among 280 text files"),
        S("stdout", r"^ src/pkg5/mod_005\.py +\| +10 -+$", "the one file deleted outright"),
        S("stdout", r"^ 281 files changed, 3350 insertions\(\+\), 2800 deletions\(-\)$", "the closing count"),
    ], env=git_env(), expect_exit=exits(0))


SQLITE = ["sqlite3", "--version"]


@recipe("sqlite3-echo-migration-error", "sqlite3", "database", SQLITE, needs=("sqlite3",))
def _sqlite_echo(root):
    steps = ["CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, created TEXT);"]
    for n in range(1, 181):
        steps.append(f"INSERT INTO customers (email, created) VALUES ('c{n}@example.com', '2024-01-{1 + n % 28:02d}');")
    steps += ["CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total REAL);",
              "CREATE INDEX orders_customer ON orders(customer_id);"]
    for n in range(1, 121):
        steps.append(f"INSERT INTO orders (customer_id, total) VALUES ({1 + n % 180}, {n * 3.5});")
    steps.append("UPDATE orders SET total = total * 1.2 WHERE customer_id IN (SELECT id FROM customer WHERE created > '2024-01-15');")
    for n in range(121, 161):
        steps.append(f"INSERT INTO orders (customer_id, total) VALUES ({n % 180}, {n * 2.25});")
    write(root, "migrate.sql", "\n".join(steps) + "\n")
    return Run(["sqlite3", "-echo", "-bail", "shop.db", ".read migrate.sql"], [
        S("stdout", r"^UPDATE orders SET total = total \* 1\.2 ", "the statement that failed, the last one echoed"),
        S("stderr", r"^Parse error near line 304: no such table: customer$", "the error, with its line in the script"),
    ], expect_exit=exits(1))


@recipe("sqlite3-explain-query-plan", "sqlite3", "database", SQLITE, needs=("sqlite3",))
def _sqlite_eqp(root):
    sql = ["CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE, team TEXT);",
           "CREATE TABLE events (id INTEGER PRIMARY KEY, user_id INTEGER, kind TEXT, at TEXT);",
           "CREATE INDEX events_user ON events(user_id);"]
    sh(["sqlite3", "app.db"], root, input="\n".join(sql).encode())
    query = ("EXPLAIN QUERY PLAN SELECT u.email, count(*) FROM events e JOIN users u ON u.id = e.user_id "
             "WHERE e.kind = 'login' AND u.team = 'ops' GROUP BY u.email ORDER BY 2 DESC;")
    return Run(["sqlite3", "app.db", query], [
        S("stdout", r"^[|`]--(SCAN|SEARCH|USE TEMP B-TREE) ", "each step of the plan: which table is scanned, "
          "which searched by an index, the sort"),
    ], expect_exit=exits(0))


@recipe("jq-select-error-events", "jq", "data", ["jq", "--version"], needs=("jq",))
def _jq_select(root):
    import json
    import random
    rng = random.Random(5)
    events = []
    for n in range(4000):
        level = "error" if n in (812, 2950, 3777) else rng.choice(["info", "info", "info", "debug", "warn"])
        events.append({"seq": n, "level": level, "service": rng.choice(["api", "worker", "billing"]),
                       "msg": "payment declined: card expired" if n == 2950 else f"handled request {n}",
                       "ms": rng.randint(1, 900)})
    write(root, "events.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    return Run(["jq", "-c", 'select(.level == "error")', "events.jsonl"], [
        S("stdout", r'^\{"seq":\d+,"level":"error",', "every selected event (the whole answer)"),
    ], expect_exit=exits(0))


@recipe("tar-xv-keep-old-files", "tar", "archive", ["tar", "--version"], needs=("tar",))
def _tar_xv(root):
    src = os.path.join(root, "release")
    for i in range(900):
        write(src, f"app/lib/module_{i:03d}/__init__.py", f"ID = {i}\n")
    write(src, "app/config/settings.ini", "[main]\nmode = prod\n")
    write(src, "app/config/secrets.env", "TOKEN=redacted\n")
    sh(["tar", "-cf", "release.tar", "-C", "release", "app"], root)
    write(root, "deploy/app/config/settings.ini", "[main]\nmode = local\n")
    write(root, "deploy/app/config/secrets.env", "TOKEN=local\n")
    return Run(["tar", "-xvf", "../release.tar", "--keep-old-files"], [
        S("stderr", r"^tar: app/config/(settings\.ini|secrets\.env): Cannot open: File exists$",
          "each file not extracted, among 900 that were"),
        S("stderr", r"^tar: Exiting with failure status due to previous errors$", "the verdict"),
    ], cwd="deploy", expect_exit=exits(2))


@recipe("rsync-av-permission-denied", "rsync", "archive", ["rsync", "--version"], needs=("rsync", "setpriv"))
def _rsync(root):
    for i in range(700):
        write(root, f"site/pages/page_{i:03d}.html", f"<h1>Page {i}</h1>\n")
    write(root, "site/private/keys.pem", "-----BEGIN KEY-----\n")
    os.chmod(os.path.join(root, "site/private/keys.pem"), 0o600)
    os.makedirs(os.path.join(root, "backup"))
    sh(["chmod", "-R", "a+rX", os.path.join(root, "site/pages")], root)
    os.chmod(root, 0o777)
    os.chmod(os.path.join(root, "site"), 0o755)
    os.chmod(os.path.join(root, "site/private"), 0o755)
    os.chmod(os.path.join(root, "backup"), 0o777)
    for parent in ("/tmp/yarp-gen/fresh", "/tmp/yarp-gen/fresh/work", "/tmp/yarp-gen"):
        os.chmod(parent, os.stat(parent).st_mode | 0o711)
    return Run(["rsync", "-av", "site/", "backup/"], [
        S("stderr", r'^rsync: \[sender\] send_files failed to open ".*/site/private/keys\.pem": Permission denied \(13\)$',
          "the file that was not copied, and why"),
        S("stderr", r'^rsync: \[generator\] failed to set permissions on ', "the other failure: permissions not kept"),
        S("stderr", r"^rsync error: some files/attrs were not transferred .*\(code 23\)", "the verdict"),
        S("stdout", r"^sent [\d,]+ bytes  received [\d,]+ bytes", "the transfer's summary"),
    ], command=NOBODY + ["rsync", "-av", "site/", "backup/"],
               expect_exit=exits(23))


@recipe("systemctl-status-no-systemd", "systemctl", "service", ["systemctl", "--version"], needs=("systemctl",))
def _systemctl(root):
    return Run(["systemctl", "status", "nginx"], [
        S("stderr", r"^System has not been booted with systemd as init system", "why there is no status to show"),
        S("stderr", r"^Failed to connect to bus: Host is down$", "the failure"),
    ], expect_exit=lambda code: code != 0)


@recipe("dmesg-not-permitted", "dmesg", "log", ["dmesg", "--version"], needs=("dmesg", "setpriv"))
def _dmesg(root):
    return Run(["dmesg", "--level=err,warn"], [
        S("stderr", r"^dmesg: read kernel buffer failed: Operation not permitted$", "the failure and its cause"),
    ], command=NOBODY + ["dmesg", "--level=err,warn"],
               expect_exit=lambda code: code != 0)


@recipe("openssl-verify-self-signed", "openssl", "security", ["openssl", "version"], needs=("openssl",))
def _openssl(root):
    sh(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.pem",
        "-days", "30", "-subj", "/CN=api.internal.example"], root)
    return Run(["openssl", "verify", "server.pem"], [
        S("stderr", r"^CN = api\.internal\.example$", "which certificate"),
        S("stderr", r"^error 18 at 0 depth lookup: self-signed certificate$", "why it does not verify"),
        S("stderr", r"^error server\.pem: verification failed$", "the verdict"),
    ], expect_exit=exits(2))
