"""The process around the service: the gRPC server (``app``), forked ``workers`` and their
``supervisor``, ``tls`` credentials, and the health ``probe``. No assignment logic here."""
