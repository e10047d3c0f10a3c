#!/bin/sh
# Usage: wait-ready.sh PORT PID — the readiness check of deploy/systemd/vestibule@.service
# (ExecStartPost, PID being systemd's $MAINPID). Returns 0 once the process PID answers /readyz on
# 127.0.0.1:PORT with 200, or with 503 "database" (it is up and turns ready by itself when the
# database answers; rolling-restart.sh waits for 200 before it goes on). An answer from another
# process — an old one still holding the port — never counts: every probe answer names its
# process in X-Instance-Pid. Returns 1 as soon as PID has exited (its start failed, e.g. the port
# was taken). No limit of its own: the unit's TimeoutStartSec bounds it. docs/decisions/106.
set -u
port="$1"
pid="$2"
while :; do
  # Gone, or a zombie its parent has not collected yet.
  state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
  if [ -z "$state" ] || [ "$state" = Z ]; then
    echo "wait-ready: process $pid has exited: its start failed (see its log)" >&2
    exit 1
  fi
  answer=$(curl --silent --include --max-time 2 "http://127.0.0.1:${port}/readyz" 2>/dev/null | tr -d '\r')
  if printf '%s\n' "$answer" | grep -qix "x-instance-pid: ${pid}"; then
    case "$answer" in
      "HTTP/1.1 200"*) exit 0 ;;
      "HTTP/1.1 503"*'"reason":"database"'*)
        echo "wait-ready: process $pid runs but the database does not answer yet: it turns ready when it does" >&2
        exit 0 ;;
    esac
  fi
  sleep 1
done
