"""The switches that select pure-Python twins and the broker's event loop, read in one place.

`YARP_NO_EXTENSIONS=1` (any non-empty value other than ``0``) makes every selector
module import the pure-Python implementation. `setup.py` loads this file by path so
that the build honours the same variable. `YARP_EVENT_LOOP=asyncio` runs the
broker on the standard library's event loop instead of uvloop (the test suite
proves both). Keep this module free of imports beyond `os`: it runs inside
`setup.py` before the package is installed.
"""

import os


def no_extensions(environ=os.environ) -> bool:
    """Return True when the environment asks for the pure-Python twins."""
    value = environ.get("YARP_NO_EXTENSIONS", "")
    return value not in ("", "0")


NO_EXTENSIONS: bool = no_extensions()


def event_loop(environ=os.environ) -> str:
    """`uvloop` (the default) or `asyncio`; any other value is refused at broker start."""
    return environ.get("YARP_EVENT_LOOP", "") or "uvloop"
