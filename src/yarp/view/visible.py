"""The visible form of a run's output: command-aware pruning, then the global cap.

Computed in the broker (`yarp.broker.services.run`), where the rule set is already
loaded, from the runner's spool files: the exact `before` files stay as the
command wrote them; the pruned and capped form is written into the two
`after` files the runner named, created here only when something is
shortened (0600, exclusive, never following a link; the reducers and the cap
then truncate them in place, so their mode never widens). An unchanged stream
keeps no after form: its before file is named twice.

Every path comes from a client. The four must sit in one directory; the
before files are checked with `lstat` (a regular file, owned by this user,
private, exactly as declared: device, inode, size); an after file that
already exists (a replayed request) must pass the same checks. The broker
runs as the same user as its clients, so this guards against mistakes and
races, not against a more privileged caller.
"""

from __future__ import annotations

import os

from yarp import private_files
from yarp.errors import UnsafePath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from yarp.wire.protocol import SpoolFiles  # the run request's spool files, validated with the request


def _check_private(path: str) -> os.stat_result:
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise UnsafePath(f"spool file cannot be examined: {exc.strerror or 'I/O error'}") from None
    problem = private_files.problem_of(st, directory=False)
    if problem is not None:
        raise UnsafePath(f"spool file {problem}")
    return st


def check_spool(files: SpoolFiles) -> None:
    """Refuse spool files that are not the runner's private files, as declared."""
    directory = os.path.dirname(files.stdout.path)
    for path in (files.stderr.path, files.stdout_after, files.stderr_after):
        if os.path.dirname(path) != directory:
            raise UnsafePath("spool files are not in one directory")
    for declared in (files.stdout, files.stderr):
        st = _check_private(declared.path)
        if (st.st_dev, st.st_ino, st.st_size) != (declared.device, declared.inode, declared.size):
            raise UnsafePath("spool file is not the file that was declared")


def _open_after(path: str) -> int:
    """An after file for writing: created private, or (a replayed request) the private one already there."""
    try:
        return private_files.create_private(path)
    except FileExistsError:
        _check_private(path)
        return os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)


def _prepare_after(files: SpoolFiles) -> None:
    for path in (files.stdout_after, files.stderr_after):
        os.close(_open_after(path))


def _write_after(path: str, data: bytes) -> None:
    fd = _open_after(path)
    try:
        private_files.write_all(fd, data)
    finally:
        os.close(fd)


def write_view(rule, status: int, cap: int, files: SpoolFiles, ref: str | None,
               completeness: str = "complete") -> tuple[bool, bool]:
    """Write the visible form; return whether stdout and stderr are shown from their after files.

    `rule` is the selected reduce rule (None: no pruning); `cap` the global cap
    in bytes (0: none); `ref` the call's archive reference, which every marker
    names (needed only when something is shortened); `completeness` what the
    cap's marker says of the archived streams (`incomplete` when the archive
    keeps only the first bytes of a stream over its payload limit).
    """
    out, err = files.stdout.path, files.stderr.path
    out_after = err_after = False
    # The markers of a reducer's view, handed to the cap: it never reads them back from the text.
    out_markers = err_markers = None
    # An output that fits under the cap is shown exactly as the command wrote it, rule or not.
    if rule is not None and not (0 < cap and os.path.getsize(out) + os.path.getsize(err) <= cap):
        from yarp.view.reducers import reduce_stream

        _prepare_after(files)
        reduced = reduce_stream(rule, status, out, files.stdout_after, ref=ref, stream_name="stdout")
        if reduced.reduced:
            out, out_after, out_markers = files.stdout_after, True, reduced.markers
        reduced = reduce_stream(rule, status, err, files.stderr_after, ref=ref, stream_name="stderr")
        if reduced.reduced:
            err, err_after, err_markers = files.stderr_after, True, reduced.markers
    if cap:
        out_size, err_size = os.path.getsize(out), os.path.getsize(err)
        if out_size + err_size > cap:
            from yarp.view.cap import cap_files

            # The view's marker names the stream holding the first omitted line itself.
            capped = cap_files([out, err], cap=cap, archive_ref=ref, completeness=completeness,
                               exit_code=status, markers=(out_markers, err_markers))
            if capped is not None:
                _write_after(files.stdout_after, capped[0])
                _write_after(files.stderr_after, capped[1])
                out_after = err_after = True
    return out_after, err_after
