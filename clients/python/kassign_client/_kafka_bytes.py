"""Kafka's own byte formats for subscriptions, from ``server.wire`` (the decoder's twin).

Kept behind two functions so ``build`` depends on one narrow surface of the wire package.
"""

from __future__ import annotations

from kassign.v1 import assignment_pb2 as pb

from server.wire import consumer_protocol, subscription_info

__all__ = ["encode_consumer_subscription", "encode_subscription_info"]


def encode_subscription_info(info: pb.SubscriptionInfo) -> bytes:
    """Streams' ``SubscriptionInfoData`` at ``info.version``, byte for byte as Kafka writes it."""
    return subscription_info.encode_subscription_info(subscription_info.info_from_pb(info))


def encode_consumer_subscription(sub: pb.ConsumerSubscription, version: int = 3) -> bytes:
    """The whole ``ConsumerProtocolSubscription`` (int16 version first) as Kafka writes it."""
    return consumer_protocol.encode_consumer_subscription(
        consumer_protocol.subscription_from_pb(sub, version)
    )
