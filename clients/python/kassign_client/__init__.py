"""A small typed Python client of the kassign service.

    from kassign_client import KassignClient, build

    request = build.request(
        members=build.client("2b1a...", threads=2, rack="zone-a") + build.client("9c0d...", threads=2),
        tasks=[build.task(0, p, source=[("orders", p)], changelog=[(f"store-changelog", p)]) for p in range(4)],
        configs=build.configs(num_standby_replicas=1),
    )
    with KassignClient("localhost:50051") as client:
        response = client.assign(request, timeout=10)

Plain consumer groups (``ConsumerAssignmentService``): ``consumer`` builds the request,
``client.consumer_assign(request)`` answers it.

Callers never touch the generated stubs; the messages themselves are ``kassign.v1`` protobufs.
"""

from kassign_client import build, consumer
from kassign_client.client import (
    DEFAULT_MAX_MESSAGE_BYTES,
    KassignCallError,
    KassignClient,
    KassignInvalidRequest,
    RetryPolicy,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "KassignCallError",
    "KassignClient",
    "KassignInvalidRequest",
    "RetryPolicy",
    "build",
    "consumer",
]
