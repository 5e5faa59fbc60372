"""Bringing an archive's read summaries up to date, in the background, so that a person's first
`yarp archive stats` or `yarp archive savings` over a large archive is answered from them.

Both reports keep what they computed between runs (`stats_summary`, the
savings projection) and read only what was added since. A first run over a
heavy year of calls computes everything: about 10 s for the statistics and
30 s for the savings at 1,000,000 calls. The broker, the process that is
already there while calls are captured, starts this module as a child of its
own (`python -m yarp.archive.refresh ARCHIVE`, at a low priority and in a
session of its own) once its archive is large and enough calls were written
since (`yarp.broker.refresh`), so the work is done while nobody waits for it.

It only reads the archive, through a read-only connection, and writes the two
private files of the user's cache directory; a failure of any kind costs the
next report its time and nothing else. Two refreshes at once are harmless:
the statistics summary is replaced whole, and the savings projection is a
SQLite file whose writer waits for the other (and gives up when it is busy).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from yarp.paths import ArchiveLocation

#: How much lower than the broker's the refresh's scheduling priority is (`os.nice`).
NICE = 10


def refresh(location: ArchiveLocation, environ: Mapping[str, str] = os.environ) -> None:
    """Bring the statistics summary and the savings projection of the archive at `location` up to date.

    Raises the archive's errors (`YarpError`) as the reports would.
    """
    from yarp.archive import stats
    from yarp.archive.savings import projection
    from yarp.archive.savings import report as savings_report
    from yarp.archive.sqlite import open_readonly
    from yarp.errors import ArchiveBusy

    conn = open_readonly(location)
    try:
        stats.archive_stats(conn, location, environ=environ)
    finally:
        conn.close()
    conn = projection.connect(location, persistent=True, environ=environ)
    try:
        if projection.is_persistent(conn):  # a projection in memory would be lost at once
            savings_report.compute(conn, top=0)
    except ArchiveBusy:
        pass  # another report or refresh is completing the same projection
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    """`python -m yarp.archive.refresh ARCHIVE`: exit 0 once refreshed, 1 when it could not be."""
    from yarp.errors import YarpError

    if len(argv) != 1 or not os.path.isabs(argv[0]):
        return 64
    try:
        os.nice(NICE)
    except OSError:
        pass
    try:
        refresh(ArchiveLocation(path=argv[0], is_default=False))
    except (YarpError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
