"""The broker's services for the per-tool-call clients, and which one answers a request.

A request validated as a `HookRequest` (`yarp.wire.validation.parse_request`)
goes to `yarp.broker.services.hooks`, a run step to `yarp.broker.services.run`;
an envelope takes the broker's own path. The services and their shared state
(`yarp.broker.services.shared.Warm`) are made on first use and kept on the broker
(`broker.services`), so a broker that only ever serves the ingest bridge never
loads them.
"""

from __future__ import annotations

from yarp.wire import protocol


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
        """Close what the services hold open: an agent service's transcript watch and the warm
        services' read-only archive connection."""
        self.hooks.close()
        self.warm.close()


def service_for(broker, request):
    """The service that answers a validated service request (`HookRequest` or a run step)."""
    services = broker.services
    if services is None:
        services = broker.services = Services(broker)
    return services.hooks if type(request) is protocol.HookRequest else services.runs


#: What a run step is called in the fault log.
_RUN_STEPS = {protocol.RunBegin: "run:begin", protocol.RunCapture: "run:capture",
              protocol.RunNotStarted: "run:not_started"}


def service_kind(request) -> str:
    """A fixed name for a service request (`hook:<agent>`, `run:capture`), for the fault log; never request data."""
    if type(request) is protocol.HookRequest:
        return f"hook:{request.agent}"  # validated: one of the known agents
    return _RUN_STEPS.get(type(request), "service")
