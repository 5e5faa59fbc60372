"""The processes that send work to the broker: each starts, asks, answers its agent and exits.

- `broker`: the full broker client (start-up on demand, the lock protocol, replay);
- `channel`: the lean requests of the per-tool-call processes to a warm broker;
- `ingest`: `yarp archive ingest`, the framed bridge the Pi extension drives;
- `run`: `yarp run`, a command's exact streams captured, a pruned view shown;
- `hook`: `yarp hook claude-code|codex`, one agent hook event forwarded.

None of them opens the archive for writing. Importing this package imports nothing.
"""
