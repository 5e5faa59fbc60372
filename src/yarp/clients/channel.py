"""Service requests of the per-tool-call processes: a hook event or a `yarp run` step, as text.

An agent starts `yarp hook` twice and `yarp run` once for every shell
command, so these processes hand the broker's services
(`yarp.broker.services`) one or two small requests and leave the work to it.
A request is the broker's envelope header, the service's members
(`"hook": {…}` or `"run": {…}`, written by `json_text.members`) and, for a
hook, the agent's event spliced in as the exact bytes it arrived as:

    {"schema", "correlationId", "hook": {…}, "deadlineMs": N, "event": <bytes>}

`service_request` makes the function `BrokerClient.ask` builds each attempt's
frame with, so a replay (a broker shutting down, a lost connection) rebuilds
only the header; every such request is replay-safe (the broker's operations
are idempotent by their stable identities).
"""

from yarp.clients.broker import frame
from yarp.wire import SCHEMA, json_text


def service_request(name: str, fields: dict, tail: bytes = b""):
    """The frame builder of one service request: `name`'s members from `fields`, then `tail`
    (empty, or `,"event":<JSON bytes>`) after the deadline."""
    head = json_text.members(name, fields)

    def build(correlation_id: str, deadline_ms: int) -> bytes:
        return frame(f'{{"schema":"{SCHEMA}","correlationId":"{correlation_id}",{head},'
                     f'"deadlineMs":{deadline_ms}'.encode() + tail + b"}")

    return build
