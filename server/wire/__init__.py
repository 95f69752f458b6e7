"""Kafka's binary subscription formats, decoded and encoded byte for byte.

- ``buffer``: bounds-checked reader/writer; every decoding failure is a ``WireError`` with the
  byte offset.
- ``subscription_info``: Kafka Streams' ``SubscriptionInfoData`` v1-11 (the userData).
- ``consumer_protocol``: the consumer's ``ConsumerProtocolSubscription`` v0-3.

Values are our own frozen dataclasses mirroring the wire fields (not protobuf), with conversions
to and from the ``kassign.v1`` messages.
"""
