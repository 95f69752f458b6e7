"""From the wire to the assignor's input: ``decode_request(pb.AssignRequest) -> DecodedRequest``.

- ``configs``: ``AssignmentConfigs`` with Kafka's defaults and bounds.
- ``topology``: tasks and the task of each source partition.
- ``members``: one member's subscription, structured or Kafka bytes, checked.
- ``request``: clients grouped by process id; the ``ApplicationState``.
"""

from kassign.server.streams.decode.request import DecodedMember, DecodedRequest, decode_request

__all__ = ["DecodedMember", "DecodedRequest", "decode_request"]
