"""What travels between a client and the broker: the protocol, the operations, frames and their validation.

- `protocol`: `yarp.archive-broker.v1`, the handshake, envelopes and replies;
- `operations`: the agent-neutral archive operations, their JSON form and replay policy;
- `frames`: the length-prefixed frames (selector over `yarp._fastframe` and its twin);
- `validation`: the broker's strict request validation (selector over `yarp._validate` and its twin).

Importing this package imports nothing: the per-tool-call processes load only
the modules they use.
"""

#: The broker protocol's schema identifier (`protocol`). Here, where the lean
#: clients read it without importing the operation types.
SCHEMA = "yarp.archive-broker.v1"
