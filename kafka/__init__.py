"""Kafka's binary subscription formats, decoded and encoded byte for byte, with no protobuf.

- ``buffer``: bounds-checked reader/writer; every decoding failure is a ``WireError`` with the
  byte offset.
- ``subscription_info``: Kafka Streams' ``SubscriptionInfoData`` v1-11 (the userData), and the
  protocol's facts about it (``LATEST_OFFSET``, the v1-6 task-list rule).
- ``consumer_protocol``: the consumer's ``ConsumerProtocolSubscription`` v0-3.

Values are our own frozen dataclasses mirroring the wire fields. This is the lowest layer: it
imports only the standard library, so the server's decoder and the Python client's encoder share
it without either depending on the other or on the service's contract.
"""

__all__: list[str] = []
