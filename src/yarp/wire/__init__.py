"""What travels between a client and the broker: the protocol, the operations, frames and their validation.

- `protocol`: `yarp.archive-broker.v1`, the handshake, envelopes and replies;
- `operations`: the agent-neutral archive operations, their JSON form and replay policy;
- `frames`: the length-prefixed frames (selector over `yarp._fastframe` and its twin);
- `validation`: the broker's strict request validation (selector over `yarp._validate` and its twin).

The JSON text codec both sides use (`yarp.json_text`) and the protocol's schema
identifier (`yarp._version.SCHEMA`) sit at the package root: the per-tool-call
clients need them, and this package on their path would cost each of them an
import (design/packaging.md, "The folders follow the path of a tool call").

Importing this package imports nothing: the per-tool-call processes load only
the modules they use.
"""
