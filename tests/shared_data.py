"""Where the shared specification and recorded real data live.

They sit beside the repository (`<repo>/../shared`), both in a developer's
checkout and in CI's fresh clone; `YARP_SHARED_DIR` overrides the location.
Tests that need them skip cleanly when they are absent; nothing is copied
into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DIR = Path(os.environ.get("YARP_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")


def shared_path(*parts: str) -> Path:
    return SHARED_DIR.joinpath(*parts)
