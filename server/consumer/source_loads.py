"""A consumer request with balance LOAD and no partition loads of its own gets them from the
server's load source (``kassign serve --load-source``, issue 25), between decoding and assigning.

Three ways it goes, each told in the report (``LoadFigures.source`` and a note):

- the source answers: its loads, source ``prometheus``; partitions missing from its answer get
  the mean of the others, and a note says how many (``kassign.server.loads.fill``);
- no source configured, or it failed (down, slow, an error): every partition 1, so the answer
  balances counts per capacity; source empty and a note why;
- the request sent loads: they are used (source ``request``), the source is not asked.
"""

from __future__ import annotations

from dataclasses import replace

from kassign.assignor.consumer.common import partitions_per_topic
from kassign.assignor.load.figures import Balance
from kassign.server.consumer.decode import DecodedConsumerRequest
from kassign.server.loads.source import KIND, LoadSource

__all__ = ["NO_SOURCE", "wants_source_loads", "with_source_loads"]

NO_SOURCE = (
    "balance LOAD without partition loads and no load source (kassign serve --load-source);"
    " balanced by count"
)


def wants_source_loads(decoded: DecodedConsumerRequest) -> bool:
    """Balance LOAD, and no partition loads in the request."""
    return decoded.options.balance is Balance.LOAD and not decoded.options.loads


def with_source_loads(
    decoded: DecodedConsumerRequest, source: LoadSource | None, timeout_s: float | None
) -> DecodedConsumerRequest:
    """``decoded`` with the source's loads, or counts and the note why; ``timeout_s`` is the
    call's time left for it (``None``: no deadline, the source's own timeout)."""
    if not wants_source_loads(decoded):
        return decoded
    topics = {t: n for t, n in partitions_per_topic(decoded.group).items() if n}
    if not topics:  # nothing to weigh
        return decoded
    if source is None:
        return replace(decoded, load_notes=(NO_SOURCE,))
    filled = source.topic_loads(topics, timeout_s)
    notes = (filled.note,) if filled.note else ()
    if filled.loads is None:
        return replace(decoded, load_notes=notes)
    options = replace(decoded.options, loads=filled.loads)
    return replace(decoded, options=options, load_source=KIND, load_notes=notes)
