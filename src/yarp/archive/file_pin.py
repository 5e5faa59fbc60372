"""The archive file the writer opened, held by a descriptor of its own.

The broker keeps one writable connection open for as long as it runs. If the
archive's directory is removed (`rm -rf ~/.local/share/yarp`, an uninstall)
or another file is moved over the archive, SQLite goes on writing the file it
opened, which nobody can read any more. A `FilePin` lets the writer tell, with
one `fstat` of its descriptor and one `stat` of the path, that its file is
still the one at the archive path: the same device and inode, and not
unlinked (`st_nlink > 0`).

The descriptor is opened right after SQLite opened the file, while the
broker holds its startup lock, and is closed only after the connection:
closing any descriptor of a file drops every POSIX lock the process holds on
it, SQLite's included.
"""

import os

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class FilePin:
    """A descriptor on the archive file the writer opened, and the path it must still be found at."""

    __slots__ = ("path", "fd", "identity")

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, _FLAGS)
        st = os.fstat(self.fd)
        self.identity = (st.st_dev, st.st_ino)

    def still_at_path(self) -> bool:
        """Whether the pinned file is still linked and is the file the path names."""
        try:
            if os.fstat(self.fd).st_nlink < 1:
                return False
            named = os.stat(self.path)
        except OSError:
            return False
        return (named.st_dev, named.st_ino) == self.identity

    def close(self) -> None:
        """Close the descriptor (after the SQLite connection on the same file is closed)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
