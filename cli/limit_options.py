"""The per-request limit options, ``--max-members`` and the rest, of ``serve`` and ``assign``.

Why both: ``kassign assign`` runs the service's checks locally, so a request past a limit is
refused there too; its refusal must name the option ``assign`` itself takes, not a server's
(issue 27). Locally nothing is sent, so the answer's size (``--max-message-mb``) is not limited.
"""

from __future__ import annotations

import argparse
import sys

from kassign.assignor.errors import invalid_request_text
from kassign.server import limits

__all__ = ["add_limit_options", "local_limits", "local_refusal", "request_limits"]

_LIMIT_HELP = {
    "members": "members in one request",
    "tasks": "tasks in one Streams request",
    "partitions": "topic partitions of one request's tasks, or of its consumer metadata;"
    " also topics one member subscribes to",
    "owned_partitions": "owned partitions in one request, over all its members",
    "reported_tasks": "tasks Streams members report in one request (offset sums, v1-6 task"
    " lists), over all its members",
    "string_bytes": "UTF-8 bytes of any one id, name or rack",
}
"""What each per-request limit bounds (docs/operations.md, *Limits*); past one, a request is
refused with INVALID_ARGUMENT naming the option."""


def add_limit_options(p: argparse.ArgumentParser) -> None:
    for name, what in _LIMIT_HELP.items():
        p.add_argument(
            limits.LIMIT_OPTIONS[name],
            dest=f"limit_{name}",
            metavar="N",
            type=int,
            default=getattr(limits.DEFAULT_LIMITS, name),
            help=f"most {what}; more: INVALID_ARGUMENT (default: %(default)s)",
        )


def request_limits(args: argparse.Namespace) -> limits.RequestLimits:
    """The server's limits from ``serve``'s options."""
    return limits.RequestLimits(**{name: getattr(args, f"limit_{name}") for name in _LIMIT_HELP})


def local_limits(args: argparse.Namespace) -> limits.RequestLimits:
    """``assign``'s limits: its options, and no answer size (nothing is sent)."""
    return limits.RequestLimits(
        **{name: getattr(args, f"limit_{name}") for name in _LIMIT_HELP},
        answer_bytes=sys.maxsize,
    )


def local_refusal(exc: limits.LimitExceeded) -> str:
    """A local refusal: what was past which limit, and the ``assign`` option that raises it."""
    return invalid_request_text(
        f"{exc.excess}: over kassign assign's limit ({limits.LIMIT_OPTIONS[exc.limit]} N"
        " raises it)",
        field=exc.field,
        member=exc.member,
    )
