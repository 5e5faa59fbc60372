"""The processes that send work to the broker: each starts, asks, answers its agent and exits.

- `broker`: the one broker client: the lean transport of the per-tool-call
  processes, service requests, the replay loop;
- `startup`: starting a broker on demand under the lock protocol;
- `ingest`: `yarp archive ingest`, the framed bridge the agents' TypeScript
  adapters drive;
- `run`: `yarp run`, a command's exact streams captured, a pruned view shown;
- `hook`: `yarp hook AGENT`, one hook event of an agent with command hooks forwarded;
- `notice`: the line a hook prints once per session when capture fails.

None of them opens the archive for writing. Importing this package imports nothing.
"""
