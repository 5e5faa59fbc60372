"""The broker's one call into the thin clients' services: which service answers a request.

A decoded request that names `"hook"` goes to `yarp.broker.services.hooks`, one that
names `"run"` to `yarp.broker.services.run`; anything else is an ordinary envelope
for the broker's own path. The services and their shared state
(`yarp.broker.services.shared.Warm`) are made on first use and kept on the broker
(`broker.services`), so a broker that only ever serves the Pi bridge never
loads them.
"""

from __future__ import annotations


class Services:
    """The per-broker services and the state they share."""

    def __init__(self, broker) -> None:
        from yarp.broker.services.hooks import HookService
        from yarp.broker.services.run import RunService
        from yarp.broker.services.shared import Warm

        self.warm = Warm(broker)
        self.hooks = HookService(broker, self.warm)
        self.runs = RunService(broker, self.warm)

    def close(self) -> None:
        """Close what the services hold open: the Codex transcript watch and the warm
        services' read-only archive connection."""
        self.hooks.close()
        self.warm.close()


def service_for(broker, obj):
    """The service that answers a decoded request, or None for an ordinary envelope."""
    if not isinstance(obj, dict) or ("hook" not in obj and "run" not in obj):
        return None
    services = broker.services
    if services is None:
        services = broker.services = Services(broker)
    return services.hooks if "hook" in obj else services.runs


#: Hook agents and run steps a fault log line may name (anything else is not logged by name).
_HOOK_AGENTS = frozenset({"claude-code", "codex"})
_RUN_STEPS = frozenset({"begin", "capture", "not_started"})


def service_kind(obj) -> str | None:
    """A fixed name for a service request (`hook:codex`, `run:capture`), for the fault log; never request data."""
    if not isinstance(obj, dict):
        return None
    hook = obj.get("hook")
    if isinstance(hook, dict):
        agent = hook.get("agent")
        return f"hook:{agent}" if agent in _HOOK_AGENTS else "hook"
    run = obj.get("run")
    if isinstance(run, dict):
        step = run.get("step")
        return f"run:{step}" if step in _RUN_STEPS else "run"
    return None
