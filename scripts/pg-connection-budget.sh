#!/bin/sh
# pg-connection-budget.sh: runs the PostgreSQL-heavy tests once while
# another client holds 30 of the server's connections (PostgreSQL's default
# max_connections is 100), and prints the most connections the server had
# at once (pg_stat_activity, sampled every 100 ms) and how many of them the
# tests held. docs/operations.md ("PostgreSQL connections") has the budget.
#
#   scripts/pg-connection-budget.sh [go test arguments]
#   default: -count=1 -run 'TestScaleOutChaos|TestSplitRoles|TestKeyRevokedAcrossProcesses' ./cmd/gengate/
set -eu
PG=${GENGATE_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
HOLD=${HOLD:-30}
[ $# -gt 0 ] || set -- -count=1 -run 'TestScaleOutChaos|TestSplitRoles|TestKeyRevokedAcrossProcesses' ./cmd/gengate/
tmp=$(mktemp -d)
pids=""
# Killing psql does not end a backend busy in pg_sleep: terminate them too.
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	psql "$PG" -qAt -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'gengate-hold'" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

i=0
while [ $i -lt "$HOLD" ]; do # the other client: HOLD idle sessions
	PGAPPNAME=gengate-hold psql "$PG" -qAt -c "SELECT pg_sleep(86400)" >/dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
sleep 2
base=$(psql "$PG" -qAt -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
echo "held by the other client and already open: $base client connections"

( peak=0
  while :; do
	n=$(psql "$PG" -qAt -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>/dev/null || echo 0)
	[ "$n" -gt "$peak" ] && { peak=$n; echo "$peak" >"$tmp/peak"; }
	sleep 0.1
  done ) &
pids="$pids $!"

status=0
CI=true go test "$@" || status=$?
peak=$(cat "$tmp/peak" 2>/dev/null || echo "$base")
# The sampler's own psql counts once in peak. On a server other work uses
# too, the share counts that work as well: run it on a quiet server.
echo "peak: $peak client connections; the tests' share: $((peak - base - 1)) (budget 50)"
exit $status
