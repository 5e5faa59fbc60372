"""Install and remove an agent extension that ships inside this package (the Pi extension).

Pi loads TypeScript extensions from a folder: ``$PI_CODING_AGENT_DIR/extensions``
(else ``~/.pi/agent/extensions``) for the user, ``./.pi/extensions`` for a
project. `install` copies the extension's files from package data into
``<that folder>/yarp/``, with the data files it reads (``salience.json``) and
one record, ``yarp-install.json``: the format, the YARP version, the `yarp`
that installed it (which the extension then runs: its console script, or a
``yarp-launcher`` written beside the files for a `python -m yarp` install)
and the SHA-256 of every file written. Nothing is fetched and no npm is needed.

The record is what makes the folder ours. `install` refuses a folder (or a
link, or a file) without it; it builds the new copy in a private sibling
folder and swaps it in with renames, so an agent starting meanwhile sees the
old copy or the new one, never half of each. `uninstall` removes only the
files the record names whose bytes are unchanged, then the folder if nothing
else is left in it; a file the user changed or added is kept and reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

from yarp._version import __version__
from yarp.errors import DataError, UsageError

RECORD_NAME = "yarp-install.json"
RECORD_FORMAT = 1
#: The folder name under the agent's extensions folder.
FOLDER_NAME = "yarp"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: agent -> (files under the package's hooks/<agent>/ to copy, extra package files copied beside them)
SHIPPED = {
    "pi": (("package.json", "index.ts", "extension.ts", "ingest.ts", "frame.ts", "cap.ts", "yarp-cli.ts"),
           (("rules", "salience.json"),)),
}
#: The largest record we read back.
_MAX_RECORD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ExtensionChange:
    """What an install or uninstall did: the folder, whether it changed, and files it had to keep."""

    path: str
    changed: bool
    kept: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InstalledExtension:
    """An installed copy as its record describes it, and how it compares with this package's files."""

    path: str
    version: str | None
    yarp_bin: str | None
    #: The yarp the extension stands for (`yarp_bin` is a launcher of it when they differ).
    yarp_argv: tuple[str, ...]
    current: bool


