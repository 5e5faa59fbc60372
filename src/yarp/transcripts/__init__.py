"""Past agent sessions into the archive (`yarp import`).

One module per transcript format (`pi`, `claude_code`, `codex`) over shared
pairing (`parsing`); stable incremental reading (`source`), per-file
checkpoints (`state`), discovery of the usual locations (`discovery`), the
batched broker operation (`batch`) and the orchestration (`importer`).
"""
