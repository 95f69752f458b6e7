"""``KassignClient``: two calls, ``assign`` (Kafka Streams) and ``assign_consumers`` (plain
consumer groups, KIP-881), retried only where a retry is safe.

``Assign`` is a pure function of its request, so repeating it is harmless; still, only
``UNAVAILABLE`` (nothing answered: the server is starting, restarting or unreachable) is retried,
with bounded exponential backoff and never past the caller's timeout. Every other status is the
answer: ``INVALID_ARGUMENT`` raises ``KassignInvalidRequest`` naming the field and member.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self, TypeVar

import grpc
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import assignment_pb2_grpc, consumer_pb2_grpc
from kassign.v1 import consumer_pb2 as cpb

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "KassignCallError",
    "KassignClient",
    "KassignInvalidRequest",
    "RetryPolicy",
]

R = TypeVar("R")

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The server's default limit; a 10,000-task group is far below it."""


class KassignCallError(Exception):
    """The service answered with a status other than OK (or could not be reached in time)."""

    def __init__(self, code: grpc.StatusCode, details: str, metadata: dict[str, str]) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
        self.metadata = metadata
        self.request_id = metadata.get("kassign-request-id")


class KassignInvalidRequest(KassignCallError):
    """``INVALID_ARGUMENT``: the request cannot be assigned; ``field``/``member`` say where."""

    def __init__(self, code: grpc.StatusCode, details: str, metadata: dict[str, str]) -> None:
        super().__init__(code, details, metadata)
        self.field = metadata.get("kassign-field")
        self.member = metadata.get("kassign-member")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Retries of ``UNAVAILABLE`` only: at most ``max_attempts`` calls, backoff capped, jittered.

    Usage: ``KassignClient(target, retry=RetryPolicy(max_attempts=1))`` turns retries off.
    """

    max_attempts: int = 4
    initial_backoff_s: float = 0.1
    max_backoff_s: float = 2.0
    multiplier: float = 2.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based), full jitter."""
        cap = min(self.max_backoff_s, self.initial_backoff_s * self.multiplier ** (attempt - 1))
        return random.uniform(0.0, cap)


def _error(exc: grpc.RpcError) -> KassignCallError:
    # types-grpcio declares trailing_metadata() differently on RpcError and on Call, so mypy
    # deems an error that is also a Call impossible; every error a grpc stub raises is both.
    call: grpc.Call | None = exc if isinstance(exc, grpc.Call) else None
    code = call.code() if call is not None else grpc.StatusCode.UNKNOWN
    details = (call.details() if call is not None else None) or str(exc)
    trailing = call.trailing_metadata() if call is not None else None
    metadata = {str(k): str(v) for k, v in (trailing or ())}
    cls = KassignInvalidRequest if code == grpc.StatusCode.INVALID_ARGUMENT else KassignCallError
    return cls(code, details, metadata)


class KassignClient:
    """A channel to one kassign service; use as a context manager or call ``close()``."""

    def __init__(
        self,
        target: str,
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        retry: RetryPolicy = RetryPolicy(),
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, int | str]] = (),
    ) -> None:
        channel_options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.enable_retries", 0),  # retries are ours, and bounded by the caller's timeout
            *options,
        ]
        self._channel = (
            grpc.secure_channel(target, credentials, options=channel_options)
            if credentials is not None
            else grpc.insecure_channel(target, options=channel_options)
        )
        self._stub = assignment_pb2_grpc.TaskAssignmentServiceStub(self._channel)
        self._consumer_stub = consumer_pb2_grpc.ConsumerAssignmentServiceStub(self._channel)
        self._retry = retry
        self.target = target

    def assign(
        self, request: pb.AssignRequest, *, timeout: float | None = 30.0
    ) -> pb.AssignResponse:
        """The assignment for ``request``; raises ``KassignCallError`` for any non-OK status."""

        def attempt(remaining: float | None) -> pb.AssignResponse:
            response: pb.AssignResponse = self._stub.Assign(request, timeout=remaining)
            return response

        return self._call(attempt, timeout)

    def assign_consumers(
        self, request: cpb.ConsumerAssignRequest, *, timeout: float | None = 30.0
    ) -> cpb.ConsumerAssignResponse:
        """A plain consumer group's assignment; raises ``KassignCallError`` for any non-OK status."""

        def attempt(remaining: float | None) -> cpb.ConsumerAssignResponse:
            response: cpb.ConsumerAssignResponse = self._consumer_stub.Assign(
                request, timeout=remaining
            )
            return response

        return self._call(attempt, timeout)

    def _call(self, attempt: Callable[[float | None], R], timeout: float | None) -> R:
        """``attempt(seconds_left)`` until it answers, retrying UNAVAILABLE within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        tries = 0
        while True:
            tries += 1
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return attempt(remaining)
            except grpc.RpcError as exc:
                error = _error(exc)
                pause = self._retry.backoff(tries)
                out_of_time = deadline is not None and time.monotonic() + pause >= deadline
                if (
                    error.code != grpc.StatusCode.UNAVAILABLE
                    or tries >= self._retry.max_attempts
                    or out_of_time
                ):
                    raise error from exc
                time.sleep(pause)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