def extensions_dir(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The folder the agent loads extensions from, for `scope` (`user` or `project`)."""
    if agent != "pi":
        raise UsageError("unknown agent")
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".pi", "extensions")
    agent_dir = environ.get("PI_CODING_AGENT_DIR") or ""
    if not os.path.isabs(agent_dir):
        agent_dir = os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".pi", "agent")
    return os.path.join(agent_dir, "extensions")


def install_path(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """Where `install` puts the agent's extension."""
    return os.path.join(extensions_dir(agent, scope, environ, cwd), FOLDER_NAME)


def shipped_files(agent: str) -> dict[str, bytes]:
    """The extension's files as this package ships them: name in the installed folder -> bytes.

    Raises `DataError` when one is missing (a broken installation: `yarp doctor` says so too).
    """
    names, extras = SHIPPED[agent]
    sources = [(name, os.path.join(_PACKAGE, "hooks", agent, name)) for name in names]
    sources += [(parts[-1], os.path.join(_PACKAGE, *parts)) for parts in extras]
    files = {}
    for name, source in sources:
        try:
            with open(source, "rb") as handle:
                files[name] = handle.read()
        except OSError:
            raise DataError(f"this yarp installation lacks the {agent} extension's {name}; reinstall yarp") from None
    return files


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: The launcher written beside the extension when this yarp has no console script of its own.
LAUNCHER_NAME = "yarp-launcher"


def _launcher(argv: list[str]) -> bytes:
    import shlex

    return f"#!/bin/sh\nexec {shlex.join(argv)} \"$@\"\n".encode()


def _record_bytes(agent: str, files: dict[str, bytes], yarp_bin: str, yarp_argv: list[str]) -> bytes:
    record = {"format": RECORD_FORMAT, "agent": agent, "version": __version__, "yarpBin": yarp_bin,
              "yarpArgv": yarp_argv, "files": {name: _digest(data) for name, data in sorted(files.items())}}
    return (json.dumps(record, indent=2) + "\n").encode()


def read_record(path: str) -> dict | None:
    """The install record of the folder at `path`, or None when there is none (a folder not ours)."""
    record_path = os.path.join(path, RECORD_NAME)
    try:
        with open(record_path, "rb") as handle:
            data = handle.read(_MAX_RECORD_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise DataError(f"cannot read the extension's install record: {exc.strerror}") from None
    try:
        record = json.loads(data) if len(data) <= _MAX_RECORD_BYTES else None
    except ValueError:
        record = None
    if (not isinstance(record, dict) or record.get("format") != RECORD_FORMAT
            or not isinstance(record.get("files"), dict)):
        raise DataError("the extension's install record is not one yarp wrote; remove the folder by hand")
    return record


def _check_target(path: str) -> dict | None:
    """The record of an existing install at `path` (None when nothing is there); refuses anything else."""
    if os.path.islink(path):
        raise DataError(f"{path} is a symbolic link (an install from a checkout?); remove it, then install again")
    if not os.path.lexists(path):
        return None
    if not os.path.isdir(path):
        raise DataError(f"{path} exists and is not a folder; it was left unchanged")
    record = read_record(path)
    if record is None:
        raise DataError(f"{path} exists and was not installed by yarp; it was left unchanged")
    return record


def _changed_files(path: str, record: dict) -> list[str]:
    """Files in the folder that the record does not name, or whose bytes differ from it."""
    expected = record["files"]
    found = []
    for name in sorted(os.listdir(path)):
        if name == RECORD_NAME:
            continue
        full = os.path.join(path, name)
        if name not in expected or not os.path.isfile(full) or os.path.islink(full):
            found.append(name)
            continue
        with open(full, "rb") as handle:
            if _digest(handle.read()) != expected[name]:
                found.append(name)
    return found


def install(agent: str, path: str, yarp_argv: list[str]) -> ExtensionChange:
    """Put this package's extension at `path`, running `yarp_argv`; replace an older copy of ours.

    The extension runs one executable: `yarp_argv` itself when it is the
    console script, else a launcher written beside it (`python -m yarp`).
    Raises `DataError` for a folder that is not ours, or ours with files the
    user changed or added.
    """
    files = shipped_files(agent)
    if len(yarp_argv) == 1:
        yarp_bin = yarp_argv[0]
    else:
        files[LAUNCHER_NAME] = _launcher(yarp_argv)
        yarp_bin = os.path.join(path, LAUNCHER_NAME)
    record = _check_target(path)
    wanted = _record_bytes(agent, files, yarp_bin, yarp_argv)
    if record is not None:
        changed = _changed_files(path, record)
        with open(os.path.join(path, RECORD_NAME), "rb") as handle:
            same = handle.read() == wanted
        if same and not set(changed) & set(record["files"]):
            return ExtensionChange(path, False)  # what we installed is intact (files the user added stay)
        if changed:
            raise DataError(f"{len(changed)} file(s) in {path} were changed or added since yarp installed it "
                            f"({', '.join(changed[:3])}); move them away, then install again")
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".yarp-install-", dir=parent)
    try:
        for name, data in files.items():
            _write(os.path.join(staging, name), data, 0o755 if name == LAUNCHER_NAME else 0o644)
        _write(os.path.join(staging, RECORD_NAME), wanted, 0o644)
        os.chmod(staging, 0o755)
        if record is None:
            os.rename(staging, path)
        else:
            retired = tempfile.mkdtemp(prefix=".yarp-retired-", dir=parent)
            os.rename(path, os.path.join(retired, FOLDER_NAME))
            os.rename(staging, path)
            shutil.rmtree(retired, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExtensionChange(path, True)


def _write(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def uninstall(agent: str, path: str) -> ExtensionChange:
    """Remove what `install` put at `path`: unchanged recorded files, the record, then the empty folder.

    A file the user changed or added is kept and named in `kept`. Raises
    `DataError` for a folder that is not ours.
    """
    record = _check_target(path)
    if record is None:
        return ExtensionChange(path, False)
    kept = tuple(_changed_files(path, record))
    for name in record["files"]:
        if name not in kept:
            try:
                os.unlink(os.path.join(path, name))
            except FileNotFoundError:
                pass
    os.unlink(os.path.join(path, RECORD_NAME))
    if not kept:
        os.rmdir(path)
    return ExtensionChange(path, True, kept)


def installed(agent: str, path: str) -> InstalledExtension | None:
    """The copy at `path` as its record describes it, or None when nothing of ours is there.

    Raises `DataError` for a folder that is not ours (or a link).
    """
    record = _check_target(path)
    if record is None:
        return None
    shipped = {name for name in record["files"] if name != LAUNCHER_NAME}
    try:
        current = not _changed_files(path, record) and {name: record["files"][name] for name in shipped} == {
            name: _digest(data) for name, data in shipped_files(agent).items()}
    except (DataError, OSError):
        current = False
    version = record.get("version")
    yarp_bin = record.get("yarpBin")
    argv = record.get("yarpArgv")
    argv = tuple(argv) if isinstance(argv, list) and all(isinstance(a, str) for a in argv) else ()
    return InstalledExtension(path, version if isinstance(version, str) else None,
                              yarp_bin if isinstance(yarp_bin, str) else None, argv, current)
