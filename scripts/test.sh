#!/usr/bin/env bash
# Quick start, part 2: every test — unit, integration (SQLite and PostgreSQL, the real IdP and
# SMTP sink) and browser (Chromium with JavaScript off and on). Extra arguments go to vitest.
set -euo pipefail
VESTIBULE_SETUP_BROWSER=1 VESTIBULE_SETUP_DEPLOY=1 VESTIBULE_SETUP_POSTGRES=1 source "$(dirname "$0")/setup.sh"
cd "$(dirname "$0")/.."
exec npm test -- "$@"
