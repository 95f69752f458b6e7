"""A hand-written shadow-mode journal: two groups, several rebalances, across two servers and a
restart, written from the generated messages the way the journal writes them (``request_line``).

Group ``orders`` (Streams, folder DIR), in call order (received ms, server, sequence):

1. T0+1000 server A seq 0: changed (3 clients differ)
2. T0+2000 server B seq 0: changed (2)
3. T0+3000 server A seq 1: same
4. T0+3000 server B seq 1: no comparison (kassign gave no answer)
5. T0+6000 server A' (A restarted: its sequence starts at 0 again) seq 0: changed (2); its
   file's next line (seq 1) is a call without shadow mode.

Group ``payments`` (consumer, DIR/consumer): T0+1500 and T0+2500 on server A, both changed, with
loads. In file-name order server A's lines come first, then B's, then A''s: only the stamps give
the order above.
"""

from __future__ import annotations

from pathlib import Path

from kassign.server.observe.journal import request_line
from kassign.v1 import assignment_pb2 as pb
from kassign.v1 import common_pb2 as common
from kassign.v1 import consumer_pb2 as cpb

__all__ = ["T0", "write_journal"]

T0 = 1_796_601_600_000  # 2026-12-07T00:00:00Z
A, B, A2 = "host-a/100/1796601500000", "host-b/200/1796601500000", "host-a/300/1796601605000"


def _figures(
    cross: int,
    moved: int,
    max_: int,
    min_: int,
    sbm: int = 0,
    sharing: int = 0,
    load: float | None = None,
) -> common.ShadowFigures:
    f = common.ShadowFigures(
        cross_rack_partitions=cross,
        moved=moved,
        standbys_moved=sbm,
        max_per_member=max_,
        min_per_member=min_,
        standbys_sharing_rack_or_tag=sharing,
    )
    if load is not None:
        f.max_load = load
    return f


def _stamp(ms: int, server: str, sequence: int, group: str) -> common.JournalStamp:
    return common.JournalStamp(
        received_unix_ms=T0 + ms, server_id=server, sequence=sequence, group_key=group
    )


def _streams(
    ms: int,
    server: str,
    sequence: int,
    comparison: common.ShadowComparison | None,
    *,
    shadow: bool = True,
) -> bytes:
    request = pb.AssignRequest(group_id="orders", journal=_stamp(ms, server, sequence, "orders"))
    if shadow:
        request.shadow.kafka_assignor = "HighAvailabilityTaskAssignor"
        request.shadow.kafka.add(process_id="00000000-0000-0000-0000-000000000001")
        if comparison is not None:
            request.shadow.comparison.CopyFrom(comparison)
    return request_line(request)


def _compare(
    kafka: common.ShadowFigures,
    kassign: common.ShadowFigures,
    same: bool,
    differing: int,
    assignor: str,
) -> common.ShadowComparison:
    return common.ShadowComparison(
        kafka_assignor=assignor,
        kafka=kafka,
        kassign=kassign,
        same=same,
        differing_members=differing,
    )


def _ha(
    kafka: common.ShadowFigures, kassign: common.ShadowFigures, same: bool, differing: int
) -> common.ShadowComparison:
    return _compare(kafka, kassign, same, differing, "HighAvailabilityTaskAssignor")


def _consumer(ms: int, sequence: int, comparison: common.ShadowComparison) -> bytes:
    request = cpb.ConsumerAssignRequest(
        group_id="payments", journal=_stamp(ms, A, sequence, "payments")
    )
    request.shadow.kafka_assignor = "cooperative-sticky"
    request.shadow.comparison.CopyFrom(comparison)
    return request_line(request)


def write_journal(directory: Path) -> Path:
    """The journal above under ``directory`` (created); returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "consumer").mkdir(exist_ok=True)
    same = _figures(cross=8, moved=0, max_=5, min_=3, sharing=1)
    server_a = [
        _streams(
            1000, A, 0, _ha(_figures(10, 4, 6, 2, sbm=1, sharing=2), _figures(2, 1, 4, 4), False, 3)
        ),
        _streams(3000, A, 1, _ha(same, same, True, 0)),
    ]
    server_b = [
        _streams(2000, B, 0, _ha(_figures(6, 2, 6, 2, sharing=1), _figures(0, 3, 4, 4), False, 2)),
        _streams(3000, B, 1, None),
    ]
    restarted = [
        _streams(
            6000,
            A2,
            0,
            _ha(_figures(4, 2, 6, 2, sbm=2, sharing=1), _figures(0, 2, 4, 4, sbm=1), False, 2),
        ),
        _streams(6500, A2, 1, None, shadow=False),
    ]
    (directory / "requests-100-000001.jsonl").write_bytes(b"".join(server_a))
    (directory / "requests-200-000001.jsonl").write_bytes(b"".join(server_b))
    (directory / "requests-300-000001.jsonl").write_bytes(b"".join(restarted))
    sticky = "cooperative-sticky"
    payments = [
        _consumer(
            1500,
            2,
            _compare(
                _figures(12, 5, 10, 6, load=2.5), _figures(4, 6, 8, 8, load=2.0), False, 4, sticky
            ),
        ),
        _consumer(
            2500,
            4,
            _compare(
                _figures(12, 0, 10, 6, load=3.0), _figures(4, 0, 8, 8, load=2.25), False, 2, sticky
            ),
        ),
    ]
    (directory / "consumer" / "requests-100-000001.jsonl").write_bytes(b"".join(payments))
    return directory
