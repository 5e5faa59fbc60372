"""What the archive commands share: which archive, opened how, shown how much.

The ingest bridge resolves its archive here too, so this module imports no
more than the configuration and the path rules (no SQLite until a command opens one).
"""

from __future__ import annotations

import os

from yarp import config
from yarp.paths import ArchiveLocation, resolve_archive

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3


def resolve_location(explicit: str | None) -> ArchiveLocation:
    """The archive a command should use: --archive, $YARP_ARCHIVE, the configuration, the default."""
    return resolve_archive(explicit, os.environ, config.load().archive_path)


def open_archive(explicit: str | None) -> sqlite3.Connection:
    """Open the resolved archive read-only (permission and version checks included)."""
    from yarp.archive.sqlite import open_readonly

    return open_readonly(resolve_location(explicit))


def recovery_caps() -> tuple[int, int]:
    """(bytes, lines) bounds of direct recovery output, from the configuration."""
    cfg = config.load()
    return cfg.recovery_cap_bytes, cfg.recovery_cap_lines
