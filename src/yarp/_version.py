"""The one place YARP's versions live: the release (read by packaging and `yarp --version`) and the
broker protocol's schema, both checked by the handshake (`yarp.wire.protocol`). Here, where the
per-tool-call clients read them without importing the wire package."""

__version__ = "0.1.0"
#: The broker protocol's schema identifier.
SCHEMA = "yarp.archive-broker.v1"
