# kassign: the task-assignment gRPC service (port 50051) with Prometheus metrics (port 9464).
#
# Three stages. "native" builds kassign's compiled core (assignor/native: Rust through PyO3, the
# kassign_native wheel) with cargo and maturin (pinned in deploy/requirements-build.txt), the crates
# pinned by its Cargo.lock. "build" generates the protobuf/gRPC code with the pinned grpcio-tools (the same step
# as the Makefile's "gen" target) and fills a virtualenv with the pinned serving dependencies:
# deploy/requirements-runtime.txt, a subset of requirements.lock with the same pins (no pyspark),
# and the kassign_native wheel.
# "runtime" gets that virtualenv, the source the `kassign` command imports (the `kassign` namespace:
# the generated kassign.v1 plus kafka, assignor, server, pipeline and cli, laid out under gen/kassign
# as pyproject's package-dir maps them; and kassign_client), and runs as an unprivileged user.
# Build:  docker build -t kassign:local .   (or docker compose up --build: docker-compose.yml)
# Run:    docker run --rm -p 127.0.0.1:50051:50051 -p 127.0.0.1:9464:9464 kassign:local

ARG PYTHON_IMAGE=python:3.11.7-slim-bookworm
# The Rust image (Debian's cc links the extension) with Debian's Python 3.11 for maturin: the wheel
# is abi3 (CPython 3.11 and later), so it installs into the runtime's Python.
ARG RUST_IMAGE=rust:1.95-slim-bookworm

FROM ${RUST_IMAGE} AS native
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/requirements-build.txt deploy/
RUN python3 -m venv /opt/maturin \
    && /opt/maturin/bin/pip install --no-deps "$(grep '^maturin==' deploy/requirements-build.txt)"
COPY assignor/native/ assignor/native/
RUN /opt/maturin/bin/maturin build --release --locked --manifest-path assignor/native/Cargo.toml \
        --interpreter python3 --out /wheels

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY deploy/requirements-build.txt deploy/requirements-runtime.txt deploy/
RUN python -m venv /opt/build \
    && /opt/build/bin/pip install --no-deps -r deploy/requirements-build.txt \
    && python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-deps -r deploy/requirements-runtime.txt
COPY --from=native /wheels/ /wheels/
RUN /opt/venv/bin/pip install --no-deps /wheels/*.whl
COPY proto/ proto/
RUN mkdir -p gen/kassign/v1 \
    && /opt/build/bin/python -m grpc_tools.protoc -Iproto --python_out=gen --pyi_out=gen \
        --grpc_python_out=gen proto/kassign/v1/*.proto \
    && touch gen/kassign/__init__.py gen/kassign/v1/__init__.py \
    && printf '%s\n' '#!/opt/venv/bin/python' 'import sys' 'from kassign.cli.main import main' \
        'sys.exit(main())' > /opt/venv/bin/kassign \
    && chmod 0755 /opt/venv/bin/kassign

FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app:/app/gen \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN groupadd --system --gid 10001 kassign \
    && useradd --system --uid 10001 --gid kassign --no-create-home --shell /usr/sbin/nologin kassign
COPY --from=build /opt/venv /opt/venv
COPY --from=build /src/gen /app/gen
COPY kafka/ /app/gen/kassign/kafka/
COPY assignor/ /app/gen/kassign/assignor/
COPY server/ /app/gen/kassign/server/
COPY cli/ /app/gen/kassign/cli/
# The CLI lists the pipeline's subcommands (their Spark code is imported only when one runs) and
# `kassign call` uses the Python client.
COPY pipeline/ /app/gen/kassign/pipeline/
COPY clients/python/kassign_client/ /app/kassign_client/
USER 10001:10001
WORKDIR /app
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["kassign", "health", "--target", "127.0.0.1:50051"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["kassign"]
CMD ["serve", "--host", "0.0.0.0", "--port", "50051", "--metrics-port", "9464"]
