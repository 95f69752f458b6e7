"""``kassign explain``: why each task went where it went, in words (or a page) a person reads.

``cli/main.py`` lists this module in ``COMMAND_MODULES``. The request (a file or a journal entry,
``journal_entry.py``) is answered locally, or by a running service with ``--target``, with
``explain`` set so the answer carries each replica's rule; the request is also decoded here, for
what every client reported before (previous owners, lags). Then:

- no option: the group in a few lines; ``--task 1_3`` or ``--client PID``: that one's story;
- ``--diff OTHER``: what changed from this request's answer to OTHER's (configs, membership,
  each replica that moved between the two answers);
- ``--html OUT``: one self-contained page, clients by zone and rack (``explain_html.py``).

``--kind consumer`` reads a plain consumer group's ``ConsumerAssignRequest`` instead: its
partitions are told as tasks and its members as clients (``explain_consumer.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.protobuf import json_format
from kassign.assignor.errors import InvalidRequest
from kassign.cli import configs
from kassign.cli.explain_consumer import ExplanationMissing, consumer_view
from kassign.cli.explain_diff import diff_lines
from kassign.cli.explain_model import GroupView
from kassign.cli.explain_streams import group_view
from kassign.cli.explain_text import client_story, group_summary, task_story
from kassign.cli.journal_entry import Entry, EntryError, read_entry
from kassign.cli.messages import KINDS, with_configs
from kassign.cli.table import deadline_text
from kassign.cli.time_window import Window, add_window_options, window_of
from kassign.server.runtime import failures, tls
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import consumer_pb2 as cpb

if TYPE_CHECKING:
    from kassign_client import KassignClient

__all__ = ["Answer", "add_parser", "answer", "run_explain"]

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
_KIND_HINT = {
    "streams": "(kassign explain reads a Kafka Streams AssignRequest; --kind consumer for a"
    " ConsumerAssignRequest)",
    "consumer": "(--kind consumer reads a ConsumerAssignRequest)",
}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``explain``."""
    p = subparsers.add_parser(
        "explain",
        help="tell why each task went where it went (a task's or a client's story, a diff, a page)",
        description="Answer a request with explanations and tell its story. REQUEST is a file of"
        " protobuf JSON (as `kassign call` reads), - for stdin, or a journal file or folder with"
        " #N to pick its N-th request (1-based, -1 the last).",
    )
    p.add_argument("request", metavar="REQUEST", help="FILE, -, or JOURNAL[#N]")
    p.add_argument(
        "--kind",
        choices=KINDS,
        default="streams",
        help="streams: a Kafka Streams AssignRequest (default); consumer: a plain consumer"
        " group's ConsumerAssignRequest (tasks are its partitions, clients its members)",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--task", metavar="NAME", help="one task's story, e.g. 1_3 (--kind consumer: orders-3)"
    )
    which.add_argument(
        "--client", metavar="PROCESS_ID", help="one client's story (--kind consumer: a member id)"
    )
    p.add_argument(
        "--diff",
        metavar="OTHER",
        help="what changed from REQUEST's answer to OTHER's (same forms as REQUEST)",
    )
    p.add_argument("--html", metavar="OUT", help="write the page here (one self-contained file)")
    p.add_argument("--group", metavar="GROUP_ID", help="in a journal, only this group's requests")
    add_window_options(p, "in a journal, only calls recorded")
    p.add_argument(
        "--zone-tag",
        metavar="KEY",
        help="client tag naming a zone on the page (default: zone, else the first"
        " rack_aware_assignment_tags key a client carries)",
    )
    p.add_argument(
        "--target",
        type=failures.target,
        metavar="HOST:PORT",
        help="ask this service (default: compute locally)",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds, with --target")
    p.add_argument("--assignment-time-budget-ms", type=int, default=5_000)
    configs.add_config_option(p)
    tls.add_client_arguments(p)
    p.set_defaults(func=run_explain)


@dataclass(frozen=True, slots=True)
class Answer:
    """Where a request was read, and its answer told."""

    where: str
    view: GroupView
    picked: str | None = None  # which journal call, when the spec held several


def _with_explain(request: pb.AssignRequest) -> pb.AssignRequest:
    """The request asking for explanations, its time fixed so deadlines read against it."""
    asked = pb.AssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    if not asked.now_ms:
        asked.now_ms = time.time_ns() // 1_000_000
    return asked


def _streams(request: pb.AssignRequest, args: argparse.Namespace) -> GroupView:
    from kassign.server.streams.decode.request import decode_request
    from kassign.server.streams.servicer import assign_request

    asked = _with_explain(request)
    budget = args.assignment_time_budget_ms or None
    if args.target is None:
        outcome = assign_request(asked, default_budget_ms=budget)
        decoded, response = outcome.decoded, outcome.response
    else:
        decoded = decode_request(asked, now_ms=asked.now_ms, default_budget_ms=budget)
        with _client(args) as client:
            response = client.assign(asked, timeout=args.timeout)
    return group_view(decoded, response, zone_tag=args.zone_tag)


def _consumer(request: cpb.ConsumerAssignRequest, args: argparse.Namespace) -> GroupView:
    from kassign.server.consumer.servicer import assign_consumer_request

    asked = cpb.ConsumerAssignRequest()
    asked.CopyFrom(request)
    asked.explain = True
    if args.target is None:
        response = assign_consumer_request(asked).response
    else:
        with _client(args) as client:
            response = client.consumer_assign(asked, timeout=args.timeout)
    return consumer_view(asked, response)


def _client(args: argparse.Namespace) -> KassignClient:
    from kassign_client import KassignClient

    return KassignClient(args.target, credentials=tls.client_tls(args))


def _picked(entry: Entry[pb.AssignRequest] | Entry[cpb.ConsumerAssignRequest]) -> str | None:
    """One line naming the journal call picked, so a wrong pick cannot pass unseen."""
    if not entry.journal:
        return None
    when = deadline_text(entry.time_ms) if entry.time_ms else "no recorded time"
    order = "by call time" if entry.time_ms else "in file order"
    group = entry.request.group_id or "(none)"
    return f"call #{entry.position} of {entry.count} {order}: {when}, group {group}, {entry.where}"


def answer(spec: str, args: argparse.Namespace, window: Window = Window()) -> Answer:  # noqa: B008
    """Read the request ``spec`` names, answer it (locally, or by ``args.target``), tell it."""
    if args.kind == "consumer":
        configs.streams_only(args.config)
        entry = read_entry(spec, cpb.ConsumerAssignRequest, group=args.group, window=window)
        return Answer(entry.where, _consumer(entry.request, args), _picked(entry))
    found = read_entry(spec, pb.AssignRequest, group=args.group, window=window)
    view = _streams(with_configs(found.request, args.config), args)
    return Answer(found.where, view, _picked(found))


def _story(view: GroupView, args: argparse.Namespace) -> list[str]:
    if args.task is not None:
        return task_story(view, args.task)
    if args.client is not None:
        return client_story(view, args.client)
    return group_summary(view)


def _check_names(view: GroupView, args: argparse.Namespace) -> str | None:
    """Why ``--task``/``--client`` names nothing in the answer, or None."""
    if args.task is not None and args.task not in {t.name for t in view.tasks}:
        names = " ".join(t.name for t in view.tasks[:20])
        return f"no {view.words.task} {args.task} in this request; {view.words.tasks}: {names}"
    if args.client is not None and args.client not in {c.process_id for c in view.clients}:
        clients = " ".join(c.process_id for c in view.clients)
        return f"no {view.words.client} {args.client}; {view.words.clients}: {clients}"
    return None


def run_explain(args: argparse.Namespace) -> int:
    from kassign_client import KassignCallError

    try:
        window = window_of(args.since, args.until)
        first = answer(args.request, args, window)
        other = answer(args.diff, args, window) if args.diff is not None else None
    except argparse.ArgumentTypeError as exc:
        print(f"kassign: --since/--until: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except (EntryError, InvalidRequest, ExplanationMissing) as exc:
        print(f"kassign: invalid request: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except json_format.ParseError as exc:
        print(f"kassign: {exc}\n{_KIND_HINT[args.kind]}", file=sys.stderr)
        return EXIT_INVALID
    except KassignCallError as exc:
        said = failures.describe(
            exc.code, exc.details, target=args.target, secure=tls.client_tls(args) is not None
        )
        print(f"kassign: call failed: {said}", file=sys.stderr)
        return EXIT_INVALID if exc.code.name == "INVALID_ARGUMENT" else EXIT_FAILED
    shown = other or first
    problem = _check_names(shown.view, args)
    if problem is not None:
        print(f"kassign: {problem}", file=sys.stderr)
        return EXIT_INVALID
    lines = [f"request: {first.where}"] + [f"picked:  {first.picked}"] * bool(first.picked)
    if other is not None:
        lines += [f"other:   {other.where}"] + [f"picked:  {other.picked}"] * bool(other.picked)
        lines += diff_lines(first.view, other.view, task=args.task, client=args.client)
    else:
        lines += _story(first.view, args)
    if args.html is not None:
        from kassign.cli.explain_html import write_page

        before = first.view if other is not None else None
        write_page(args.html, shown.view, before=before, task=args.task)
        lines.append(f"page: {args.html}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
