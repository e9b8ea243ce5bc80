#!/usr/bin/env bash
# The README's test command. Starts a throwaway PostgreSQL server on 127.0.0.1
# when the Debian package is installed (for the PostgreSQL soak/storage tests),
# then runs the whole pytest suite. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# the browser test's screenshots go here; SAGE_SCREENSHOT_DIR=docs/screenshots refreshes the README's
export SAGE_SCREENSHOT_DIR="${SAGE_SCREENSHOT_DIR:-artifacts/screenshots}"
PG_STARTED=""
if [ -z "${SAGE_TEST_POSTGRES_URL:-}" ] && [ -f scripts/start_postgres.sh ] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if PG_ENV="$(bash scripts/start_postgres.sh)"; then
    eval "$PG_ENV"
    PG_STARTED=1
  else
    echo "warning: PostgreSQL could not be started; its tests will be skipped" >&2
  fi
fi
if [ $# -eq 0 ]; then
  # the soak tests first, unbuffered, so their row counts are printed; then everything else
  python3 -m pytest -q -s -p no:cacheprovider tests/test_soak_audit.py
  rc_soak=$?
  python3 -m pytest -q -p no:cacheprovider --durations=25 --ignore=tests/test_soak_audit.py
  rc=$?
  [ $rc -eq 0 ] && rc=$rc_soak
else
  python3 -m pytest -q "$@"
  rc=$?
fi
if [ -n "$PG_STARTED" ]; then bash scripts/start_postgres.sh stop >/dev/null 2>&1 || true; fi
exit $rc
