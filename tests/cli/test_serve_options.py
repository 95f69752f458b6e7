"""``kassign serve``'s options as an operator meets them: help with defaults, reflection off, and
``--max-connection-age-s`` closing connections so a Service's load spreads (issue 16).

Each server here is built from the parsed command line (``serve_config``), so what is checked
is what the flag does, not what a hand-made ``ServerConfig`` does.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kassign.cli.main import build_parser
from kassign.cli.serve import serve_config
from kassign.server.runtime.app import create_server


def _serve_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve: argparse.ArgumentParser = subparsers.choices["serve"]
    return serve


def test_every_serve_option_has_help_that_states_its_default() -> None:
    options = [a for a in _serve_parser()._actions if a.option_strings and a.dest != "help"]
    assert len(options) >= 17
    missing = [a.option_strings[0] for a in options if not a.help or "default" not in a.help]
    assert missing == []
    text = " ".join(_serve_parser().format_help().split())
    for shown in ("(default: [::], every address)", "(default: 50051)", "(default: --host's;"):
        assert shown in text


def _config(*argv: str):  # type: ignore[no-untyped-def]
    return serve_config(build_parser().parse_args(["serve", "--port", "0", *argv]))


def test_connection_age_maps_to_grpc_core_options_with_the_grace() -> None:
    assert _config().extra_options == ()
    assert dict(_config("--max-connection-age-s", "300", "--grace", "20").extra_options) == {
        "grpc.max_connection_age_ms": 300_000,
        "grpc.max_connection_age_grace_ms": 20_000,
    }
    aged = _config("--max-connection-age-s", "1.5", "--max-connection-age-grace-s", "0.25")
    assert dict(aged.extra_options) == {
        "grpc.max_connection_age_ms": 1_500,
        "grpc.max_connection_age_grace_ms": 250,
    }


def test_malloc_tuning_is_off_unless_asked_for() -> None:
    assert _config().malloc_tuning is False
    assert _config("--malloc-tuning").malloc_tuning is True


@contextmanager
def _served(*argv: str) -> Iterator[str]:
    config = _config("--host", "127.0.0.1", *argv)
    server, port = create_server(config)
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None).wait()


def _list_services(target: str) -> list[str]:
    with grpc.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        replies = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    return [s.name for s in replies[0].list_services_response.service]


def test_no_reflection_leaves_reflection_out_and_health_in() -> None:
    with _served() as target:
        assert "grpc.reflection.v1alpha.ServerReflection" in _list_services(target)
    with _served("--no-reflection") as target:
        with pytest.raises(grpc.RpcError) as refused:
            _list_services(target)
        assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
        with grpc.insecure_channel(target) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


class _States:
    """A channel's connectivity states as they change, and whether it was READY then left it."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.seen: list[grpc.ChannelConnectivity] = []
        self.left_ready = threading.Event()
        channel.subscribe(self._on_change)

    def _on_change(self, state: grpc.ChannelConnectivity) -> None:
        if self.seen and self.seen[-1] is grpc.ChannelConnectivity.READY:
            self.left_ready.set()
        self.seen.append(state)


def test_max_connection_age_closes_an_idle_connection_and_none_closes_it_never() -> None:
    """With an age of 1 s the server sends GOAWAY and the client's channel leaves READY (it will
    reconnect, possibly to another pod); without it the same channel stays READY meanwhile."""
    with (
        _served("--max-connection-age-s", "1", "--max-connection-age-grace-s", "1") as aged,
        _served() as ageless,
        grpc.insecure_channel(aged) as aged_channel,
        grpc.insecure_channel(ageless) as ageless_channel,
    ):
        watches = []
        for channel in (aged_channel, ageless_channel):
            watches.append(_States(channel))
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        started = time.monotonic()
        assert watches[0].left_ready.wait(timeout=10), watches[0].seen
        assert time.monotonic() - started < 5
        assert not watches[1].left_ready.is_set(), watches[1].seen
        # The aged channel serves the next call on a new connection.
        reply = health_pb2_grpc.HealthStub(aged_channel).Check(
            health_pb2.HealthCheckRequest(), timeout=10
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_journal_retention_flags_use_kafkas_units_and_its_minus_one() -> None:
    from kassign.server.observe.journal_retention import Retention

    week = Retention(max_age_ms=168 * 3600 * 1000, max_bytes=None)
    assert _config().journal_retention == week
    assert _config(
        "--journal-retention-hours", "1.5", "--journal-retention-mb", "10"
    ).journal_retention == Retention(max_age_ms=5_400_000, max_bytes=10 << 20)
    assert _config("--journal-retention-hours", "-1").journal_retention == Retention(None, None)


@pytest.mark.parametrize("value", ["0", "-2"])
def test_journal_retention_refuses_zero_and_negatives_but_minus_one(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _config("--journal-retention-mb", value)
    assert "must be positive, or -1 for no bound" in capsys.readouterr().err
