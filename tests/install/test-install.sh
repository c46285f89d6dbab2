#!/usr/bin/env bash
# libnoisetool as a user gets it from `meson install`: the build tree installed with --destdir
# into a scratch directory (its .pc files are relocatable, so that tree is a prefix like any
# other), then used from outside through pkg-config alone.
#
#   test-install.sh tree     SOURCE BUILD MESON SANITIZE MPIS CC CXX
#   test-install.sh consumer SOURCE BUILD MESON SANITIZE MPIS
#   test-install.sh readme   SOURCE BUILD MESON SANITIZE MPIS
#
# tree:     the installed headers are exactly those of the public folders
#           (*/include/noisetool/), each compiling alone (C11 -pedantic -Werror, and C++11) with
#           only -I PREFIX/include; libnoisetool.so exports exactly what the installed headers
#           other than poller.h declare NT_API, libnoisetool-polling.so exactly what poller.h
#           does (tests/integration/api-symbols.py); sonames; the wrapper libraries need no
#           libnoisetool*.so at run time.
# consumer: tests/install/consumer, a meson project of its own, configured with
#           PKG_CONFIG_PATH=PREFIX/... only: its noise signature on the installed core (measured,
#           written, read back by the simulator), its UDP echo on the installed poller (fds, and
#           the no-fd decide/nap/event loop), and its MPI program linked (not preloaded) with each
#           wrapper library of MPIS, run on 2 ranks by the MPI's own launcher; the installed
#           noisetool reports both call sites with their exact call counts.
# readme:   the link recipes of README.md and doc/linking.md, run as written (the fenced block
#           after each `<!-- tests/install runs: NAME -->`) with PREFIX set, app.c the consumer's
#           MPI program, loop.c its echo and sig.c its noise signature; their report must show
#           the program's sites and counts, the others their own lines.
# MPIS is a comma-separated list of the wrapper libraries built (mpich,ompi). SANITIZE is the
# build's b_sanitize: the installed libraries of a sanitizer build need their runtime in every
# program that links them, so consumer and readme skip there (tree runs).
set -u
MODE=${1:?usage: test-install.sh tree|consumer|readme SOURCE BUILD MESON SANITIZE MPIS [CC CXX]}
SOURCE=${2:?}
BUILD=${3:?}
MESON=${4:?}
SANITIZE=${5:?}
MPIS=${6-}
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
command -v pkg-config >/dev/null || nt_skip "no pkg-config (apt-get install pkg-config)"
if [ "$MODE" != tree ] && [ "$SANITIZE" != none ]; then
	nt_skip "a $SANITIZE build: its installed libraries need the sanitizer runtime in every program that links them, which the recipes as written do not build (the normal build runs this test)"
