"""YARP: a local, exact archive of AI-agent tool calls.

The package's public surface is small on purpose; the command line (`yarp`) is a
thin layer over the library modules. Importing `yarp` must stay cheap because
`yarp run` wraps every shell command an agent executes.
"""

from yarp._version import __version__

__all__ = ["__version__"]
