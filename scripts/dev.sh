#!/usr/bin/env bash
# Quick start, part 1: the app on http://localhost:5173 with the embedded database, the dev mail
# outbox and the bundled dev OpenID provider — no server to install, no network needed.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
cd "$(dirname "$0")/.."
exec npm run dev -- "$@"
