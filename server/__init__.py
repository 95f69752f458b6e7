"""kassign's gRPC service: one room per kind of group, the process runtime, and observers.

- ``streams``: the Kafka Streams room, the RPC adapter of ``kassign.v1.TaskAssignmentService``
  (``decode`` -> ``servicer`` -> ``encode``; ``service.add_to_server``);
- ``consumer``: the plain consumer groups' room, ``kassign.v1.ConsumerAssignmentService``, in
  the same shape;
- ``calls``: what both rooms' servicers share: the phase clock and the error edge;
- ``status``: errors mapped to gRPC status codes, once, for every room;
- ``runtime``: ``create_server``, ``serve``, forked workers, their supervisor, TLS, the probe;
- ``observe``: what watches the calls: Prometheus metrics, the call log, the request journal.
"""