fi
nt_tmpdir
unset LD_PRELOAD LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
for v in $(env | sed -n 's/^\(NOISETOOL_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# Install; find the prefix from the installed noisetool-polling.pc.
"$MESON" install -C "$BUILD" --destdir "$tmp/dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
	{ echo "FAIL: meson install --destdir"; cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/dest" -name noisetool-polling.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no noisetool-polling.pc installed"; exit 1; }
PKGDIR=$(dirname "$pc")
export PKG_CONFIG_PATH=$PKGDIR
PREFIX=$(realpath -m "$(pkg-config --variable=prefix noisetool-polling)")
case "$PREFIX" in
"$tmp/dest"/*) ;;
*) nt_skip "this build's .pc files are not relocatable (prefix=$PREFIX): meson configure $BUILD -Dpkgconfig.relocatable=true (the default since issue 19)" ;;
esac
LIBDIR=$(realpath -m "$(pkg-config --variable=libdir noisetool-polling)")
export PREFIX
echo "installed into $PREFIX (libdir $LIBDIR)"
IFS=, read -r -a mpis <<<"$MPIS"
fail=0

# mpi_launcher MPI: the MPI's own launcher.
mpi_launcher() { case "$1" in mpich) echo mpiexec.mpich ;; ompi) echo mpiexec.openmpi ;; esac; }

# check_sites REPORT FILE N NP: the text report REPORT names FILE's MPI_Allreduce line (marked
# "site: allreduce") with N*NP calls and its MPI_Barrier line with NP calls.
check_sites() {
	local report=$1 file=$2 n=$3 np=$4 line_a line_b
	line_a=$(grep -n 'site: allreduce' "$HERE/consumer/linked-mpi.c" | cut -d: -f1)
	line_b=$(grep -n 'site: barrier' "$HERE/consumer/linked-mpi.c" | cut -d: -f1)
	awk -v loc="$file:$line_a" -v want=$((n * np)) \
		'$1 == "MPI_Allreduce" && $2 == loc && $3 == want { ok = 1 } END { exit !ok }' "$report" ||
		{ echo "FAIL: the report lacks MPI_Allreduce at $file:$line_a with $((n * np)) calls"; return 1; }
	awk -v loc="$file:$line_b" -v want="$np" \
		'$1 == "MPI_Barrier" && $2 == loc && $3 == want { ok = 1 } END { exit !ok }' "$report" ||
		{ echo "FAIL: the report lacks MPI_Barrier at $file:$line_b with $np calls"; return 1; }
	echo "report: MPI_Allreduce $file:$line_a x $((n * np)), MPI_Barrier $file:$line_b x $np"
}

tree() {
	local cc=${1:?} cxx=${2:?} lib name core_headers=()
	# The public folders' headers and nothing else (the private root is never installed).
	if ! diff <(cd "$SOURCE" && ls -1 ./*/include/noisetool/*.h | xargs -n1 basename | sort) \
		<(ls -1 "$PREFIX/include/noisetool" | sort); then
		echo "FAIL: the installed headers (>) differ from those of the public folders (<)"
		fail=1
	else
		echo "$(ls -1 "$PREFIX/include/noisetool" | wc -l) headers installed: those of the public folders"
	fi
	# Every installed header alone, with nothing but the installed include directory.
	bash "$SOURCE/tests/integration/test-headers.sh" "$cc" "$cxx" "$PREFIX/include" ||
		{ echo "FAIL: an installed header does not compile alone"; fail=1; }
	# Each library's exports: exactly the NT_API declarations of its installed headers.
	for h in "$PREFIX"/include/noisetool/*.h; do
		[ "$(basename "$h")" = poller.h ] || core_headers+=("$h")
	done
	for name in libnoisetool libnoisetool-polling; do
		lib=$LIBDIR/$name.so
		[ -f "$lib" ] || { echo "FAIL: $name.so not installed in $LIBDIR"; fail=1; continue; }
		if [ $name = libnoisetool ]; then
			python3 "$SOURCE/tests/integration/api-symbols.py" "$lib" "${core_headers[@]}"
		else
			python3 "$SOURCE/tests/integration/api-symbols.py" "$lib" "$PREFIX/include/noisetool/poller.h"
		fi || fail=1
		readelf -d "$lib" | grep -q "SONAME.*\[$name\.so\.0\]" ||
			{ echo "FAIL: $name.so's soname is not $name.so.0"; fail=1; }
	done
	# Installed libraries carry no build-tree paths and need none of each other at run time.
	for lib in "$LIBDIR"/libnoisetool*.so; do
		if readelf -d "$lib" | grep -E 'RPATH|RUNPATH'; then
			echo "FAIL: $lib has a run path"
			fail=1
		fi
		if readelf -d "$lib" | grep -E 'NEEDED.*libnoisetool'; then
			echo "FAIL: $lib needs another libnoisetool library"
			fail=1
		fi
	done
	for m in "${mpis[@]}"; do
		pkg-config --exists "noisetool-$m" ||
			{ echo "FAIL: pkg-config does not resolve noisetool-$m: $(pkg-config --print-errors --exists "noisetool-$m" 2>&1)"; fail=1; }
	done
}

consumer() {
	local m exe out
	"$MESON" setup "$tmp/consumer" "$HERE/consumer" >"$tmp/setup.log" 2>&1 &&
		ninja -C "$tmp/consumer" >>"$tmp/setup.log" 2>&1 ||
		{ echo "FAIL: the consumer does not configure or build against $PREFIX"; cat "$tmp/setup.log"; exit 1; }
	# (a) the core: a detour run, its signature file, a simulation with it.
	timeout 60 "$tmp/consumer/noise-signature" 0.3 "$tmp/noise-signature.json" >"$tmp/sig" 2>&1 ||
		{ echo "FAIL: noise-signature"; cat "$tmp/sig"; fail=1; }
	cat "$tmp/sig"
	ldd "$tmp/consumer/noise-signature" | grep -q "libnoisetool.so.0 => $LIBDIR/" ||
		{ echo "FAIL: noise-signature does not load the installed core"; ldd "$tmp/consumer/noise-signature"; fail=1; }
	# (b) the poller: every reply checked, the poller's counters exact.
	timeout 60 "$tmp/consumer/echo-loop" 2000 adaptive >"$tmp/echo" 2>&1 ||
		{ echo "FAIL: echo-loop"; cat "$tmp/echo"; fail=1; }
	cat "$tmp/echo"
	ldd "$tmp/consumer/echo-loop" | grep -q "libnoisetool-polling.so.0 => $LIBDIR/" ||
		{ echo "FAIL: echo-loop does not load the installed poller"; ldd "$tmp/consumer/echo-loop"; fail=1; }
	# (c) the MPI program, linked with each wrapper library, on 2 ranks.
	for m in "${mpis[@]}"; do
		exe=$tmp/consumer/linked-mpi-$m
		out=$tmp/out-$m
		mkdir -p "$out"
		[ -x "$exe" ] || { echo "FAIL: the consumer did not build linked-mpi-$m (pkg-config noisetool-$m)"; fail=1; continue; }
		ldd "$exe" | grep -q "libnoisetool-$m.so.0 => $LIBDIR/" ||
			{ echo "FAIL: linked-mpi-$m does not load the installed libnoisetool-$m"; ldd "$exe"; fail=1; continue; }
		command -v "$(mpi_launcher "$m")" >/dev/null ||
			{ echo "FAIL: no $(mpi_launcher "$m") although libnoisetool-$m was built"; fail=1; continue; }
		NOISETOOL_OUT=$out NOISETOOL_SUMMARY=0 timeout 60 "$(mpi_launcher "$m")" -n 2 "$exe" 200 \
			>"$out/stdout" 2>&1 || { echo "FAIL: linked-mpi-$m on 2 ranks"; cat "$out/stdout"; fail=1; continue; }
		grep -q '^linked-mpi: 200 allreduces on 2 ranks, 0 wrong$' "$out/stdout" ||
			{ echo "FAIL: linked-mpi-$m's own check"; cat "$out/stdout"; fail=1; }
		"$PREFIX/bin/noisetool" report "$out"/linked-mpi-"$m"-*.ntlog >"$out/report" 2>&1 ||
			{ echo "FAIL: the installed noisetool cannot report linked-mpi-$m's log"; cat "$out/report"; fail=1; continue; }
		echo "$m: linked, not preloaded:"
		check_sites "$out/report" linked-mpi.c 200 2 || { cat "$out/report"; fail=1; }
	done
}

# block FILE NAME: the fenced block after `<!-- tests/install runs: NAME -->` in FILE.
block() {
	awk -v tag="<!-- tests/install runs: $2 -->" '
		index($0, tag) { armed = 1; next }
		armed && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$1"
}

readme() {
	local m file dir
	for spec in "mpich README.md" "mpich doc/linking.md" "ompi doc/linking.md" \
		"polling doc/linking.md" "core doc/linking.md"; do
		m=${spec%% *}
		file=${spec#* }
		case ",$MPIS,polling,core," in *",$m,"*) ;; *) echo "skipped (no libnoisetool-$m): $file link-$m"; continue ;; esac
		dir=$tmp/readme-$m-${file//\//-}
		mkdir -p "$dir"
		cp "$HERE/consumer/linked-mpi.c" "$dir/app.c"
		cp "$HERE/consumer/echo-loop.c" "$dir/loop.c"
		cp "$HERE/consumer/noise-signature.c" "$dir/sig.c"
		block "$SOURCE/$file" "link-$m" >"$dir/recipe.sh"
		[ -s "$dir/recipe.sh" ] || { echo "FAIL: no '<!-- tests/install runs: link-$m -->' block in $file"; fail=1; continue; }
		echo "\$ # $file, link-$m, PREFIX=$PREFIX"
		sed 's/^/$ /' "$dir/recipe.sh"
		# As a user's shell runs it: nothing of this test's environment but PREFIX and PATH.
		(cd "$dir" && env -i HOME="$HOME" PATH="$PATH" PREFIX="$PREFIX" \
			${OMPI_ALLOW_RUN_AS_ROOT:+OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1} \
			timeout 120 bash -e recipe.sh >out 2>&1) ||
			{ echo "FAIL: the recipe of $file (link-$m) failed as written"; tail -20 "$dir/out"; fail=1; continue; }
		if [ "$m" = polling ]; then
			grep -E '^echo-loop: (fds|no fds): 2000 round trips' "$dir/out" | grep -c . | grep -qx 2 ||
				{ echo "FAIL: $file link-polling: loop's lines are missing"; cat "$dir/out"; fail=1; }
			grep '^echo-loop' "$dir/out"
			continue
		fi
		if [ "$m" = core ]; then
			grep -q '^noise-signature: .* allreduce on 1024 ranks: ' "$dir/out" ||
				{ echo "FAIL: $file link-core: sig's line is missing"; cat "$dir/out"; fail=1; }
			grep '^noise-signature' "$dir/out"
			continue
		fi
		grep -q '^linked-mpi: 300 allreduces on 2 ranks, 0 wrong$' "$dir/out" ||
			{ echo "FAIL: $file link-$m: the program's own line is missing"; cat "$dir/out"; fail=1; }
		check_sites "$dir/out" app.c 300 2 || { cat "$dir/out"; fail=1; }
	done
}

case "$MODE" in
tree) tree "${7:-cc}" "${8:-c++}" ;;
consumer) consumer ;;
readme) readme ;;
*)
	echo "FAIL: unknown mode '$MODE'"
	exit 1
	;;
esac
exit $fail
