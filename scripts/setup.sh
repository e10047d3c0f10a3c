# Sourced by scripts/dev.sh, scripts/test.sh and .ci/run: makes a fresh machine ready.
#   - Node >= 22.22 first on PATH (installs the npm package node@22 locally when needed)
#   - npm packages installed (again only when package-lock.json or the Node version changed)
#   - with VESTIBULE_SETUP_BROWSER=1: Debian's Chromium when missing (root only)
#   - with VESTIBULE_SETUP_DEPLOY=1: Debian's nginx and certutil (libnss3-tools) when missing (root
#     only; the deploy suite runs deploy/'s nginx site with a test CA, docs/decisions/066)
#   - with VESTIBULE_SETUP_POSTGRES=1: the machine's PostgreSQL cluster started when it is stopped
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$_root/scripts/node22.sh" || { echo "setup: could not get Node 22" >&2; return 1; }

_stamp="$_root/node_modules/.vestibule-install"
_want="$(node --version) $(sha256sum "$_root/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$_stamp" ] || [ "$(cat "$_stamp")" != "$_want" ]; then
  echo "setup: installing npm packages (better-sqlite3 compiles for $(node --version); about 2 minutes the first time)" >&2
  (cd "$_root" && npm ci --no-audit --no-fund --loglevel=error) || { echo "setup: npm ci failed" >&2; return 1; }
  echo "$_want" > "$_stamp"
fi

if [ "${VESTIBULE_SETUP_BROWSER:-}" = 1 ] && [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium for the browser tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2 || echo "setup: chromium install failed" >&2
  else
    echo "setup: chromium not found; install it (apt-get install chromium) or set CHROMIUM_PATH" >&2
  fi
fi

if [ "${VESTIBULE_SETUP_DEPLOY:-}" = 1 ] && { ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] || ! command -v certutil >/dev/null 2>&1; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's nginx and libnss3-tools for the deploy tests" >&2
    # The package would start nginx as a system service on port 80; the suite runs its own, so
    # the service is kept from starting (policy-rc.d, only when none is in place already).
    _policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && _policy=1; fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx libnss3-tools) >&2 || echo "setup: nginx/libnss3-tools install failed" >&2
    [ -n "$_policy" ] && rm -f /usr/sbin/policy-rc.d
  else
    echo "setup: nginx or certutil not found; install them (apt-get install nginx libnss3-tools)" >&2
  fi
fi

if [ "${VESTIBULE_SETUP_POSTGRES:-}" = 1 ] && [ -z "${VESTIBULE_TEST_PG_URL:-}" ] && command -v pg_lsclusters >/dev/null 2>&1; then
  if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
    _version="$(ls /etc/postgresql 2>/dev/null | head -n1)"
    [ -n "$_version" ] && pg_ctlcluster --skip-systemctl-redirect "$_version" main start >&2 2>/dev/null || true
  fi
fi
unset _root _stamp _want _version _policy
