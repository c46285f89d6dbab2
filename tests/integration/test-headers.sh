#!/usr/bin/env bash
# Every public header compiles on its own as strict C11 (no feature macros) and as C++11, so
# that users of the installed library need nothing but -I.
set -eu
INCLUDE=${1:?usage: test-headers.sh INCLUDE_DIR CC CXX}
CC=${2:?}
CXX=${3:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for h in "$INCLUDE"/noisetool/*.h; do
	name=$(basename "$h")
	printf '#include <noisetool/%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/t.c"
	"$CC" -std=c11 -pedantic -Wall -Wextra -Werror -I"$INCLUDE" -c "$tmp/t.c" -o "$tmp/t.o"
	"$CXX" -std=c++11 -Wall -Wextra -Werror -x c++ -I"$INCLUDE" -c "$tmp/t.c" -o "$tmp/t.o"
	n=$((n + 1))
done
[ "$n" -gt 0 ]
echo "$n headers compile alone as C11 and C++11"
