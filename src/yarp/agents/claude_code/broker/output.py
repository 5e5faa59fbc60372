"""What is Claude Code's own in a `PostToolUse` event: its version, the file of a large output, the answer.

Runs in the broker (Claude Code's service, `service`), never in the hook process.

* **The version boundary.** Claude Code takes `hookSpecificOutput.updatedToolOutput`
  (a replacement of a built-in tool's result, checked against that tool's own
  output shape) from 2.1.121 on; 2.1.120 and older know only
  `updatedMCPToolOutput`. The event names no version, but every line Claude
  Code writes to the session transcript (`transcript_path`) carries its
  `"version"`: `transcript_version` reads the newest one from the file's end.
* **The file of a large output.** When a Bash output is over Claude Code's
  own limit, its `tool_response` holds the first 30,000 characters in `stdout`
  and names the file holding every byte: `persistedOutputPath` (under
  `<transcript's folder>/<session id>/tool-results/`) and `persistedOutputSize`.
  `read_persisted` reads it as an approved source output: see its checks.
* **The text a result shows** (`host_text`): of a Bash, Read (text file) or
  Grep (content mode) result, with how to put a view in its place keeping the
  result's own shape (Claude Code checks a replacement against the tool's
  output shape and refuses any other).
* **The answer** that replaces the result: `updated_output_answer`.
"""

from __future__ import annotations

import os
import re
import stat

from yarp import private_files
from yarp.limits import MAX_STREAM_FILE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: The first Claude Code version that takes `updatedToolOutput` for built-in tools.
UPDATED_OUTPUT_SINCE = (2, 1, 121)
#: Claude Code's Bash result fields naming the file that holds a large output whole.
PERSISTED_PATH = "persistedOutputPath"
PERSISTED_SIZE = "persistedOutputSize"
#: How far from its end the transcript is searched for Claude Code's version.
_VERSION_WINDOW = 64 * 1024
_VERSION_SEARCH_BYTES = 1 << 20
_VERSION = re.compile(rb'"version":"(\d{1,4})\.(\d{1,4})\.(\d{1,6})')


def transcript_version(path: object) -> tuple[int, int, int] | None:
    """The newest Claude Code version the session transcript at `path` names, or None.

    The file is opened without following a link and must be a regular file of
    this user; at most its last MiB is read, from the end, a window at a time.
    """
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
        return None
    try:
        fd, st = private_files.open_for_reading(path, private=False, owned=True)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        end = st.st_size
        floor = max(0, end - _VERSION_SEARCH_BYTES)
        while end > floor:
            start = max(floor, end - _VERSION_WINDOW)
            # A window overlaps the next one by a few bytes, so a match on the seam is seen.
            data = os.pread(fd, min(st.st_size, end + 32) - start, start)
            found = None
            for found in _VERSION.finditer(data):
                pass
            if found is not None:
                return int(found[1]), int(found[2]), int(found[3])
            end = start
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def takes_updated_output(version: tuple[int, int, int] | None) -> bool:
    """Whether a Claude Code of `version` takes `updatedToolOutput` (an unknown version: no)."""
    return version is not None and version >= UPDATED_OUTPUT_SINCE


class PersistedOutput:
    """The complete output Claude Code saved to a file, read once: its bytes, or why it was refused."""

    __slots__ = ("data", "problem")

    def __init__(self, data: bytes | None, problem: str | None = None) -> None:
        self.data = data
        self.problem = problem


def persisted_file(response: object) -> tuple[str, int] | None:
    """(path, declared size) of the file a Bash result names as its whole output, or None."""
    if not isinstance(response, dict):
        return None
    path, size = response.get(PERSISTED_PATH), response.get(PERSISTED_SIZE)
    if not isinstance(path, str) or not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return None
    return path, size


