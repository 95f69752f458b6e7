"""TLS for the service and for its command-line clients: PEM files in, gRPC credentials out.

Serving: ``kassign serve --tls-cert chain.pem --tls-key key.pem`` serves TLS only (plaintext
callers are refused at the handshake); adding ``--tls-client-ca ca.pem`` makes it mutual: every
caller must present a certificate that CA signed. Calling: ``kassign call`` and ``kassign
health`` take ``--tls`` (trust the system's CAs), ``--ca-file`` (trust this bundle instead) and
``--client-cert``/``--client-key`` for a server that asks for one.

Every file is read, and the key checked against the certificate, when the command starts, so a
wrong path or a key of another certificate stops ``kassign serve`` with a message naming the file
instead of surfacing as handshake failures in every caller. The metrics endpoint stays plain
HTTP: keep it on a private address (``--metrics-host``).
"""

from __future__ import annotations

import argparse
import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc

__all__ = [
    "ClientTls",
    "ServerTls",
    "TlsError",
    "add_client_arguments",
    "add_server_arguments",
    "channel_credentials",
    "client_tls",
    "server_credentials",
    "server_tls",
]


class TlsError(ValueError):
    """A TLS file that is missing, unreadable, not PEM, or a key that does not fit its cert."""


@dataclass(frozen=True, slots=True)
class ServerTls:
    """The server's certificate chain and key; ``client_ca`` set: callers need a certificate."""

    cert: Path
    key: Path
    client_ca: Path | None = None


@dataclass(frozen=True, slots=True)
class ClientTls:
    """How a client checks the server (``ca`` None: the system's CAs) and proves itself."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None


def _read_pem(path: Path, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TlsError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
    if b"-----BEGIN " not in data:
        raise TlsError(f"the {what} {path} is not PEM (no -----BEGIN line)")
    return data


def _check_pair(cert: Path, key: Path) -> None:
    """The key must belong to the certificate; ``ssl`` says so before any caller has to."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise TlsError(f"the key {key} does not fit the certificate {cert}: {exc.reason}") from exc


def server_credentials(tls: ServerTls) -> grpc.ServerCredentials:
    chain, key = _read_pem(tls.cert, "certificate"), _read_pem(tls.key, "private key")
    _check_pair(tls.cert, tls.key)
    roots = None if tls.client_ca is None else _read_pem(tls.client_ca, "client CA bundle")
    return grpc.ssl_server_credentials(
        [(key, chain)], root_certificates=roots, require_client_auth=roots is not None
    )


def channel_credentials(tls: ClientTls) -> grpc.ChannelCredentials:
    roots = None if tls.ca is None else _read_pem(tls.ca, "CA bundle")
    if (tls.cert is None) != (tls.key is None):
        raise TlsError("a client certificate needs its key, and a key its certificate")
    chain = key = None
    if tls.cert is not None and tls.key is not None:
        chain, key = _read_pem(tls.cert, "client certificate"), _read_pem(tls.key, "client key")
        _check_pair(tls.cert, tls.key)
    return grpc.ssl_channel_credentials(
        root_certificates=roots, private_key=key, certificate_chain=chain
    )


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("TLS (off unless --tls-cert and --tls-key are given)")
    group.add_argument(
        "--tls-cert", type=Path, metavar="PEM", help="certificate chain (default: none)"
    )
    group.add_argument(
        "--tls-key", type=Path, metavar="PEM", help="its private key (default: none)"
    )
    group.add_argument(
        "--tls-client-ca",
        type=Path,
        metavar="PEM",
        help="require callers to present a certificate this CA signed, mutual TLS (default: none)",
    )


def server_tls(args: argparse.Namespace) -> ServerTls | None:
    """The serve options as ``ServerTls``, checked now; ``TlsError`` says what is wrong."""
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca is not None:
            raise TlsError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise TlsError("--tls-cert and --tls-key go together")
    tls = ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca)
    server_credentials(tls)
    return tls


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("TLS (plaintext unless one of these is given)")
    group.add_argument("--tls", action="store_true", help="TLS, trusting the system's CAs")
    group.add_argument("--ca-file", type=Path, metavar="PEM", help="TLS, trusting this CA bundle")
    group.add_argument("--client-cert", type=Path, metavar="PEM", help="for mutual TLS")
    group.add_argument("--client-key", type=Path, metavar="PEM", help="for mutual TLS")


def client_tls(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """Channel credentials from the client options; None for plaintext."""
    if not (args.tls or args.ca_file or args.client_cert or args.client_key):
        return None
    return channel_credentials(ClientTls(args.ca_file, args.client_cert, args.client_key))
