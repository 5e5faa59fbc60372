"""Claude Code in the broker (layer `broker`): its hook service (`service.Service`), the complete output and
version it reads from Claude Code's own files (`output`), and the names its shell defines (`shell_snapshot`)."""

from yarp.agents.claude_code.broker.service import Service

__all__ = ["Service"]
