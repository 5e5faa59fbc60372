"""Real-agent tests skip on a developer's machine that lacks what they need, and fail in CI instead.

A real agent needs node and npm, the npm registry (before its namespace) and a
loopback-only network namespace (root). Where any is missing, `unavailable`
skips the test, unless `CI` is set (`.ci/run` sets it): there the real agents
must run, so the same reason fails the test.
"""

from __future__ import annotations

import os

import pytest


def unavailable(reason: str):
    """Skip the test for `reason`, or fail it where `CI` is set; never returns."""
    if os.environ.get("CI"):
        pytest.fail(f"a real-agent test must run in CI, but {reason}", pytrace=False)
    pytest.skip(reason)
