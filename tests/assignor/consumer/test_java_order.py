"""Java's string order and hash orders, against values taken from a JDK 17 and kafka-clients."""

from __future__ import annotations

import random
from collections.abc import Callable

from kassign.assignor.consumer.java_order import (
    HashTable,
    hash_order,
    java_key,
    java_keys,
    java_sorted,
    string_hash,
    topic_partition_hash,
)
from kassign.assignor.consumer.model import TopicPartition


def _signed(h: int) -> int:
    return h - (1 << 32) if h >= 1 << 31 else h


def test_string_hash_is_javas() -> None:
    assert string_hash("Aa") == string_hash("BB") == 2112
    assert _signed(string_hash("orders")) == -1008770331
    assert string_hash("\U0001f600") == (31 * 0xD83D + 0xDE00) & 0xFFFFFFFF  # UTF-16 units


def test_topic_partition_hash_is_kafkas() -> None:
    assert _signed(topic_partition_hash(string_hash("orders"), 7)) == -1008769153


def test_java_key_orders_by_utf16_code_units() -> None:
    emoji, private = "\U0001f600", "\ue000"
    assert emoji > private  # Python: code points
    assert java_key(emoji) < java_key(private)  # Java: a surrogate (D83D) before E000


def test_java_sorted_is_the_stable_sort_by_java_key() -> None:
    """ASCII ids (the strings as the key) and others (``java_key``), ties kept in order."""
    rng = random.Random(7)
    alphabets = ["ab-9", "ab\ue000\U0001f600z"]
    for alphabet in alphabets * 50:
        items = [("".join(rng.choices(alphabet, k=rng.randint(0, 3))), i) for i in range(12)]
        expected = sorted(items, key=lambda item: java_key(item[0]))
        assert java_sorted(items, lambda item: item[0]) == expected
        keys = java_keys([text for text, _ in items])
        assert sorted(range(12), key=keys.__getitem__) == [i for _, i in expected]
    assert java_sorted(["\U0001f600", "\ue000"], str) == ["\U0001f600", "\ue000"]


def test_java_keys_sort_as_java_key() -> None:
    """The plain strings serve as keys unless one holds a character above U+FFFF; either way
    they sort as ``java_key``s do (ASCII, the BMP around the surrogates, and beyond it)."""
    rng = random.Random(5)
    alphabets = ["ab1-", "a\u00e9\ud7ff\ue000\uffff", "a\ue000\uffff\U0001f600\U00010000"]
    for alphabet in alphabets:
        for _ in range(50):
            texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 4))) for _ in range(12)]
            keys = java_keys(texts)
            assert (keys is texts) == (max("".join(texts), default="") < "\U00010000")
            expected = sorted(texts, key=java_key)
            assert [texts[i] for i in sorted(range(12), key=keys.__getitem__)] == expected
            assert java_sorted(texts, str) == expected


def test_put_order_is_a_java_hashmaps() -> None:
    keys = [f"m-{i}" for i in range(15)] + ["Aa", "BB"]
    expected = "Aa BB m-10 m-1 m-13 m-0 m-14 m-3 m-11 m-2 m-12 m-5 m-4 m-7 m-6 m-9 m-8"
    assert hash_order(keys, string_hash) == expected.split()


def test_compute_if_absent_puts_new_keys_first_in_their_bucket() -> None:
    keys = ["Pay0", "logs1", "clicks2", "Pay3"]  # Pay0 and clicks2 share a bucket
    assert hash_order(keys, string_hash) == ["logs1", "Pay0", "clicks2", "Pay3"]
    assert hash_order(keys, string_hash, compute_if_absent=True) == [
        "logs1",
        "clicks2",
        "Pay0",
        "Pay3",
    ]


def test_compute_if_absent_of_a_present_key_may_grow_the_table() -> None:
    keys = [
        "x-y1",
        "a.b0",
        "a.b12",
        "a.b3",
        "x-y7",
        "t14",
        "a.b15",
        "a.b18",
        "x-y19",
        "x-y4",
        "t5",
        "t17",
        "t8",
    ]
    thirteen = "t5 a.b18 a.b3 t8 a.b15 x-y7 t14 x-y4 a.b0 x-y1 t17 a.b12 x-y19"
    grown = "t5 t8 x-y7 x-y4 a.b18 a.b3 a.b15 t14 a.b0 x-y1 t17 a.b12 x-y19"
    assert hash_order(keys, string_hash, compute_if_absent=True) == thirteen.split()
    assert hash_order([*keys, "t8"], string_hash, compute_if_absent=True) == grown.split()


def test_hash_set_first_after_removal() -> None:
    h = string_hash("orders")
    table: HashTable[TopicPartition] = HashTable(lambda tp: topic_partition_hash(h, tp.partition))
    for p in (40, 7, 23, 1, 99, 16):
        table.put(TopicPartition("orders", p))
    table.remove(TopicPartition("orders", 1))
    assert [tp.partition for tp in table.ordered()] == [7, 23, 40, 16, 99]
    assert table.first() == TopicPartition("orders", 7)
    assert TopicPartition("orders", 23) in table and len(table) == 5
    assert not table.treeified


def _replayed(keys: list[int], hash_of: Callable[[int], int]) -> list[int]:
    table: HashTable[int] = HashTable(hash_of)
    for key in keys:
        table.put(key)
    return table.ordered()


def test_put_order_from_the_final_capacity_is_the_replays() -> None:
    """hash_order sorts by the final bucket; the replay grows the table put by put. Crowded
    buckets below 64 buckets (hashes sharing low bits) grow it early, repeated keys keep their
    place: each mix at sizes around the growth points."""
    rng = random.Random(24)
    shapes: list[Callable[[int], int]] = [
        lambda k: k * 2654435761 & 0xFFFFFFFF,  # spread out
        lambda k: (k % 7) << 6,  # few buckets below 64, crowded: early growth
        lambda k: k << 16,  # only the high half: spread() folds it down
    ]
    for hash_of in shapes:
        for n in (0, 1, 9, 12, 13, 25, 48, 49, 97, 200, 1000):
            keys = [rng.randrange(3 * n + 1) for _ in range(n)]
            assert hash_order(keys, hash_of) == _replayed(keys, hash_of), (n, keys)
