# kassign: `make run` serves on the defaults; `make test` sets everything up and runs the suite.
# Both start from a fresh clone: every Python and Debian package they need is installed here.

PYTHON    ?= python3
VENV      := .venv
PY        := $(VENV)/bin/python
PIP       := $(VENV)/bin/pip
PROTO_SRC := $(wildcard proto/kassign/v1/*.proto)
GEN       := gen/kassign/v1
# The folders the `kassign` namespace maps (pyproject's package-dir), linked into gen/kassign so
# that mypy, which cannot follow package-dir, sees one `kassign` package tree.
NAMESPACE := kafka assignor server pipeline cli
# Debian packages the suite runs for real: Prometheus, the JDK and Maven for the JVM client (Maven
# fetches grpc-java, protobuf, protoc and Kafka into ~/.m2), docker-compose to validate the compose
# file (no engine runs here), openssl for TLS test certs, Chromium and its driver for the
# browser tests of the pages kassign writes (tests/browser).
APT_PACKAGES := prometheus openjdk-17-jdk-headless maven docker-compose openssl chromium chromium-driver
# What `make java` needs of them: the JDK and Maven, not the browser or Prometheus.
JAVA_APT_PACKAGES := openjdk-17-jdk-headless maven
# What serving needs, and no more (`make run`): the image's pins, a subset of requirements.lock
# (deploy/requirements-runtime.txt; requirements-build.txt for `make gen` and the install).
SERVE_REQUIREMENTS := deploy/requirements-runtime.txt deploy/requirements-build.txt

.PHONY: setup serve-setup run test pytest system-deps java-deps java ghz ghz-missing grpcurl grpcurl-missing crd lint gen clean client-dist client-deps bench-check bench-cluster

# Everything the tests, lint, the benches and the pipeline need; `serve-setup` is its first part.
setup: $(VENV)/.installed $(VENV)/.client $(VENV)/.native $(VENV)/.deps

serve-setup: $(VENV)/.installed $(VENV)/.client $(VENV)/.native

$(VENV)/.serve-deps: $(SERVE_REQUIREMENTS)
	@echo "make: installing what kassign serve needs (gRPC, OR-Tools, numpy; about 300 MB) into $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet $(foreach r,$(SERVE_REQUIREMENTS),-r $(r))
	touch $@

$(VENV)/.deps: requirements.lock $(VENV)/.serve-deps
	@echo "make: installing the tests', lint's and the pipeline's tools (requirements.lock:" \
		"PySpark, pytest, mypy, Selenium, ...; about 1 GB more) into $(VENV)"
	$(PIP) install --quiet -r requirements.lock
	touch $@

$(GEN)/.stamp: $(VENV)/.serve-deps $(PROTO_SRC)
	mkdir -p $(GEN)
	$(PY) -m grpc_tools.protoc -Iproto --python_out=gen --pyi_out=gen --grpc_python_out=gen $(PROTO_SRC)
	touch gen/kassign/__init__.py $(GEN)/__init__.py
	for p in $(NAMESPACE); do ln -sfn ../../$$p gen/kassign/$$p; done
	touch $@

gen: $(GEN)/.stamp

$(VENV)/.installed: $(VENV)/.serve-deps $(GEN)/.stamp pyproject.toml $(VENV)/.client
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

# The client package (`kassign-client`: kassign_client, kassign.v1, kassign.kafka), which the
# server depends on, installed editable as the server is: its pyproject staged in CLIENT_DEV beside
# links to the folders it ships, so kassign.v1 and kassign.kafka are imported from one place, the
# client's installation, and an edit to them is seen at once (`make client-dist` builds its wheel).
CLIENT_DEV := build/client-dev
$(VENV)/.client: $(VENV)/.serve-deps $(GEN)/.stamp clients/python/pyproject.toml
	rm -rf $(CLIENT_DEV) && mkdir -p $(CLIENT_DEV)/kassign
	cp clients/python/pyproject.toml clients/python/README.md $(CLIENT_DEV)/
	ln -s ../../clients/python/kassign_client $(CLIENT_DEV)/kassign_client
	ln -s ../../../gen/kassign/v1 ../../../kafka $(CLIENT_DEV)/kassign/
	$(PIP) install --quiet --no-deps --no-build-isolation -e $(CLIENT_DEV)
	touch $@

# kassign's compiled core (assignor/native: the sticky assignors' general builder in Rust through
# PyO3, module kassign_native), built from its source by maturin (deploy/requirements-build.txt) with cargo
# into the venv. Cargo.lock pins its crates (pyo3 only): once fetched into ~/.cargo, a rebuild
# reads no index. Its build directory is build/native; the stamp rebuilds it only when its
# sources change. Cargo is looked for on PATH, then in ~/.cargo/bin (rustup's default).
NATIVE       := assignor/native
NATIVE_SRC   := $(addprefix $(NATIVE)/,Cargo.toml Cargo.lock pyproject.toml kassign_native.pyi) \
	$(wildcard $(NATIVE)/src/*.rs)
CARGO        ?= $(shell command -v cargo || { test -x $(HOME)/.cargo/bin/cargo && echo $(HOME)/.cargo/bin/cargo; })

$(VENV)/.native: $(VENV)/.serve-deps $(NATIVE_SRC)
	@test -n "$(CARGO)" || { echo "make setup: no Rust toolchain (neither 'cargo' on PATH nor" \
		"~/.cargo/bin/cargo); kassign_native is built from assignor/native with cargo" >&2; exit 1; }
	PATH="$(abspath $(VENV)/bin):$(dir $(CARGO)):$$PATH" CARGO_TARGET_DIR=$(abspath build/native) \
		$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall ./$(NATIVE)
	touch $@

# `make run HOST=0.0.0.0 PORT=6000 ARGS="--workers 2"`: where to serve, and any other serve flag.
HOST ?= 127.0.0.1
PORT ?= 50051
ARGS ?=
run: serve-setup
	$(VENV)/bin/kassign serve --host $(HOST) --port $(PORT) --metrics-host $(HOST) $(ARGS)

# Installs only what is missing, so a developer's second run does not touch apt.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "make: installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

system-deps:
	$(call apt_install,$(APT_PACKAGES))

java-deps:
	$(call apt_install,$(JAVA_APT_PACKAGES))

# Two Maven builds. The client: protoc, compile, the JUnit tests against Kafka 3.8.1 and 4.3.1
# (some start .venv/bin/kassign serve, hence serve-setup), clients/java/target/kassign-client.jar
# (shaded), into ~/.m2; beside it, the Prometheus JMX exporter's agent (target/jmx-exporter/) and
# the test classpath (target/test-classpath.txt) for tests/java/test_jmx_exporter.py. Then the
# broker plug-ins on Kafka 4.4.0, which include that jar: clients/java/broker/target/kassign-broker.jar.
java: java-deps serve-setup
	mvn -B -q -Dstyle.color=never -f clients/java/pom.xml install
	mvn -B -q -Dstyle.color=never -f clients/java/broker/pom.xml install

# Go tools built from their pinned Go modules into the venv, by `go_install` below: ghz, the gRPC
# load tester (bench/ghz, tests/ops/test_ghz.py), and grpcurl, which README's `grpcurl` lines run
# (tests/ops/test_grpcurl.py). Each stamp names its version, so a new version rebuilds the tool,
# and so does a missing binary. Go is not a Debian package here: it is already on these machines
# (/usr/local/go). The version is injected as their releases do (goreleaser), so `ghz --version`
# and `grpcurl -version` print it (a plain `go install` says "dev").
GHZ_VERSION     := v0.120.0
GHZ_STAMP       := $(VENV)/.ghz-$(GHZ_VERSION)
GRPCURL_VERSION := v1.9.4
GRPCURL_STAMP   := $(VENV)/.grpcurl-$(GRPCURL_VERSION)
GO              ?= $(shell command -v go || { test -x /usr/local/go/bin/go && echo /usr/local/go/bin/go; })

# $(call go_install,TOOL,VERSION,PACKAGE,VERSION FLAG,WHAT THAT FLAG PRINTS), as a recipe.
define go_install
	@test -n "$(GO)" || { echo "make $(1): no Go toolchain (neither 'go' on PATH nor" \
		"/usr/local/go/bin/go); $(1) $(2) is built from its source with Go" >&2; exit 1; }
	mkdir -p $(VENV)/bin
	GOBIN=$(abspath $(VENV)/bin) $(GO) install -ldflags "-X main.version=$(2)" $(3)@$(2)
	test "$$($(VENV)/bin/$(1) $(4) 2>&1)" = "$(5)"
	rm -f $(VENV)/.$(1)-*
	touch $@
endef

ghz: $(GHZ_STAMP)

$(GHZ_STAMP): $(if $(wildcard $(VENV)/bin/ghz),,ghz-missing)
	$(call go_install,ghz,$(GHZ_VERSION),github.com/bojand/ghz/cmd/ghz,--version,$(GHZ_VERSION))

grpcurl: $(GRPCURL_STAMP)

$(GRPCURL_STAMP): $(if $(wildcard $(VENV)/bin/grpcurl),,grpcurl-missing)
	$(call go_install,grpcurl,$(GRPCURL_VERSION),github.com/fullstorydev/grpcurl/cmd/grpcurl,-version,grpcurl $(GRPCURL_VERSION))

ghz-missing grpcurl-missing:

# The Prometheus Operator's ServiceMonitor CRD, its real schema, against which
# tests/ops/test_kubernetes_scrape.py validates deploy/k8s/servicemonitor.yaml. The Go module
# proxy serves the Operator's API types (pkg/apis/monitoring), not its repository's example CRDs:
# the CRD is generated from those types by controller-gen, the tool upstream generates them with.
# The result is committed ($(SERVICEMONITOR_CRD), its first line naming both pinned versions,
# which the test compares with these): building controller-gen and generating takes minutes on a
# fresh machine, more than `make test` can spend on every run. `make crd` regenerates it.
OPERATOR_VERSION       := v0.95.2
CONTROLLER_GEN_VERSION := v0.23.0
OPERATOR_API           := github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
SERVICEMONITOR_CRD     := tests/ops/data/monitoring.coreos.com_servicemonitors.yaml
CRD_WORK               := build/crd/operator-$(OPERATOR_VERSION)
CONTROLLER_GEN         := build/tools/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen

$(CONTROLLER_GEN):
	@test -n "$(GO)" || { echo "make crd: no Go toolchain (neither 'go' on PATH nor" \
		"/usr/local/go/bin/go); controller-gen is built from its source with Go" >&2; exit 1; }
	GOBIN=$(abspath $(dir $@)) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

crd: $(CONTROLLER_GEN)
	rm -rf $(CRD_WORK) && mkdir -p $(CRD_WORK)
	$(GO) mod download $(OPERATOR_API)@$(OPERATOR_VERSION)
	cp -r "$$($(GO) env GOMODCACHE)/$(OPERATOR_API)@$(OPERATOR_VERSION)" $(CRD_WORK)/api
	chmod -R u+w $(CRD_WORK)/api
	cd $(CRD_WORK)/api && PATH="$(dir $(GO)):$$PATH" GOFLAGS=-mod=mod \
		$(abspath $(CONTROLLER_GEN)) crd:crdVersions=v1 paths=./v1 output:crd:dir=$(abspath $(CRD_WORK))
	{ echo "# make crd: controller-gen $(CONTROLLER_GEN_VERSION) over $(OPERATOR_API)@$(OPERATOR_VERSION); do not edit"; \
		cat $(CRD_WORK)/monitoring.coreos.com_servicemonitors.yaml; } > $(SERVICEMONITOR_CRD)
	test -s $(SERVICEMONITOR_CRD)

# The Python client as a package of its own (clients/python/pyproject.toml, `kassign-client`):
# kassign_client, the generated kassign.v1 and kassign.kafka (the byte formats it encodes) are
# staged in CLIENT_STAGE and built into a wheel in CLIENT_DIST. Its dependencies are grpcio and
# protobuf only: `pip install build/client-dist/kassign_client-*.whl` needs no server.
CLIENT_STAGE := build/client-stage
CLIENT_DIST  := build/client-dist
client-dist: setup
	rm -rf $(CLIENT_STAGE) $(CLIENT_DIST)
	mkdir -p $(CLIENT_STAGE)/kassign/v1 $(CLIENT_STAGE)/kassign/kafka $(CLIENT_DIST)
	cp clients/python/pyproject.toml clients/python/README.md $(CLIENT_STAGE)/
	cp -r clients/python/kassign_client $(CLIENT_STAGE)/
	cp $(GEN)/*.py $(GEN)/*.pyi $(CLIENT_STAGE)/kassign/v1/
	cp kafka/*.py $(CLIENT_STAGE)/kassign/kafka/
	find $(CLIENT_STAGE) -name __pycache__ -prune -exec rm -rf {} +
	$(PIP) wheel --quiet --no-deps --no-build-isolation --wheel-dir $(CLIENT_DIST) $(CLIENT_STAGE)

# The client's own dependencies (grpcio and protobuf at requirements.lock's versions) as wheels,
# so the test installing the client alone in a fresh venv reads no index (tests/clients).
CLIENT_DEPS := build/client-deps
client-deps: $(CLIENT_DEPS)/.stamp

$(CLIENT_DEPS)/.stamp: requirements.lock | setup
	rm -rf $(CLIENT_DEPS) && mkdir -p $(CLIENT_DEPS)
	$(PIP) download --quiet --disable-pip-version-check --only-binary=:all: --dest $(CLIENT_DEPS) \
		$$(grep -E '^(grpcio|protobuf)==' requirements.lock)
	touch $@

# The compiled core's Rust is held to rustfmt and clippy (warnings fail) where rustup installed
# them (its default profile does); without them the lint says so and goes on.
lint: setup system-deps
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy --no-error-summary -p kassign -p kassign_client
	$(VENV)/bin/mypy --no-error-summary bench
	bash deploy/lint.sh
	@if $(CARGO) fmt --version >/dev/null 2>&1 && $(CARGO) clippy --version >/dev/null 2>&1; then \
		echo "lint: cargo fmt --check and cargo clippy -D warnings on $(NATIVE)" && \
		cd $(NATIVE) && $(CARGO) fmt --check && \
		PATH="$(abspath $(VENV)/bin):$(dir $(CARGO)):$$PATH" CARGO_TARGET_DIR=$(abspath build/native) \
			$(CARGO) clippy --quiet --locked -- -D warnings; \
	else echo "lint: rustfmt or clippy is missing (rustup component add rustfmt clippy):" \
		"the compiled core's source is not linted" >&2; fi

# The suite in two runs (tests/conftest.py's --phase says which test goes where, and why).
# First pure computation and servers on port 0 with nothing timed, on both cores, pytest-xdist
# giving each worker whole modules (their fixtures are module- or session-scoped); then the rest
# one test at a time, as the e2e and ops tests' timings assume (CI's 2 cores, 20 minutes).
pytest: setup system-deps java ghz grpcurl client-deps
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=10 --phase parallel
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m pytest -q -p no:cacheprovider --durations=20 \
		--phase serial

test: setup system-deps java lint pytest

# The benches' regression guard (bench/check.py), outside `make test`: each bench listed here
# measures its guarded lines (ratios of two times from the same run, so the machine's noise
# cancels) and fails on a line more than 1.5x worse than its record in bench/baselines/.
# `$(PY) bench/<bench>.py --record` rewrites a bench's records after an intended change.
# bench/memory_bench.py holds each shape's peak to issue 16's 20x its request (no record).
BENCH_CHECKS := bench/rack_aware_bench.py bench/consumer_check.py bench/load_check.py bench/streams_call_cpu.py bench/memory_bench.py
bench-check: setup
	@status=0; for b in $(BENCH_CHECKS); do $(PY) $$b --check || status=1; done; exit $$status

# The cluster benchmark (issue 26; docs/benchmarks.md): a real three-rack KRaft cluster on loopback,
# Kafka's assignors against kassign's under rolling restart, scale-out and kill -9, measured by the
# clients and brokers (bench/cluster/cluster_bench.py). About 20 minutes on 2 cores; not part of
# `make test`. It writes bench/cluster/results/ (results.json, table.md, plot.png) and its work
# to build/bench-cluster. The plug-in jar is `make java`'s; when it is missing it is packaged here
# without the JUnit tests. `make bench-cluster BENCH_CLUSTER_ARGS="--scenarios kill --warm 60"`.
BENCH_CLUSTER_ARGS ?=
bench-cluster: setup java-deps
	test -f clients/java/target/kassign-client.jar || \
		mvn -B -q -Dstyle.color=never -DskipTests -f clients/java/pom.xml package
	$(PY) bench/cluster/cluster_bench.py $(BENCH_CLUSTER_ARGS)

clean:
	rm -rf $(VENV) gen build clients/java/target clients/java/broker/target
