"""One clear line for a call that went wrong before kassign could answer it, and checked targets.

Issue 27, tried as a new user would: ``--target 127.0.0.1`` silently dialled port 443 (gRPC's
default); an unresolvable host ended with a TLS hint; ``--tls`` against a plaintext port printed
gRPC's own log line first; a request over the message limit read like a dead service. The CLI's
``call``, ``explain --target`` and ``health`` say each in one line instead.
"""

from __future__ import annotations

import argparse
import re

import grpc

__all__ = ["DEFAULT_TARGET_PORT", "describe", "target"]

DEFAULT_TARGET_PORT = 50051  # kassign serve's default port
_MIB = 1 << 20
_SENT_TOO_LARGE = re.compile(r"Sent message larger than max \((\d+) vs\. (\d+)\)")
_RECEIVED_TOO_LARGE = re.compile(r"Received message larger than max \((\d+) vs\. (\d+)\)")
_UNRESOLVED = ("errors resolving", "dns resolution", "name resolution", "domain name not found")
_REFUSED = ("connection refused", "failed to connect to remote host")
_HANDSHAKE = ("handshake failed", "ssl_error", "wrong_version_number")
_PLAINTEXT_TO_TLS = ("socket closed", "connection reset", "end of tcp stream", "goaway")


def target(value: str) -> str:
    """An argparse ``type``: ``HOST:PORT`` (``[v6]:PORT`` too). Without a port gRPC would dial
    443, which no kassign serves, so that is refused with the form to use."""
    host, colon, port = value.rpartition(":")
    if colon and host and port.isdigit() and (not host.startswith("[") or host.endswith("]")):
        return value
    bare = value.rstrip(":")
    raise argparse.ArgumentTypeError(
        f"{value!r} names no port (gRPC would dial 443); kassign serve listens on"
        f" {DEFAULT_TARGET_PORT} unless told otherwise: {bare}:{DEFAULT_TARGET_PORT}"
    )


def describe(
    code: grpc.StatusCode,
    details: str,
    *,
    target: str,
    secure: bool,
    limit_flag: str = "--max-message-mb",
) -> str:
    """What went wrong, in one line, with what to do when the cause is plain."""
    lowered = details.lower()
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        if sent := _SENT_TOO_LARGE.search(details):
            size, limit = (int(n) / _MIB for n in sent.groups())
            return (
                f"the request is {size:.1f} MiB, over this client's {limit:.0f} MiB limit:"
                f" raise it with {limit_flag} (kassign serve needs as much)"
            )
        if received := _RECEIVED_TOO_LARGE.search(details):
            size, limit = (int(n) / _MIB for n in received.groups())
            return (
                f"{target} refused a {size:.1f} MiB message, over its {limit:.0f} MiB limit:"
                " start kassign serve with a larger --max-message-mb"
            )
    if code == grpc.StatusCode.UNAVAILABLE:
        host = target.rpartition(":")[0].strip("[]") or target
        if any(m in lowered for m in _UNRESOLVED):
            return f"cannot resolve {host!r} (--target {target}): is the host name right?"
        if secure and any(m in lowered for m in _HANDSHAKE):
            return (
                f"the TLS handshake with {target} failed: if it serves plaintext, call it"
                " without --tls/--ca-file; if it serves TLS, check --ca-file and the certificates"
            )
        if any(m in lowered for m in _REFUSED):
            return f"nothing accepts connections at {target}: is kassign serve running there?"
        if not secure and any(m in lowered for m in _PLAINTEXT_TO_TLS):
            return f"{target} closed the connection: if it serves TLS, pass --tls or --ca-file PEM"
    return f"{code.name}: {details}"
