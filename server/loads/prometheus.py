"""Partition loads read from Prometheus (issue 25: where loads come from), with a deadline and a
cache, never failing the call that asked.

A PromQL query (``DEFAULT_QUERY``: the rate of kafka-exporter's
``kafka_topic_partition_current_offset``, one series per topic and partition) is sent to the
instant-query API (``/api/v1/query``) with a timeout; the answer, a vector whose series carry
``topic`` and ``partition`` labels, becomes a map of loads. It is kept for ``ttl_s``: a group's
members join within seconds of each other and a rebalance storm must not become a query storm.
When Prometheus is slow, down, or answers with an error or something that is not such a vector,
``fetch`` returns no loads and says why (the caller goes on balancing counts and reports it); a
failure is cached for ``retry_s`` so a down server costs one timeout per interval, not one per
call. Answers above ``max_bytes`` are refused rather than read: memory stays bounded.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_QUERY",
    "LoadReading",
    "PartitionLoads",
    "PrometheusLoads",
    "parse_source",
]

DEFAULT_QUERY = "sum by (topic, partition) (rate(kafka_topic_partition_current_offset[5m]))"
SCHEME = "prometheus://"

PartitionLoads = Mapping[tuple[str, int], float]


@dataclass(frozen=True, slots=True)
class LoadReading:
    """The loads a query gave (empty on failure), why there are none, and when it was read
    (``time.monotonic``)."""

    loads: PartitionLoads
    error: str = ""
    read_at: float = 0.0
    cached: bool = False


def parse_source(source: str) -> str:
    """``prometheus://HOST:PORT`` as the base URL of its HTTP API; ``ValueError`` naming the
    flag's expected form otherwise."""
    if not source.startswith(SCHEME):
        raise ValueError(f"--load-source {source!r}: expected {SCHEME}HOST:PORT")
    parsed = urllib.parse.urlsplit("http://" + source[len(SCHEME) :])
    if not parsed.hostname or parsed.port is None or parsed.path not in ("", "/"):
        raise ValueError(f"--load-source {source!r}: expected {SCHEME}HOST:PORT")
    return f"http://{parsed.netloc}"


@dataclass
class PrometheusLoads:
    """One process's reader of one query; thread-safe (the servicer's threads share it)."""

    base_url: str
    query: str = DEFAULT_QUERY
    timeout_s: float = 0.5
    ttl_s: float = 30.0
    retry_s: float = 5.0
    max_bytes: int = 64 << 20
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _last: LoadReading | None = field(default=None, repr=False)

    def fetch(self, timeout_s: float | None = None) -> LoadReading:
        """The cached reading while fresh, else a new one (one query at a time: callers that
        arrive during it wait for it rather than sending their own). ``timeout_s`` (a call's
        time left) shortens ``self.timeout_s``, never lengthens it: waiting for the lock and the
        whole answer both fit in it. A failure cut short by a caller's ``timeout_s`` is not
        cached: a call in a hurry must not cost the next ones their loads."""
        wait = self.timeout_s if timeout_s is None else max(0.0, min(self.timeout_s, timeout_s))
        ends = time.monotonic() + wait
        if not self._lock.acquire(timeout=wait):
            return LoadReading({}, f"timed out after {wait:g} s behind another query", self.clock())
        try:
            last, now = self._last, self.clock()
            if last is not None and now - last.read_at < (
                self.retry_s if last.error else self.ttl_s
            ):
                return LoadReading(last.loads, last.error, last.read_at, cached=True)
            reading = self._query(now, ends, f"{wait:g}")
            if not reading.error or wait >= self.timeout_s:
                self._last = reading
            return reading
        finally:
            self._lock.release()

    def _query(self, now: float, ends: float, wait: str) -> LoadReading:
        """One query, over by ``ends`` (``time.monotonic``); ``wait`` is that time as told."""
        url = f"{self.base_url}/api/v1/query?" + urllib.parse.urlencode({"query": self.query})
        try:
            left = max(ends - time.monotonic(), 1e-3)
            with urllib.request.urlopen(url, timeout=left) as answer:
                body = _read_until(answer, ends, self.max_bytes + 1)
        except urllib.error.HTTPError as e:
            return LoadReading({}, f"Prometheus answered HTTP {e.code}: {_error_of(e)}", now)
        except (OSError, ValueError) as e:  # refused, unreachable, timed out
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                return LoadReading({}, f"timed out after {wait} s", now)
            return LoadReading({}, f"Prometheus at {self.base_url} unreachable: {reason}", now)
        if len(body) > self.max_bytes:
            return LoadReading({}, f"Prometheus answer over {self.max_bytes} bytes, not read", now)
        try:
            return LoadReading(vector_loads(json.loads(body)), "", now)
        except (ValueError, KeyError, TypeError) as e:
            return LoadReading({}, f"Prometheus answer not a vector of topic/partition: {e}", now)


def _read_until(answer: http.client.HTTPResponse, ends: float, limit: int) -> bytes:
    """Up to ``limit`` bytes of the body, a chunk as it comes (a server sending a byte now and
    then must not keep the call past ``ends``: the socket's timeout is per read)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        if time.monotonic() > ends:
            raise TimeoutError("timed out")
        chunk = answer.read1(min(1 << 16, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def vector_loads(answer: object) -> dict[tuple[str, int], float]:
    """An instant query's JSON answer as ``{(topic, partition): load}``: each series needs
    ``topic`` and ``partition`` labels and a finite, non-negative value (a rate can be ``NaN``
    right after a restart: such a series is left out, as are negative ones, rather than guessed)."""
    if not isinstance(answer, dict) or answer.get("status") != "success":
        raise ValueError(f"status {answer.get('status') if isinstance(answer, dict) else answer!r}")
    data = answer["data"]
    if data.get("resultType") != "vector":
        raise ValueError(f"resultType {data.get('resultType')!r}, not vector")
    loads: dict[tuple[str, int], float] = {}
    for series in data["result"]:
        labels = series["metric"]
        key = (str(labels["topic"]), int(labels["partition"]))
        value = float(series["value"][1])
        if math.isfinite(value) and value >= 0:
            loads[key] = loads.get(key, 0.0) + value
    return loads


def _error_of(e: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(e.read(4096)).get("error", ""))[:200]
    except (ValueError, OSError):
        return e.reason if isinstance(e.reason, str) else ""
