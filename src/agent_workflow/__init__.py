"""The agent-workflow evidence index: a disposable SQLite projection of run evidence.

The public entry points are `agent_workflow.index_store` (initialise, sync,
rebuild, verify, query, export) and the `agent-workflow` command line. The
projection never becomes authority over, or writes to, the run evidence.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
