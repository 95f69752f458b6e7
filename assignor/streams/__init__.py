"""The Kafka Streams room: KIP-441/708/925 task assignment over a frozen ``ApplicationState``.

Input ``model``, output ``result``; the assignors (``high_availability``, ``sticky``), their parts
(``lags``, ``balance``, ``movement``, ``standby``, ``tags``, ``rack``), ``threads`` (tasks to
consumers), ``validate`` (KIP-924) and ``api`` (the registry and ``run``). A consumer-group room
(KIP-881) goes beside it as ``kassign.assignor.consumer``, sharing ``flow``, ``ordering``,
``errors`` and ``timing`` one level up.
"""

__all__: list[str] = []
