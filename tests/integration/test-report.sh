#!/usr/bin/env bash
# Every way noisetool report can be handed a bad log (missing, empty, truncated, corrupted, another
# version, a directory, a FIFO, numbers out of range): exit 1, one line on stderr naming the file
# and the problem, nothing on stdout, no hang, no crash, no JSON left behind.
set -u
NT=${1:?usage: test-report.sh NOISETOOL MAKE-NTLOG PYTHON3 NTLOG-EDIT.PY}
MAKE=${2:?} PY=${3:?} EDIT=${4:?}
. "$(dirname "$0")/../lib.sh"
nt_tmpdir
. "$(dirname "$0")/cli-check.sh"

# report FILE ARGS...: the report of FILE, bounded (a reader that blocks or loops fails here).
report() { timeout -k 2 20 "$NT" report "$@" --no-symbols; }

# bad_log FILE PATTERN: report FILE exits 1 with one stderr line naming FILE and matching the
# extended regex PATTERN, nothing on stdout; again with --json, which leaves no file behind.
bad_log() {
	local file=$1 pat=$2 rc
	report "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "$file: exit $rc, want 1 ($([ $rc -eq 124 ] && echo hung || echo "$(head -c 300 "$tmp/err")"))"
		return
	fi
	if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then fail "$file: stderr is not one line"; cat "$tmp/err"; return; fi
	grep -qF -- "$file: " "$tmp/err" || { fail "$file: the message does not name the file"; cat "$tmp/err"; return; }
	grep -qE -- "$pat" "$tmp/err" || { fail "$file: message lacks /$pat/"; cat "$tmp/err"; return; }
	[ -s "$tmp/out" ] && { fail "$file: wrote to stdout"; return; }
	mkdir -p "$tmp/json"
	report "$file" --json "$tmp/json/r.json" >"$tmp/out" 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ -z "$(ls -A "$tmp/json")" ] ||
		{ fail "$file --json: exit $rc, stdout or $(ls "$tmp/json") left"; rm -f "$tmp/json"/*; return; }
	report "$file" --json - >"$tmp/out" 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] || { fail "$file --json -: exit $rc or stdout"; return; }
	ok
}

# edit OUT ARGS...: a damaged copy of the good log (ntlog-edit.py).
edit() {
	local out=$1
	shift
	"$PY" "$EDIT" "$good" "$out" "$@" || { fail "ntlog-edit $*"; return 1; }
}

# The good log and its layout: the control that every failure below is the damage's doing.
good=$tmp/good.ntlog
"$MAKE" "$good" 2 || { fail "make-ntlog"; summary; exit 1; }
report "$good" --json "$tmp/good.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && grep -q "^2 ranks" "$tmp/out" && [ ! -s "$tmp/err" ] && ok ||
	{ fail "the good log is refused"; cat "$tmp/out" "$tmp/err"; }
# Its one late instance: rank 1 entered the second allreduce 2 ms after rank 0, preempted.
"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
late = r["late_instances"]
assert r["ranks"] == 2 and len(late) == 1, late
assert late[0]["last_rank"] == 1 and late[0]["seq"] == 2, late
assert late[0]["delay_ns"] == 2000000 and late[0]["causes"]["preemption_ns"] > 0, late
' "$tmp/good.json" && ok || fail "the good log's report"
where=$("$PY" "$EDIT" "$good" where) || fail "ntlog-edit where"
at() { "$PY" -c "import json, sys; l = json.loads(sys.argv[1]); print($1)" "$where"; }
size=$(stat -c %s "$good")
[ "$(at 'l["end"]')" -eq "$size" ] && ok || fail "ntlog-edit reads the layout of the doc"

# Not there, nothing in it, not a file.
bad_log "$tmp/missing.ntlog" "No such file"
: >"$tmp/empty.ntlog"
bad_log "$tmp/empty.ntlog" "empty file"
mkdir "$tmp/dir.ntlog"
bad_log "$tmp/dir.ntlog" "Is a directory"
mkfifo "$tmp/fifo.ntlog"
bad_log "$tmp/fifo.ntlog" "not a regular file"
bad_log /dev/null "not a regular file"
# Larger than the memory the reader can take (MemAvailable, its cgroup, its ulimits): refused
# before anything is read, naming the limit and how to raise it. A sparse file twice the size of
# the memory available.
avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ -n "$avail_kib" ] && truncate -s $((2 * avail_kib))K "$tmp/huge.ntlog" 2>/dev/null; then
	bad_log "$tmp/huge.ntlog" "cannot read: the log is [0-9.]+ GiB, more than the [0-9.]+ [MG]iB of memory this process can take \(.+\).*: [a-z]"
	rm -f "$tmp/huge.ntlog"
fi
# Its records more than an address-space limit lets it take (ulimit -v), the file within it:
# refused when the rank's record count is read, before the records are, naming the limit. The
# log is sparse (the records are zeros) and its checksums right. A sanitizer's shadow memory
# does not run under ulimit -v.
if ! ldd "$NT" 2>/dev/null | grep -qE 'lib[at]san'; then
	"$PY" - "$tmp/many.ntlog" 2500000 <<'PYEOF' || fail "writing the log of many records"
import struct, sys, zlib
path, n = sys.argv[1], int(sys.argv[2])
head = struct.pack("<II", 0, 0) + bytes(14 * 8) + struct.pack("<I", 0)  # flags, no sites, host ""
head += struct.pack("<QQ", 0, n)                                         # records: n of zeros
tail = bytes(12)                                                         # three empty strings
plen = len(head) + 140 * n + len(tail)
crc, zero, left = zlib.crc32(head), bytes(1 << 20), 140 * n
while left:
    k = min(left, len(zero))
    crc, left = zlib.crc32(zero[:k], crc), left - k
crc = zlib.crc32(tail, crc)
hdr = bytearray(64)
hdr[0:8] = b"NTLOG\r\n\x1a"
struct.pack_into("<IIIII", hdr, 8, 4, 64, 1, 0, 1)
struct.pack_into("<dQ", hdr, 32, 2.6e9, 0)
struct.pack_into("<I", hdr, 60, zlib.crc32(bytes(hdr[:60])))
with open(path, "wb") as f:
    f.write(hdr + b"NTRK" + struct.pack("<IQII", 0, plen, crc, 0) + head)
    f.seek(140 * n, 1)
    f.write(tail)
PYEOF
	nt=$NT
	NT=$tmp/nt-limited # noisetool under ulimit -v 500 MB: the 350 MB log fits, its records not
	printf '#!/bin/sh\nulimit -v 500000 && exec "%s" "$@"\n' "$nt" >"$NT" && chmod +x "$NT"
	bad_log "$tmp/many.ntlog" "cannot read: out of memory at rank 0: with its report the log needs about [0-9]+ MiB, more than the [0-9]+ MiB this process can take \(.*ulimit -v\): raise ulimit -v"
	NT=$nt
	rm -f "$tmp/many.ntlog"
fi
if [ "$(id -u)" != 0 ]; then
	cp "$good" "$tmp/noperm.ntlog" && chmod 000 "$tmp/noperm.ntlog"
	bad_log "$tmp/noperm.ntlog" "Permission denied"
fi

# Truncated: in the header, after it, in a block's header, in a section, in a record, at the end.
rank0_block=$(at 'l["ranks"][0]["block"]')
rank0_sites=$(at 'l["ranks"][0]["payload"] + 100')
rank1_record=$(at 'l["ranks"][1]["records"] + 140 + 30')
for cut in 1 10 63 64 $((rank0_block + 10)) "$rank0_sites" "$rank1_record" $((size - 1)); do
	edit "$tmp/cut$cut.ntlog" cut "$cut" && bad_log "$tmp/cut$cut.ntlog" "truncated"
done
edit "$tmp/trailing.ntlog" cut "$size" && echo junk >>"$tmp/trailing.ntlog" &&
	bad_log "$tmp/trailing.ntlog" "unexpected bytes after the last rank block"

# Corrupted: checksums, magic, any byte.
edit "$tmp/crc-header.ntlog" flip 61 && bad_log "$tmp/crc-header.ntlog" "header checksum mismatch"
edit "$tmp/crc-rank1.ntlog" flip "$(at 'l["ranks"][1]["payload"] + 50')" &&
	bad_log "$tmp/crc-rank1.ntlog" "rank 1: checksum mismatch"
edit "$tmp/magic.ntlog" flip 0 && bad_log "$tmp/magic.ntlog" "not a noisetool log"
printf 'hello, world\n' >"$tmp/text.ntlog"
bad_log "$tmp/text.ntlog" "not a noisetool log"
edit "$tmp/rank-magic.ntlog" flip "$(at 'l["ranks"][1]["block"]')" &&
	bad_log "$tmp/rank-magic.ntlog" "rank block 1 .*missing"
for ((off = 3; off < size; off += 97)); do
	edit "$tmp/flip$off.ntlog" flip "$off" && bad_log "$tmp/flip$off.ntlog" "."
done

# Another version (the header checksum fixed, so that only the version is wrong): one this
# reader does not know, or an older one the blocks were not written in.
edit "$tmp/v10.ntlog" set header version 10 &&
	bad_log "$tmp/v10.ntlog" "written by a newer noisetool \(log version 10\); this one reads versions 1 to 9: report it with the noisetool that wrote it"
edit "$tmp/v0.ntlog" set header version 0 && bad_log "$tmp/v0.ntlog" "log version 0 is unknown"
edit "$tmp/v2-header.ntlog" set header version 2 &&
	bad_log "$tmp/v2-header.ntlog" "rank 0: malformed block contents \(read as version 2\)"
# Read as version 3 or 4, version 5's longer records run into each other: the block is
# malformed, or a record's field is out of range, whichever the bytes hit first; read as 5, the
# rank's CPUs at the end are bytes too many, read as 6 the other tasks on them, read as 7 the
# user and batch job, read as 8 the other tasks' span.
for v in 3 4 5 6 7 8; do
	edit "$tmp/v$v-header.ntlog" set header version $v &&
		bad_log "$tmp/v$v-header.ntlog" "rank 0: malformed block contents \(read as version $v\)|rank 0 record [0-9]+: .* out of range"
done
# Logs that builds of versions 1 to 8 wrote are read: the same report, but for what they lack
# (before 9 the other tasks' span is the whole job; before 8 no user and batch job; before 7 no other tasks on the rank's CPUs; before 6 no rank's CPUs and no test-call
# sampling; before 5 no kernel time in the windows;
# before 4 no job identity; before 3 no loss counts; in version 1 no intervals, so the late
# rank's record lost its interval).
for v in 1 2 3 4 5 6 7 8; do
	edit "$tmp/old$v.ntlog" as-version $v &&
		report "$tmp/old$v.ntlog" --json "$tmp/old$v.json" >"$tmp/out" 2>"$tmp/err" &&
		grep -q "^2 ranks, level os, waits mpi, complete" "$tmp/out" &&
		"$PY" -c '
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
v = int(sys.argv[3])
assert old["log_version"] == v and new["log_version"] == 9, old
batch = ("user", "batch_system", "batch_job", "batch_nodes")
assert [new["job"][k] for k in batch] == ["alice", "slurm", "77.0", "node-[a-b]"], new["job"]
assert v >= 8 or all(old["job"][k] == "" for k in batch), old["job"]
assert old["poll_sample"] == (16 if v >= 6 else 0) and new["poll_sample"] == 16, (old["poll_sample"], new["poll_sample"])
assert v >= 4 or (old["job"]["command"] == "" and old["job"]["commands"] == 0), old["job"]
assert v >= 6 or all(k["cpus"] == {"list": ""} for k in old["rank_times"]), old["rank_times"]
assert all("others" not in k["cpus"] and "pid" not in k["cpus"] for k in old["rank_times"]), old["rank_times"]
for k in old["rank_times"] + new["rank_times"]:
    del k["cpus"]
    k.pop("scan_ns", None)  # what version 7 reads of the other tasks costs: 0 in make-ntlog logs
assert old["sites"] == new["sites"] and old["rank_times"] == new["rank_times"], old
assert old["late_instances"][0]["delay_ns"] == new["late_instances"][0]["delay_ns"], old
' "$tmp/old$v.json" "$tmp/good.json" $v && ok || { fail "a version $v log"; cat "$tmp/err"; }
done

# Well-formed, checksums right, numbers out of range (doc/ntlog-format.md, "Ranges").
edit "$tmp/nranks.ntlog" set header nranks 3 && bad_log "$tmp/nranks.ntlog" "rank block 2 .*missing"
edit "$tmp/nranks0.ntlog" set header nranks 0 && bad_log "$tmp/nranks0.ntlog" "claims 0 ranks"
edit "$tmp/nranks1.ntlog" set header nranks 1 && bad_log "$tmp/nranks1.ntlog" "unexpected bytes"
edit "$tmp/level.ntlog" set header level 7 && bad_log "$tmp/level.ntlog" "probe level 7 is out of range"
for n in 0 1025; do
	edit "$tmp/sample$n.ntlog" set header poll_sample $n &&
		bad_log "$tmp/sample$n.ntlog" "header: test-call sampling 1 in $n is out of range \(1 to 1024\)"
done
for hz in nan inf 0 -2.6e9; do
	edit "$tmp/hz$hz.ntlog" set header clock_hz "$hz" &&
		bad_log "$tmp/hz$hz.ntlog" "counter frequency .* is out of range"
done
edit "$tmp/drift.ntlog" set rank 1 drift_ppb 10000000001 &&
	bad_log "$tmp/drift.ntlog" "rank 1: drift_ppb 10000000001 is out of range"
edit "$tmp/drift-.ntlog" set rank 1 drift_ppb -10000000001 &&
	bad_log "$tmp/drift-.ntlog" "rank 1: drift_ppb -10000000001 is out of range"
edit "$tmp/wall.ntlog" set rank 0 wall_ns $(((1 << 56) + 1)) &&
	bad_log "$tmp/wall.ntlog" "rank 0: wall_ns 72057594037927937 is out of range"
edit "$tmp/init.ntlog" set rank 1 init_global_ns -$(((1 << 56) + 1)) &&
	bad_log "$tmp/init.ntlog" "rank 1: init_global_ns -72057594037927937 is out of range"
edit "$tmp/start.ntlog" set record 1 1 start_ns 0xffffffffffffffff &&
	bad_log "$tmp/start.ntlog" "rank 1 record 1: start_ns 18446744073709551615 is out of range"
edit "$tmp/interval.ntlog" set record 0 2 interval_ns 0x8000000000000000 &&
	bad_log "$tmp/interval.ntlog" "rank 0 record 2: interval_ns [0-9]+ is out of range"
edit "$tmp/win.ntlog" set record 1 0 win_wall_ns 0x0100000000000001 &&
	bad_log "$tmp/win.ntlog" "rank 1 record 0: window wall_ns [0-9]+ is out of range"
edit "$tmp/site.ntlog" set record 0 1 site 2 &&
	bad_log "$tmp/site.ntlog" "rank 0 record 1: call site 2 is out of range"
# The limits themselves are in range: the reader is not stricter than its documentation.
"$PY" "$EDIT" "$good" "$tmp/edge1.ntlog" set rank 1 drift_ppb -10000000000 &&
	"$PY" "$EDIT" "$tmp/edge1.ntlog" "$tmp/edge2.ntlog" set rank 0 wall_ns $((1 << 56)) &&
	"$PY" "$EDIT" "$tmp/edge2.ntlog" "$tmp/edge.ntlog" set record 1 1 start_ns $((1 << 56)) &&
	report "$tmp/edge.ntlog" >/dev/null 2>"$tmp/err" && ok || { fail "the limits are refused"; cat "$tmp/err"; }

# The per-rank fallback: a header-only NAME and NAME.part0, NAME.part1 read as the whole log.
split_log() {
	head -c 64 "$good" >"$1"
	tail -c +$((rank0_block + 1)) "$good" | head -c "$(($(at 'l["ranks"][1]["block"]') - rank0_block))" >"$1.part0"
	tail -c +$(($(at 'l["ranks"][1]["block"]') + 1)) "$good" >"$1.part1"
}
split_log "$tmp/split.ntlog"
report "$tmp/split.ntlog" --json "$tmp/split.json" >/dev/null 2>"$tmp/err" &&
	cmp -s "$tmp/split.json" "$tmp/good.json" && ok || { fail "per-rank parts"; cat "$tmp/err"; }
split_log "$tmp/nopart.ntlog" && rm "$tmp/nopart.ntlog.part1"
bad_log "$tmp/nopart.ntlog" "the header alone .*nopart.ntlog.part1: No such file"
split_log "$tmp/fifopart.ntlog" && rm "$tmp/fifopart.ntlog.part0" && mkfifo "$tmp/fifopart.ntlog.part0"
bad_log "$tmp/fifopart.ntlog" "fifopart.ntlog.part0: not a regular file"

# Outputs that cannot be written: refused before the log is read, nothing on stdout.
expect_status 1 report "$good" --json "$tmp/nodir/r.json"
grep -q "cannot write '$tmp/nodir/r.json'" "$tmp/err" && ok || fail "unwritable JSON: the message"
expect_status 1 report "$tmp/missing.ntlog" --json "$tmp/nodir/r.json"
ls "$tmp" | grep -q '\.tmp\.' && fail "temporary file left" || ok

summary
