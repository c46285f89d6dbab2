#!/usr/bin/env bash
# examples/udp-pingpong: the server echoes payloads unchanged under every policy and backend and
# prints its telemetry on SIGTERM; the client reports its RTTs; bad arguments exit 2 with one
# message; a small matrix prints its table and CSV.
set -u
PROG=${1:?usage: test-udp-pingpong.sh UDP_PINGPONG}
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
port=$((20000 + RANDOM % 20000))
for backend in epoll select; do
	for policy in busy timed blocking adaptive; do
		"$PROG" server --port $port --policy $policy --backend $backend >"$tmp/srv" 2>&1 &
		srv=$!
		sleep 0.2
		"$PROG" client --port $port --count 2000 --size 32768 >"$tmp/cli" 2>&1 ||
			{ echo "FAIL: client ($policy, $backend)"; cat "$tmp/cli"; fail=1; }
		kill -TERM $srv
		wait $srv
		srv=
		grep -q "^client: 2000 round trips of 32768 bytes (0 lost)" "$tmp/cli" ||
			{ echo "FAIL: $policy/$backend: client"; cat "$tmp/cli"; fail=1; }
		grep -q "^server: policy $policy, backend $backend, work 0 us: 2000 requests, 0 dropped" "$tmp/srv" ||
			{ echo "FAIL: $policy/$backend: server telemetry"; cat "$tmp/srv"; fail=1; }
		port=$((port + 1))
	done
done
cat "$tmp/cli" "$tmp/srv"
# A datagram bigger than the client ever sends is still echoed whole (up to 65507 bytes).
"$PROG" server --port $port --policy adaptive >/dev/null 2>&1 &
srv=$!
sleep 0.2
"$PROG" client --port $port --count 50 --size 65507 | grep -q "50 round trips of 65507 bytes (0 lost)" ||
	{ echo "FAIL: 65507-byte datagrams"; fail=1; }
kill -TERM $srv
wait $srv
srv=
for bad in "server --port 1 --policy lazy" "server --policy busy" "client --port 0" \
	"client --port 9 --size 70000" "matrix --loads 150" "bogus"; do
	"$PROG" $bad >"$tmp/bad" 2>&1
	rc=$?
	[ $rc = 2 ] && [ "$(grep -c 'udp-pingpong:' "$tmp/bad")" = 1 ] ||
		{ echo "FAIL: '$bad': want status 2 and one message, got $rc"; cat "$tmp/bad"; fail=1; }
done
"$PROG" matrix --seconds 0.2 --warmup-s 0.1 --sizes 4 --loads none,100 --policies busy,adaptive \
	--repeat 2 --csv "$tmp/m.csv" >"$tmp/m" 2>&1 || { echo "FAIL: matrix"; fail=1; }
cat "$tmp/m"
[ "$(grep -cE '^(none|100%) +(busy|adaptive) ' "$tmp/m")" = 8 ] || { echo "FAIL: want 8 matrix rows"; fail=1; }
[ "$(wc -l <"$tmp/m.csv")" = 17 ] || { echo "FAIL: want a CSV header and 16 runs"; fail=1; }
exit $fail
