"""Install and remove an agent adapter that ships inside this package as TypeScript (`ADAPTER = "extension"`).

An adapter's sources sit in package data: its own files in its agent's folder
(`yarp/agents/<agent>/`, named by its record's `EXTENSION_FILES`) and what
the adapters share in `yarp/agents/ts/` (the ingest bridge client, frames, the
call lifecycle, result content blocks, the `yarp` commands they run). `install`
copies them, keeping that layout (`<agent>/…` and `ts/…`; an adapter built on
another agent's, `EXTENSION_BASE`, gets that one's files beside it), into a
folder of ours the agent can load (its `hooks` part's `config_dir`), with one
record, `yarp-install.json`: the format, the YARP version, the `yarp` that
installed it (which the adapter then runs: its console script, or a
`yarp-launcher` written beside the files for a `python -m yarp` install) and
the SHA-256 of every file written. Nothing is fetched and no npm is needed. A
record may also ask for a `package.json` manifest at the folder's root
(`EXTENSION_MANIFEST`: the one beside its files, naming them in `<agent>/`),
or an entry file outside our folder that re-exports the adapter
(`EXTENSION_ENTRY`: where, from which module, which name).

The record is what makes the folder ours. `install` refuses a folder (or a
link, or a file) without it, and an entry file it did not write; it builds
the new copy in a private sibling folder and swaps it in with renames, so an
agent starting meanwhile sees the old copy or the new one, never half of each.
`uninstall` removes only the files the record names whose bytes are
unchanged, then the folder if nothing else is left in it, and the folders
the install made around it (`madeFolders`) that are left empty; a file the
user changed or added is kept and reported.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass

from yarp._version import __version__
from yarp.errors import DataError, UsageError

RECORD_NAME = "yarp-install.json"
RECORD_FORMAT = 2
#: The folder of ours under the agent's folder.
FOLDER_NAME = "yarp"
#: The launcher written beside the files when this yarp has no console script of its own.
LAUNCHER_NAME = "yarp-launcher"
#: The shared TypeScript every adapter imports as `../ts/…` (beside the agents' folders, and beside
#: each installed adapter's `<agent>/`).
SHARED = ("frame.ts", "ingest.ts", "content.ts", "yarp-cli.ts", "lifecycle.ts")
#: The largest record we read back.
_MAX_RECORD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Layout:
    """What an agent's adapter is made of (from its record): its own files in `folder`, and the entry
    file its agent loads when that lies outside our folder."""

    own: tuple[str, ...]
    #: A package manifest written at the folder's root (the one beside the files names them there).
    manifest: bool = False
    #: (path relative to the agent's config folder, the module it re-exports from, the name it exports).
    entry: tuple[str, str, str] | None = None
    #: The agent whose adapter this one is built on: its own files are installed too, under `<base>/`.
    base: str | None = None
    #: Where the own files are in the package: the agent's folder.
    folder: str | None = None


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
    #: The yarp the adapter stands for (`yarp_bin` is a launcher of it when they differ).
    yarp_argv: tuple[str, ...]
    current: bool


def _check_agent(agent: str) -> Layout:
    """The layout of an extension agent `yarp.agents` holds: its record's files, in its own folder."""
    from yarp import agents

    record = agents.record(agent)
    if record is None or record.ADAPTER != agents.EXTENSION:
        raise UsageError("unknown agent")
    return Layout(record.EXTENSION_FILES, getattr(record, "EXTENSION_MANIFEST", False),
                  getattr(record, "EXTENSION_ENTRY", None), getattr(record, "EXTENSION_BASE", None),
                  os.path.dirname(os.path.abspath(record.__file__)))


def _shared_folder() -> str:
    """The shared TypeScript's folder: `ts/` beside the agents' folders."""
    from yarp import agents

    return os.path.join(os.path.dirname(os.path.abspath(agents.__file__)), "ts")


