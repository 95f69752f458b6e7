"""The ``kassign`` command (``main``): serve (``serve``), assign, call, health, explain, next
(``next_round``), and the pipeline's Spark jobs (``spark_jobs``); ``python -m kassign.cli`` runs it. The top layer: nothing imports it.

gRPC's C core reads ``GRPC_VERBOSITY`` once, when ``grpc`` is first imported, which every
command does through this package: set here, its INFO lines (a failed TLS handshake, logged
before the command's own one-line account of it) are left out; errors still show, and a
verbosity the user set is kept."""

import os

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
