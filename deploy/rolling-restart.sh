#!/usr/bin/env bash
# Restarts the Vestibule instances one at a time (deploy/README.md, "Rolling upgrade").
# Each restart returns once the instance answers /readyz (ExecStartPost in vestibule@.service);
# the pause after it outlasts nginx's fail_timeout, so nginx sends traffic to the restarted
# instance again before the next one drains. tests/deploy/rolling-restart.test.ts runs the same
# sequence against real processes.
set -euo pipefail
FAIL_TIMEOUT_S="${FAIL_TIMEOUT_S:-5}"
instances=("$@")
[ ${#instances[@]} -gt 0 ] || mapfile -t instances < <(systemctl list-units --plain --no-legend 'vestibule@*.service' | awk '{print $1}')
[ ${#instances[@]} -ge 2 ] || { echo "rolling-restart: need two or more running instances (got ${#instances[@]})" >&2; exit 1; }
for unit in "${instances[@]}"; do
  echo "rolling-restart: $unit" >&2
  systemctl restart "$unit"
  sleep "$((FAIL_TIMEOUT_S + 1))"
done
echo "rolling-restart: done" >&2
