"""Past agent sessions into the archive (`yarp import`).

Agent-neutral: each agent's reader of its own format is its `transcripts`
part (`yarp.agents.<agent>.transcripts`), over the shared pairing here
(`parsing`); stable incremental reading (`source`), per-file checkpoints
(`state`), discovery of the usual locations through each agent's part
(`discovery`), the batched broker operation (`batch`) and the orchestration
(`importer`).
"""