def config_dir(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The agent's folder that holds ours (and an entry's folder), for `scope` (its `hooks` part's `config_dir`)."""
    from yarp import agents

    _check_agent(agent)
    return agents.part(agent, "hooks").config_dir(scope, environ, cwd)


def install_path(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """Where `install` puts the agent's adapter folder."""
    return os.path.join(config_dir(agent, scope, environ, cwd), FOLDER_NAME)


def entry_path(agent: str, folder: str) -> str | None:
    """The entry file outside `folder` that the agent loads (its record's `EXTENSION_ENTRY`), or None."""
    entry = _check_agent(agent).entry
    return os.path.join(os.path.dirname(folder), entry[0]) if entry else None


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        raise DataError(f"this yarp installation lacks the {what}; reinstall yarp") from None


def shipped_files(agent: str) -> dict[str, bytes]:
    """The adapter's files as this package ships them: path in the installed folder -> bytes.

    Raises `DataError` when one is missing (a broken installation: `yarp doctor` says so too).
    """
    layout = _check_agent(agent)
    files = {}
    for owner in (agent,) if layout.base is None else (layout.base, agent):
        for name in _check_agent(owner).own:
            files[f"{owner}/{name}"] = _read(os.path.join(_check_agent(owner).folder, name),
                                             f"{owner} adapter's {name}")
    for name in SHARED:
        files[f"ts/{name}"] = _read(os.path.join(_shared_folder(), name), f"adapters' shared {name}")
    if layout.manifest:
        from yarp import agents

        # The agent's own manifest (the one beside its files names them there; ours sit in `<agent>/`).
        shipped = json.loads(_read(os.path.join(layout.folder, "package.json"), f"{agent} adapter's package.json"))
        manifest = agents.part(agent, "hooks").manifest(shipped, f"./{agent}/")
        files["package.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    return files


def _entry_bytes(agent: str) -> bytes | None:
    entry = _check_agent(agent).entry
    if entry is None:
        return None
    return (f"// Written by `yarp hook install {agent}`; `yarp hook uninstall {agent}` removes it.\n"
            f'export {{ {entry[2]} }} from "../{FOLDER_NAME}/{entry[1]}"\n').encode()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _launcher(argv: list[str]) -> bytes:
    return f'#!/bin/sh\nexec {shlex.join(argv)} "$@"\n'.encode()


def _record_bytes(agent: str, files: dict[str, bytes], yarp_bin: str, yarp_argv: list[str],
                  entry: tuple[str, bytes] | None, made: list[str]) -> bytes:
    record = {"format": RECORD_FORMAT, "agent": agent, "version": __version__, "yarpBin": yarp_bin,
              "yarpArgv": yarp_argv, "files": {name: _digest(data) for name, data in sorted(files.items())}}
    if entry is not None:
        record["entry"] = {"path": entry[0], "sha256": _digest(entry[1])}
    if made:
        # The folders this install created around ours, which uninstall removes when they are left empty.
        record["madeFolders"] = made
    return (json.dumps(record, indent=2) + "\n").encode()


def _missing_folders(*paths: str | None) -> list[str]:
    """The folders that would have to be made to hold each of `paths` (a file's or folder's parent), deepest first."""
    made = []
    for path in paths:
        folder = os.path.dirname(path) if path else None
        while folder and not os.path.lexists(folder) and folder not in made:
            made.append(folder)
            folder = os.path.dirname(folder)
    return sorted(made, key=len, reverse=True)


def read_record(path: str) -> dict | None:
    """The install record of the folder at `path`, or None when there is none (a folder not ours)."""
    try:
        with open(os.path.join(path, RECORD_NAME), "rb") as handle:
            data = handle.read(_MAX_RECORD_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise DataError(f"cannot read the adapter's install record: {exc.strerror}") from None
    try:
        record = json.loads(data) if len(data) <= _MAX_RECORD_BYTES else None
    except ValueError:
        record = None
    if (not isinstance(record, dict) or record.get("format") not in (1, RECORD_FORMAT)
            or not isinstance(record.get("files"), dict)):
        raise DataError("the adapter's install record is not one yarp wrote; remove the folder by hand")
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


def _tree(path: str) -> list[str]:
    """Every entry under `path` but the record, as relative paths (a link or special file included, not followed)."""
    found = []
    for directory, dirs, names in os.walk(path):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
            relative = os.path.relpath(os.path.join(directory, name), path)
            if relative != RECORD_NAME:
                found.append(relative.replace(os.sep, "/"))
    return sorted(found)


def _changed_files(path: str, record: dict) -> list[str]:
    """Files in the folder that the record does not name, or whose bytes differ from it."""
    expected = record["files"]
    found = []
    for name in _tree(path):
        full = os.path.join(path, name)
        if name not in expected or not os.path.isfile(full) or os.path.islink(full):
            found.append(name)
            continue
        with open(full, "rb") as handle:
            if _digest(handle.read()) != expected[name]:
                found.append(name)
    return found


def _entry_state(agent: str, folder: str, record: dict | None) -> str:
    """`absent`, `ours` (the bytes the record names), or `foreign` (anything else at the entry's path)."""
    path = entry_path(agent, folder)
    if path is None or not os.path.lexists(path):
        return "absent"
    expected = (record or {}).get("entry") or {}
    if os.path.islink(path) or not os.path.isfile(path):
        return "foreign"
    with open(path, "rb") as handle:
        return "ours" if _digest(handle.read()) == expected.get("sha256") else "foreign"


def install(agent: str, path: str, yarp_argv: list[str]) -> ExtensionChange:
    """Put this package's adapter for `agent` at `path`, running `yarp_argv`; replace an older copy of ours.

    The adapter runs one executable: `yarp_argv` itself when it is the console
    script, else a launcher written beside it (`python -m yarp`). Raises
    `DataError` for a folder (or an entry file) that is not ours, or ours with
    files the user changed or added.
    """
    files = shipped_files(agent)
    if len(yarp_argv) == 1:
        yarp_bin = yarp_argv[0]
    else:
        files[LAUNCHER_NAME] = _launcher(yarp_argv)
        yarp_bin = os.path.join(path, LAUNCHER_NAME)
    record = _check_target(path)
    entry_file, entry_text = entry_path(agent, path), _entry_bytes(agent)
    entry = (os.path.relpath(entry_file, os.path.dirname(path)), entry_text) if entry_file else None
    if entry_file and _entry_state(agent, path, record) == "foreign":
        raise DataError(f"{entry_file} exists and was not written by yarp; it was left unchanged")
    made = _missing_folders(path, entry_file)
    if record is not None:
        kept = record.get("madeFolders")
        made = sorted(set(made) | {f for f in (kept if isinstance(kept, list) else ()) if isinstance(f, str)},
                      key=len, reverse=True)
    wanted = _record_bytes(agent, files, yarp_bin, yarp_argv, entry, made)
    if record is not None:
        changed = _changed_files(path, record)
        with open(os.path.join(path, RECORD_NAME), "rb") as handle:
            same = handle.read() == wanted
        entry_ok = entry_file is None or _entry_state(agent, path, record) == "ours"
        if same and entry_ok and not set(changed) & set(record["files"]):
            return ExtensionChange(path, False)  # what we installed is intact (files the user added stay)
        if changed:
            raise DataError(f"{len(changed)} file(s) in {path} were changed or added since yarp installed it "
                            f"({', '.join(changed[:3])}); move them away, then install again")
    _swap_in(path, record is not None, files, wanted)
    if entry_file is not None:
        _write_replacing(entry_file, entry_text)
    return ExtensionChange(path, True)


def _swap_in(path: str, replacing: bool, files: dict[str, bytes], record: bytes) -> None:
    """Build the folder beside `path` and rename it into place (the old copy renamed away first)."""
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".yarp-install-", dir=parent)
    try:
        for name, data in files.items():
            target = os.path.join(staging, *name.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _write(target, data, 0o755 if name == LAUNCHER_NAME else 0o644)
        _write(os.path.join(staging, RECORD_NAME), record, 0o644)
        os.chmod(staging, 0o755)
        if not replacing:
            os.rename(staging, path)
        else:
            retired = tempfile.mkdtemp(prefix=".yarp-retired-", dir=parent)
            os.rename(path, os.path.join(retired, FOLDER_NAME))
            os.rename(staging, path)
            shutil.rmtree(retired, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_replacing(path: str, data: bytes) -> None:
    """Write `path` (ours, or absent) through a temporary file and a rename."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.yarp-{os.getpid()}"
    _write(temporary, data, 0o644)
    os.replace(temporary, path)


def uninstall(agent: str, path: str) -> ExtensionChange:
    """Remove what `install` put at `path`: unchanged recorded files, the record, the entry file it
    wrote, then the empty folders. A file the user changed or added is kept and named in `kept`.

    Raises `DataError` for a folder that is not ours.
    """
    record = _check_target(path)
    if record is None:
        return ExtensionChange(path, False)
    kept = tuple(_changed_files(path, record))
    if _entry_state(agent, path, record) == "ours":
        os.unlink(entry_path(agent, path))
    for name in record["files"]:
        if name not in kept:
            try:
                os.unlink(os.path.join(path, *name.split("/")))
            except FileNotFoundError:
                pass
    os.unlink(os.path.join(path, RECORD_NAME))
    made = record.get("madeFolders")
    made = [f for f in made if isinstance(f, str) and os.path.isabs(f)] if isinstance(made, list) else []
    walked = [directory for directory, _, _ in os.walk(path)]
    for directory in sorted(walked, key=len, reverse=True) + sorted(made, key=len, reverse=True):
        try:
            os.rmdir(directory)
        except OSError:
            pass  # holds a file the user kept, or something else
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
        current = current and (entry_path(agent, path) is None or _entry_state(agent, path, record) == "ours")
    except (DataError, OSError):
        current = False
    version = record.get("version")
    yarp_bin = record.get("yarpBin")
    argv = record.get("yarpArgv")
    argv = tuple(argv) if isinstance(argv, list) and all(isinstance(a, str) for a in argv) else ()
    return InstalledExtension(path, version if isinstance(version, str) else None,
                              yarp_bin if isinstance(yarp_bin, str) else None, argv, current)
