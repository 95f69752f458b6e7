"""The consumer-group room of the service: ``kassign.v1.ConsumerAssignmentService`` (KIP-881).

``decode`` (request -> ``ConsumerGroup``; ``options`` -> ``AssignOptions``), ``servicer``
(decode, assign with ``kassign.assignor.consumer``, encode; timed, observed), ``encode``
(-> ``ConsumerAssignResponse`` with Kafka's assignment bytes), ``service`` (added to the server).
"""
