#!/bin/sh
# meson install: refresh the dynamic loader's cache after installing the shared libraries, as
# meson 1.1 and later do by themselves (Debian 12's 1.0 does not): without it, a program linked
# with libnoisetool-mpich.so.0 in /usr/local did not start ("cannot open shared object file")
# until someone ran ldconfig. Nothing to do for a staged install (--destdir) or a non-root user
# (whose prefix the loader does not search anyway: doc/linking.md).
[ "${MESON_INSTALL_DESTDIR_PREFIX:-}" = "${MESON_INSTALL_PREFIX:-}" ] || exit 0
[ "$(id -u)" = 0 ] || exit 0
for ldconfig in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
	if command -v "$ldconfig" >/dev/null 2>&1; then
		"$ldconfig" || echo "install-ldconfig.sh: $ldconfig failed; run it before starting programs linked with the libraries" >&2
		exit 0
	fi
done
exit 0
