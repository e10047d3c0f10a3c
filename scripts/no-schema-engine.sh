#!/bin/sh
echo "schema engine not available offline; use npm run db:migrate" >&2
exit 1
