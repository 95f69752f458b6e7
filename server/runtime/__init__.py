"""The process around the service: the gRPC server (``app``), forked ``workers``, their
``supervisor`` and the ``slots`` it gives up, ``cores`` for the default worker count, ``tls``
credentials, and the health ``probe``. No assignment logic here."""
