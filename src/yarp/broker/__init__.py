"""`yarp archive broker`: the on-demand process that owns the archive's only writer.

One module per concept:

* `lifecycle` — locks, socket, ready pipe, serving, idle exit and shutdown;
* `connection` — one client connection (a `BufferedProtocol` reading straight
  into the frame splitter) and its explicit `State`;
* `admission` — one request per client, the global count and byte budgets,
  and who waits for room;
* `sequencer` — each source's operation order, replays of an operation in flight;
* `handlers` — the operation table: what each kind's preparation is;
* `server` — the request path, from an admitted frame to its reply, as loop
  callbacks (no asyncio Task per request);
* `writer` — the one thread that applies batches to SQLite, fed through a
  queue and stopped by a sentinel;
* `services` — the work the per-tool-call clients hand the warm broker
  (hook events, `yarp run` steps, an agent's transcripts).

Envelopes and operations are validated by `yarp.wire.validation` (compiled). The
broker never logs payloads, command text or source identities, opens no TCP
port and answers only peers with its own user id.

Importing this package imports nothing; `lifecycle.run` starts a broker.
"""