def read_persisted(path: str, size: int, transcript_path: object, session_id: str) -> PersistedOutput:
    """The bytes of the file Claude Code saved a large output to, as an approved source output.

    Checks, each refusing the file (the result is then archived and viewed
    from the tool response alone): the path is the session's own
    `tool-results/<name>` folder beside the transcript; the file is opened
    without following a link; it is a regular file owned by this user that no
    group or other user may write (Claude Code creates it 0644 under the usual
    umask: readable by others, and refusing that would lose the one complete
    copy; see docs/design/adapters.md); it is at most `MAX_STREAM_FILE_BYTES`;
    and it holds what the event declared: `persistedOutputSize` is its byte
    size (measured with non-ASCII output too). The bytes are read once and held: the view and the
    archive use the same copy, so a later change to the file cannot split them.
    """
    if not isinstance(transcript_path, str) or not os.path.isabs(transcript_path) or not os.path.isabs(path):
        return PersistedOutput(None, "has no transcript to place it")
    folder = os.path.join(os.path.dirname(transcript_path), session_id, "tool-results")
    if os.path.dirname(path) != folder or os.path.normpath(path) != path:
        return PersistedOutput(None, "is not in the session's tool-results folder")
    try:
        fd, st = private_files.open_for_reading(path, private=False, owned=True)
    except FileNotFoundError:
        return PersistedOutput(None, "does not exist")
    except private_files.PrivatePathProblem as exc:
        return PersistedOutput(None, exc.problem)
    except OSError as exc:
        return PersistedOutput(None, f"cannot be opened: {exc.strerror or 'I/O error'}")
    try:
        if stat.S_IMODE(st.st_mode) & 0o022:
            return PersistedOutput(None, "may be written by other users")
        if st.st_size > MAX_STREAM_FILE_BYTES:
            return PersistedOutput(None, f"is larger than {MAX_STREAM_FILE_BYTES} bytes")
        data = private_files.read_bounded(fd, st.st_size)
    except OSError as exc:
        return PersistedOutput(None, f"cannot be read: {exc.strerror or 'I/O error'}")
    finally:
        os.close(fd)
    if len(data) != st.st_size:
        return PersistedOutput(None, "changed while it was read")
    if len(data) != size:
        return PersistedOutput(None, "is not the size the event declared")
    return PersistedOutput(data)


def updated_output_answer(output: object) -> dict:
    """The `PostToolUse` answer that replaces the tool's result the model is shown."""
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}


class HostText:
    """The text a tool's result shows the model, its completeness as the host reports it, and
    `place(view)`: the result with the view in that text's place."""

    __slots__ = ("text", "completeness", "place", "numbered")

    def __init__(self, text: str, completeness: str, place: Callable[[str], object], numbered: bool = False) -> None:
        self.text = text
        self.completeness = completeness
        self.place = place
        #: The host numbers the lines it shows (Read): only a head view keeps the numbers true.
        self.numbered = numbered


#: The Bash result's fields that name the file of a large output: a view drops them, or the host
#: would wrap the view in its own "output too large" notice again.
_PERSISTED = (PERSISTED_PATH, PERSISTED_SIZE)


def host_text(tool_name: str, response: object) -> HostText | None:
    """The shown text of a Claude Code Bash, Read (text file) or Grep (content mode) result, else None."""
    if not isinstance(response, dict):
        return None
    if tool_name == "Bash":
        stdout, stderr = response.get("stdout"), response.get("stderr", "")
        if not isinstance(stdout, str) or not isinstance(stderr, str):
            return None
        # The host shows stderr after stdout on a line of its own; recent versions merge both into stdout.
        text = stdout + "\n" + stderr if stderr else stdout
        completeness = "incomplete" if isinstance(response.get(_PERSISTED[0]), str) else "complete"

        def place_shell(view: str) -> dict:
            out = {k: v for k, v in response.items() if k not in _PERSISTED}
            out["stdout"] = view
            if "stderr" in out:
                out["stderr"] = ""
            return out

        return HostText(text, completeness, place_shell)
    if tool_name == "Read":
        file = response.get("file")
        if response.get("type") != "text" or not isinstance(file, dict) or not isinstance(file.get("content"), str):
            return None
        lines, start, total = file.get("numLines"), file.get("startLine"), file.get("totalLines")
        whole = isinstance(lines, int) and start == 1 and isinstance(total, int) and lines >= total
        return HostText(file["content"], "complete" if whole else "incomplete",
                        lambda view: {**response, "file": {**file, "content": view}}, numbered=True)
    if tool_name == "Grep":
        content = response.get("content")
        if response.get("mode") != "content" or not isinstance(content, str):
            return None
        cut = response.get("appliedLimit") is not None
        return HostText(content, "incomplete" if cut else "complete", lambda view: {**response, "content": view})
    return None
