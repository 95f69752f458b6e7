"""Where a whole consumer gRPC call's time goes, piece by piece (issue 24).

``consumer_bench.py`` times the call through ``kassign serve`` against Kafka's warm ``assign``;
this splits that call on the same groups (Kafka's large-test shapes, compact wire; no racks or
three, ``--layouts``; fresh, a member leaving or one extra member, ``--scenarios``) into what a caller and the server each do, every piece timed alone in this process, wall ms,
best of ``--repeats``:

- ``client ser``: the request message to bytes (the Python client's; the plug-ins build theirs
  in the JVM); ``server parse``: those bytes to the message, as the server's deserializer does;
- ``decode``, ``assign``, ``encode``: the servicer's phases (``assign_consumer_request``);
- ``resp ser``: the answer to bytes, as gRPC's serializer calls it; ``client parse``: the
  answer's bytes to a message;
- ``gRPC``: the whole call through ``kassign serve`` (one worker on loopback, bytes in and out,
  as ``consumer_bench.py`` makes it), best and median; ``echo``: the same bytes through a
  server in another process that answers prepared bytes of the answer's size (the transport's
  floor: gRPC's framing, copies and the loopback, no work); ``rest``: gRPC less the server's
  pieces and the echo (the worker's threads, interceptors, what the pieces do not see).

    .venv/bin/python bench/call_split.py [--sizes 50x800x800] [--assignors sticky,...]
        [--layouts none,racks] [--scenarios fresh,leave,extra] [--repeats 15] [--journal FILE]

``--journal FILE`` splits, after those, every request a consumer journal file holds
(``kassign serve --journal DIR``'s ``DIR/consumer/*.jsonl``), each named by its group id: a
plug-in's requests exactly as it sent them (``plugin_bench.py --server-journal DIR``), to set
beside the bench's own request for the same shape (``--sizes ''`` leaves the bench's out).

Run with another tree's interpreter (``/work/main/.venv/bin/python bench/call_split.py``) to
time that tree's code: the modules and ``kassign serve`` are the interpreter's. Nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from consumer_groups import extra_member, leave, make_cluster, make_members, request_for
from kassign.assignor.consumer import Member, assign, consumer_group
from kassign.cli.messages import parse_json
from kassign.server.consumer.servicer import assign_consumer_request
from kassign.v1 import consumer_pb2 as cpb
from serving import kassign_serve, serving_on_loopback

T = TypeVar("T")
_TAKES_BYTES = "data" in inspect.signature(assign_consumer_request).parameters
_ECHO = "/bench.Echo/Echo"
_SET = "/bench.Echo/Set"
_UNLIMITED = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def timed(run: Callable[[], T], repeats: int) -> tuple[list[float], T]:
    """Each run's wall milliseconds, and the last answer."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        answer = run()
        times.append((time.perf_counter() - started) * 1000)
    return times, answer


class Phases:
    """The servicer's phases of one call (its observer's ``on_phase``), best of each."""

    def __init__(self) -> None:
        self.best: dict[str, float] = {}

    def on_phase(self, phase: str, seconds: float) -> None:
        ms = seconds * 1000
        self.best[phase] = min(ms, self.best.get(phase, ms))

    def on_success(self, request: object, outcome: object) -> None:
        pass

    def on_error(self, code: object, error: BaseException) -> None:
        pass


def serve_echo(port_file: Path) -> None:
    """A server answering each ``Echo`` with the bytes the last ``Set`` sent (another process)."""
    answer = [b""]

    def set_answer(data: bytes, _: grpc.ServicerContext) -> bytes:
        answer[0] = data
        return b""

    def echo(_data: bytes, _: grpc.ServicerContext) -> bytes:
        return answer[0]

    handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        name: grpc.unary_unary_rpc_method_handler(fn)
        for name, fn in (("Set", set_answer), ("Echo", echo))
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_UNLIMITED)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    port_file.write_text(str(port))
    server.wait_for_termination()


@contextmanager
def channel_to(target: str) -> Iterator[Callable[[str], Callable[..., bytes]]]:
    with grpc.insecure_channel(target, options=_UNLIMITED) as channel:
        grpc.channel_ready_future(channel).result(timeout=60)
        yield lambda method: channel.unary_unary(method)


def echo_server() -> AbstractContextManager[str]:
    """The echo server (``serve_echo``) in another process."""
    return serving_on_loopback([sys.executable, __file__, "--serve-echo"], "the echo server")


