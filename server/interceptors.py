"""A server interceptor that wraps each method's handler once and reuses the wrapper.

``intercept_service`` runs for every call; building a wrapped handler each time would cost every
call a few allocations. An unknown method gets no handler, so the cache holds only methods the
server has. The metrics (``kassign.server.observe.prometheus``) and the admission gate
(``kassign.server.runtime.admission``) wrap this way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeAlias

import grpc

__all__ = ["Handler", "WrappingInterceptor"]

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # generic in the stubs only


class WrappingInterceptor(grpc.ServerInterceptor, ABC):
    """Calls ``wrap(full_method_name, handler)`` once per method; the result serves every call."""

    def __init__(self) -> None:
        self._wrapped_by_name: dict[str, Handler] = {}

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        name = handler_call_details.method
        wrapped = self._wrapped_by_name.get(name)
        if wrapped is None:
            handler = continuation(handler_call_details)
            if handler is None:
                return None
            wrapped = self.wrap(name, handler)
            self._wrapped_by_name[name] = wrapped
        return wrapped

    @abstractmethod
    def wrap(self, name: str, handler: Handler) -> Handler:
        """The handler to use for method ``name`` (``/package.Service/Method``)."""
