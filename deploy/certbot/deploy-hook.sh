#!/bin/sh
# certbot deploy hook: after a certificate is renewed, nginx is made to load it (it reads
# certificates only at start and reload). Without it nginx serves the old certificate until it
# expires, and with HSTS browsers then refuse the site outright (docs/decisions/105).
# Installed as /etc/letsencrypt/renewal-hooks/deploy/vestibule-nginx.sh (mode 0755): certbot runs
# every executable there after each successful renewal (deploy/README.md, step 6).
# A configuration that does not pass `nginx -t` is not reloaded: the running nginx keeps serving,
# the hook fails, and certbot reports it.
set -eu
nginx -t -q
nginx -s reload