def groups(
    size: str, assignor: str, scenarios: list[str], *, racks: bool = False
) -> Iterator[tuple[str, bytes]]:
    """Each scenario's compact request bytes (``consumer_bench.py``'s groups and seeds)."""
    topics, per_topic, consumers = (int(x) for x in size.split("x"))
    seed = topics * per_topic * 31 + consumers
    cluster = make_cluster(topics * per_topic, racks=racks, seed=seed, topics=topics)
    members = make_members(cluster, consumers, racks=racks, equal=True, seed=seed)
    for scenario in scenarios:
        group: list[Member] = members
        if scenario == "leave":
            fresh = assign(assignor, consumer_group(members, cluster.topics()))
            group = leave(members, fresh, assignor)
        elif scenario == "extra":
            group = extra_member(cluster, members, racks=racks, seed=seed)
        request = request_for(cluster, group, assignor, compact=True)
        yield scenario, request.SerializeToString()


def journaled(path: Path) -> Iterator[tuple[str, bytes]]:
    """Each request of a consumer journal file, by group id, as bytes (the stamp left out)."""
    for line in path.read_text().splitlines():
        if line.strip():
            request = parse_json(line, cpb.ConsumerAssignRequest())
            request.ClearField("journal")  # the server's stamp: not part of what was sent
            yield request.group_id, request.SerializeToString()


def split(
    data: bytes,
    served: Callable[..., bytes],
    echo: Callable[..., bytes],
    set_echo: Callable[..., bytes],
    repeats: int,
) -> dict[str, float]:
    """One request's pieces, ms (best of ``repeats``; ``gRPC med`` the median)."""
    parse = cpb.ConsumerAssignRequest.FromString
    request = parse(data)
    got: dict[str, float] = {}
    got["client ser"] = min(timed(request.SerializeToString, repeats)[0])
    got["server parse"] = min(timed(lambda: parse(data), repeats)[0])
    phases = Phases()
    sent: dict[str, Any] = {"data": data} if _TAKES_BYTES else {}  # as the server does, if
    times, outcome = timed(
        lambda: assign_consumer_request(parse(data), observer=phases, **sent), repeats
    )
    got.update({p: phases.best.get(p, 0.0) for p in ("decode", "assign", "encode")})
    got["servicer"] = min(times) - got["server parse"]
    wire = outcome.wire
    got["resp ser"] = min(timed(wire.SerializeToString, repeats)[0])
    answer = wire.SerializeToString()
    got["client parse"] = min(
        timed(lambda: cpb.ConsumerAssignResponse.FromString(answer), repeats)[0]
    )
    set_echo(answer)
    grpc_times, over = timed(lambda: served(data, timeout=120), repeats)
    if cpb.ConsumerAssignResponse.FromString(over).members != outcome.response.members:
        raise SystemExit("the served answer differs from this process's")
    echo_times, _ = timed(lambda: echo(data, timeout=120), repeats)
    got["gRPC"], got["gRPC med"] = min(grpc_times), statistics.median(grpc_times)
    got["echo"] = min(echo_times)
    server = got["server parse"] + got["servicer"] + got["resp ser"]
    got["rest"] = got["gRPC"] - server - got["echo"]
    got["request MB"], got["answer MB"] = len(data) / 1e6, len(answer) / 1e6
    return got


COLUMNS = (
    "client ser",
    "server parse",
    "decode",
    "assign",
    "encode",
    "servicer",
    "resp ser",
    "client parse",
    "echo",
    "rest",
    "gRPC",
    "gRPC med",
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="50x800x800")
    parser.add_argument("--assignors", default="sticky,cooperative-sticky")
    parser.add_argument("--layouts", default="none", help="none and/or racks (three)")
    parser.add_argument("--scenarios", default="fresh,leave")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--journal", type=Path, help="also a consumer journal file's requests")
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_echo:
        serve_echo(args.port_file)
        return
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; {sys.prefix}; wall ms")
    print(f"{'line':<46}" + "".join(f"{c:>13}" for c in COLUMNS))
    with (
        kassign_serve() as target,
        channel_to(target) as kassign,
        echo_server() as at,
        channel_to(at) as echo,
    ):
        served = kassign("/kassign.v1.ConsumerAssignmentService/Assign")
        sizes = [size for size in args.sizes.split(",") if size]
        for size, layout in itertools.product(sizes, args.layouts.split(",")):
            for name in args.assignors.split(","):
                scenarios = args.scenarios.split(",")
                for scenario, data in groups(size, name, scenarios, racks=layout == "racks"):
                    got = split(data, served, echo(_ECHO), echo(_SET), args.repeats)
                    print_line(f"{size} {layout} {name} {scenario}", got)
        for group, data in journaled(args.journal) if args.journal else ():
            print_line(group, split(data, served, echo(_ECHO), echo(_SET), args.repeats))


def print_line(line: str, got: dict[str, float]) -> None:
    cells = "".join(f"{got[c]:13.2f}" for c in COLUMNS)
    sizes = f"  ({got['request MB']:.2f} MB in, {got['answer MB']:.2f} out)"
    print(f"{line:<46}{cells}{sizes}", flush=True)


if __name__ == "__main__":
    main()
