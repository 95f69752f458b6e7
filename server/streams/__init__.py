"""The Kafka Streams room of the service: ``kassign.v1.TaskAssignmentService``.

``decode`` (request -> ``ApplicationState``), ``servicer`` (decode, assign, distribute, encode;
timed, observed), ``encode`` (-> ``AssignResponse``), ``service`` (added to the gRPC server).
"""
