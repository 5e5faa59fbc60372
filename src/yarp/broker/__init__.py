"""`yarp archive broker`: the on-demand process that owns the archive's only writer.

One module per concept:

* `lifecycle` — locks, socket, ready pipe, serving, idle exit and shutdown;
* `connection` — one client connection (a `BufferedProtocol` reading straight
  into the frame splitter) and its explicit `State`;
* `admission` — one request per client, the global count and byte budgets,
  and who waits for room;
* `sequencer` — each source's operation order, replays of an operation in flight;
* `dispatch` — the operation table: what each kind's preparation is;
* `server` — the request path, from an admitted frame to its reply, as loop
  callbacks (no asyncio Task per request);
* `writer` — the one thread that applies batches to SQLite, fed through a
  queue and stopped by a sentinel.

Envelopes and operations are validated by `yarp.validate` (compiled). The
broker never logs payloads, command text or source identities, opens no TCP
port and answers only peers with its own user id.
"""

from __future__ import annotations

from .dispatch import HANDLERS, prepare_request
from .lifecycle import (
    IDLE_ENV,
    INLINE_ENV,
    POOL_ENV,
    idle_ms_from_env,
    inline_bytes_from_env,
    pool_kind_from_env,
    run,
)
from .server import Broker

__all__ = ["Broker", "HANDLERS", "IDLE_ENV", "INLINE_ENV", "POOL_ENV", "idle_ms_from_env", "inline_bytes_from_env",
           "pool_kind_from_env", "prepare_request", "run"]
