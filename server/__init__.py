"""kassign gRPC adapter: decoding, servicer, metrics, process model and CLI."""
