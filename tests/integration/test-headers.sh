#!/usr/bin/env bash
# Every public header compiles on its own as strict C11 (no feature macros) and as C++11, so
# that users of the installed library need nothing but -I: with only the public include folders
# given, a header that reached into the private root (<noisetool-private/...>) fails too.
#
#   test-headers.sh CC CXX INCLUDE_DIR...   (each holding noisetool/*.h)
set -eu
CC=${1:?usage: test-headers.sh CC CXX INCLUDE_DIR...}
CXX=${2:?}
shift 2
[ $# -gt 0 ] || { echo "usage: test-headers.sh CC CXX INCLUDE_DIR..."; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=()
for d in "$@"; do
	inc+=("-I$d")
done
n=0
for d in "$@"; do
	for h in "$d"/noisetool/*.h; do
		name=$(basename "$h")
		printf '#include <noisetool/%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/t.c"
		"$CC" -std=c11 -pedantic -Wall -Wextra -Werror "${inc[@]}" -c "$tmp/t.c" -o "$tmp/t.o"
		"$CXX" -std=c++11 -Wall -Wextra -Werror -x c++ "${inc[@]}" -c "$tmp/t.c" -o "$tmp/t.o"
		n=$((n + 1))
	done
done
[ "$n" -gt 0 ]
echo "$n headers compile alone as C11 and C++11"
