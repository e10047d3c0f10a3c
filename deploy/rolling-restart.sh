#!/usr/bin/env bash
# Restarts the Vestibule instances one at a time (deploy/README.md, "Rolling upgrade").
# Each restart returns once the new process answers /readyz (ExecStartPost in vestibule@.service,
# deploy/wait-ready.sh), ready or waiting for the database; the script then waits for 200 (the
# instance name is its port) before it goes on, and the pause after that outlasts nginx's
# fail_timeout, so nginx sends traffic to the restarted instance again before the next one drains. tests/deploy/rolling-restart.test.ts runs the same
# sequence against real processes.
set -euo pipefail
FAIL_TIMEOUT_S="${FAIL_TIMEOUT_S:-5}"
instances=("$@")
[ ${#instances[@]} -gt 0 ] || mapfile -t instances < <(systemctl list-units --plain --no-legend 'vestibule@*.service' | awk '{print $1}')
[ ${#instances[@]} -ge 2 ] || { echo "rolling-restart: need two or more running instances (got ${#instances[@]})" >&2; exit 1; }
for unit in "${instances[@]}"; do
  echo "rolling-restart: $unit" >&2
  systemctl restart "$unit"
  port="${unit#*@}"
  port="${port%.service}"
  until curl --silent --fail --output /dev/null --max-time 2 "http://127.0.0.1:${port}/readyz"; do
    echo "rolling-restart: $unit is not ready yet (the database?), waiting" >&2
    sleep 2
  done
  sleep "$((FAIL_TIMEOUT_S + 1))"
done
echo "rolling-restart: done" >&2
