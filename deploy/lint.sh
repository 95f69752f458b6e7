#!/usr/bin/env bash
# Static checks of the deployment files (filled in by the operations work).
set -euo pipefail
