"""Blind recipes for VCS, services and shell linting: mercurial, git stash and am, nginx -t, sshd -t,
checkbashisms.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from blind_common import Run, S, exits, recipe, sh, write
from generate_native import Repo, git_env

GIT = ["git", "--version"]
HG_ENV = {"HGUSER": "Dev One <dev@example.org>", "HGPLAIN": "1", "HGRCPATH": "/dev/null",
          "HGENCODING": "utf-8"}


@recipe("hg-merge-conflict", "hg", "vcs", ["hg", "--version"], needs=("hg",))
def _hg(root):
    """Write the `hg-merge-conflict` project under `root`; return its command and signals."""
    def hg(*args):
        """Run one setup `hg` command in the repository."""
        return sh(["hg", *args], root, env=HG_ENV)
    hg("init")
    write(root, "app/settings.py", "TIMEOUT = 30\nRETRIES = 3\n")
    write(root, "app/views.py", "def index():\n    return 'ok'\n")
    hg("add", "-q")
    hg("commit", "-m", "Initial settings", "-d", "2024-03-01 09:00 +0000")
    write(root, "app/settings.py", "TIMEOUT = 60\nRETRIES = 3\n")
    hg("commit", "-m", "Longer timeout", "-d", "2024-03-01 10:00 +0000")
    hg("update", "-q", "0")
    write(root, "app/settings.py", "TIMEOUT = 45\nRETRIES = 5\n")
    write(root, "app/views.py", "def index():\n    return 'ok!'\n")
    hg("commit", "-q", "-m", "Tune for the gateway", "-d", "2024-03-01 11:00 +0000")
    return Run(["hg", "merge", "1"], [
        S("stderr", r"^warning: conflicts while merging app/settings\.py! \(edit, then use 'hg resolve --mark'\)$",
          "the conflicted file"),
        S("stdout", r"^\d+ files updated, \d+ files merged, \d+ files removed, 1 files unresolved$", "the result"),
    ], env=HG_ENV, expect_exit=exits(1))


@recipe("git-stash-pop-conflict", "git", "vcs", GIT, needs=("git",))
def _git_stash(root):
    """Write the `git-stash-pop-conflict` project under `root`; return its command and signals."""
    repo = Repo(root)
    repo.write("config/app.toml", "[server]\nport = 8080\nworkers = 4\n")
    repo.write("src/main.py", "print('hi')\n")
    repo.commit("Initial")
    repo.write("config/app.toml", "[server]\nport = 9090\nworkers = 4\n")
    repo.write("src/main.py", "print('hello')\n")
    repo.git("stash", "push", "-q", "-m", "local port change")
    repo.write("config/app.toml", "[server]\nport = 8443\nworkers = 8\n")
    repo.commit("Serve TLS on 8443")
    return Run(["git", "stash", "pop"], [
        S("stdout", r"^CONFLICT \(content\): Merge conflict in config/app\.toml$", "the conflicted file"),
        S("stdout", r"^The stash entry is kept in case you need it again\.$", "what happened to the stash"),
    ], env=git_env(when="2024-04-01T10:00:00Z"), expect_exit=exits(1))


@recipe("git-am-patch-does-not-apply", "git", "vcs", GIT, needs=("git",))
def _git_am(root):
    """Write the `git-am-patch-does-not-apply` project under `root`; return its command and signals."""
    repo = Repo(root)
    for i in range(4):
        repo.write(f"lib/part{i}.py", "".join(f"LIMIT_{k} = {k}\n" for k in range(20)))
    repo.commit("Initial limits")
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(4):
        repo.write(f"lib/part{i}.py", "".join(f"LIMIT_{k} = {k * (2 if i == 2 and k == 7 else 1)}\n"
                                              for k in range(20)) + f"EXTRA_{i} = True\n")
        repo.commit(f"Extend part {i}")
    repo.git("format-patch", "-q", "-o", "patches", "main")
    repo.git("checkout", "-q", "main")
    repo.write("lib/part2.py", "".join(f"LIMIT_{k} = {k + 100 if k in (6, 7, 8) else k}\n" for k in range(20)))
    repo.commit("Raise three limits")
    patches = sorted(os.listdir(os.path.join(root, "patches")))
    return Run(["git", "am", *[f"patches/{p}" for p in patches]], [
        S("stderr", r"^error: patch failed: lib/part2\.py:\d+$|^error: lib/part2\.py: patch does not apply$",
          "the error and its file"),
        S("stdout", r"^Patch failed at 0003 Extend part 2$", "which patch failed"),
    ], env=git_env(when="2024-04-01T10:00:00Z"), expect_exit=exits(128))


@recipe("nginx-t-unknown-directive", "nginx", "service", ["nginx", "-v"], needs=("nginx",))
def _nginx(root):
    """Write the `nginx-t-unknown-directive` project under `root`; return its command and signals."""
    write(root, "conf/mime.types", "types { text/html html; }\n")
    write(root, "conf/nginx.conf", """
        worker_processes 1;
        pid logs/nginx.pid;
        events { worker_connections 64; }
        http {
            include mime.types;
            server {
                listen 8733;
                server_name shop.local;
                location /api/ {
                    proxy_passs http://127.0.0.1:9000;
                }
            }
        }
        """)
    os.makedirs(os.path.join(root, "logs"))
    return Run(["nginx", "-t", "-p", ".", "-c", "conf/nginx.conf"], [
        S("stderr", r'\[emerg\] \d+#\d+: unknown directive "proxy_passs" in .*conf/nginx\.conf:10$', "the error and its line"),
        S("stderr", r"^nginx: configuration file .*conf/nginx\.conf test failed$", "the verdict"),
    ], command=["nginx", "-t", "-p", root + "/", "-c", "conf/nginx.conf", "-e", "stderr"], expect_exit=exits(1))


@recipe("sshd-t-bad-options", "sshd", "service", ["sshd", "-V"], needs=("sshd",))
def _sshd(root):
    """Write the `sshd-t-bad-options` project under `root`; return its command and signals."""
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(root, "host_ed25519")], root)
    write(root, "sshd_config", f"""
        Port 2222
        HostKey {root}/host_ed25519
        PermitRootLogn no
        PasswordAuthentication no
        MaxAuthTries seven
        PidFile {root}/sshd.pid
        """)
    return Run(["sshd", "-t", "-f", "sshd_config"], [
        S("stderr", r"^sshd_config: line 3: Bad configuration option: PermitRootLogn\r?$", "the misspelt option"),
        S("stderr", r"^sshd_config line 5: MaxAuthTries integer value invalid\.\r?$", "the bad value, which stopped the check"),
    ], command=["/usr/sbin/sshd", "-t", "-f", "sshd_config"], expect_exit=exits(255))


@recipe("checkbashisms-scripts", "checkbashisms", "linter", ["checkbashisms", "--version"], needs=("checkbashisms",))
def _checkbashisms(root):
    """Write the `checkbashisms-scripts` project under `root`; return its command and signals."""
    write(root, "scripts/deploy.sh", """
        #!/bin/sh
        set -e
        target=${1:-staging}
        if [[ "$target" == prod ]]; then
            echo "deploying to production"
        fi
        for f in $(ls build); do cp "build/$f" /srv/app/; done
        source ./env.sh
        echo -e "done\\n"
        """)
    write(root, "scripts/clean.sh", "#!/bin/sh\nrm -rf build\n")
    return Run(["checkbashisms", "scripts/deploy.sh", "scripts/clean.sh"], [
        S("stderr", r"^possible bashism in scripts/deploy\.sh line \d+ ", "each bashism with its line"),
    ], expect_exit=exits(1))
