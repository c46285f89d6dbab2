#!/usr/bin/env bash
# examples/udp-pingpong: the server echoes payloads unchanged under every policy and backend and
# prints its telemetry on SIGTERM; the client gets every echo; bad arguments exit 2 with one
# message; a small matrix prints its table and CSV. No RTT is judged (bench udp-matrix does).
set -u
PROG=${1:?usage: test-udp-pingpong.sh UDP_PINGPONG}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
srv=
nt_on_exit '[ -n "$srv" ] && kill -KILL "$srv" 2>/dev/null'
fail=0
N=500

# bound PID PORT: PID holds a UDP socket bound to 127.0.0.1:PORT (one of its file descriptors
# is the socket /proc/net/udp lists at that address).
bound() {
	local inode
	for inode in $(awk -v a="$(printf '0100007F:%04X' "$2")" '$2 == a { print $10 }' /proc/net/udp); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q "socket:\[$inode\]" && return 0
	done
	return 1
}

# serve ARGS...: a server with ARGS on a free port, once it listens (a datagram sent before
# would be refused and counted lost); sets srv and port. A port another process took is
# retried on another, anything else fails.
serve() {
	local try i rc
	for try in 1 2 3 4 5; do
		port=$((10000 + RANDOM % 22000)) # below the ephemeral ports (32768-60999)
		"$PROG" server --port $port "$@" >"$tmp/srv" 2>&1 &
		srv=$!
		for ((i = 0; i < 600; i++)); do # 60 s: a loaded machine may start it slowly
			bound $srv $port && return 0
			kill -0 $srv 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL $srv 2>/dev/null
		wait $srv
		rc=$?
		srv=
		if grep -q "bind 127.0.0.1:$port: Address already in use" "$tmp/srv"; then
			echo "port $port is taken, trying another"
			continue
		fi
		echo "FAIL: server $* did not listen on port $port (exit $rc)"
		cat "$tmp/srv"
		return 1
	done
	echo "FAIL: server $*: five ports in a row were taken"
	return 1
}

# unserve: SIGTERM, then the server must print its telemetry and exit within 30 s.
unserve() {
	local i
	kill -TERM $srv
	for ((i = 0; i < 300; i++)); do
		kill -0 $srv 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $srv 2>/dev/null && { echo "FAIL: the server ignored SIGTERM"; kill -KILL $srv; fail=1; }
	wait $srv
	srv=
}

for backend in epoll select; do
	for policy in busy timed blocking adaptive; do
		serve --policy $policy --backend $backend || { fail=1; continue; }
		timeout 60 "$PROG" client --port $port --count $N --size 32768 >"$tmp/cli" 2>&1 ||
			{ echo "FAIL: client ($policy, $backend)"; cat "$tmp/cli"; fail=1; }
		unserve
		grep -q "^client: $N round trips of 32768 bytes (0 lost)" "$tmp/cli" ||
			{ echo "FAIL: $policy/$backend: client"; cat "$tmp/cli"; fail=1; }
		grep -q "^server: policy $policy, backend $backend, work 0 us: $N requests, 0 dropped" "$tmp/srv" ||
			{ echo "FAIL: $policy/$backend: server telemetry"; cat "$tmp/srv"; fail=1; }
	done
done
cat "$tmp/cli" "$tmp/srv"
# A datagram bigger than the client ever sends is still echoed whole (up to 65507 bytes).
if serve --policy adaptive; then
	timeout 60 "$PROG" client --port $port --count 50 --size 65507 >"$tmp/cli" 2>&1
	grep -q "50 round trips of 65507 bytes (0 lost)" "$tmp/cli" ||
		{ echo "FAIL: 65507-byte datagrams"; cat "$tmp/cli"; fail=1; }
	unserve
else
	fail=1
fi
for bad in "server --port 1 --policy lazy" "server --policy busy" "client --port 0" \
	"client --port 9 --size 70000" "matrix --loads 150" "bogus"; do
	timeout 60 "$PROG" $bad >"$tmp/bad" 2>&1
	rc=$?
	[ $rc = 2 ] && [ "$(grep -c 'udp-pingpong:' "$tmp/bad")" = 1 ] ||
		{ echo "FAIL: '$bad': want status 2 and one message, got $rc"; cat "$tmp/bad"; fail=1; }
done
# The matrix's default CPUs are the first two of the mask (one CPU: both on it).
timeout 120 "$PROG" matrix --seconds 0.2 --warmup-s 0.1 --sizes 4 --loads none,100 \
	--policies busy,adaptive --repeat 2 --csv "$tmp/m.csv" >"$tmp/m" 2>&1 || { echo "FAIL: matrix"; fail=1; }
cat "$tmp/m"
[ "$(grep -cE '^(none|100%) +(busy|adaptive) ' "$tmp/m")" = 8 ] || { echo "FAIL: want 8 matrix rows"; fail=1; }
[ "$(wc -l <"$tmp/m.csv")" = 17 ] || { echo "FAIL: want a CSV header and 16 runs"; fail=1; }
exit $fail
