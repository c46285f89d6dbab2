/* The separate debug files that addr2line (BFD) opens for a module, checked before addr2line
 * runs: BFD opens them with a blocking open, so one that is a FIFO would hang addr2line (and
 * the report, until addr2line's timeout) even though the module itself is a regular file. */
#ifndef TOOLS_DEBUGLINK_H
#define TOOLS_DEBUGLINK_H

#include <stdbool.h>
#include <stddef.h>

/* The directory BFD looks in for separate debug files (Debian's binutils: --with-separate-
 * debug-dir). */
#define DEBUGLINK_GLOBAL_DIR "/usr/lib/debug"

/* Whether every separate debug file that addr2line may open for the 64-bit ELF module at path
 * (open as fd, a regular file) is missing or a regular file: the files named by its
 * .gnu_debuglink (beside it, in its .debug/, under DEBUGLINK_GLOBAL_DIR, for its path as given
 * and as resolved) and .gnu_debugaltlink (DWARF supplementary file), and those of its build
 * IDs under DEBUGLINK_GLOBAL_DIR/.build-id. Only stat(), never an open. true for a module
 * that is not 64-bit ELF (nothing known: addr2line's timeout bounds it) or names none; false
 * when one of them is anything else (a FIFO, a device, a directory, a socket), or when the
 * module is 64-bit ELF whose section headers cannot be read. */
bool debuglink_files_safe(int fd, const char *path);

/* Build IDs are at most this long (GNU ld writes 20 bytes, SHA-1). */
#define DEBUGLINK_MAX_BUILD_ID 64

/* What the 64-bit ELF file open as fd says of its debug information: its GNU build ID into id
 * (DEBUGLINK_MAX_BUILD_ID bytes), and in *debug_info whether it holds DWARF of its own (a
 * .debug_info section with contents). The build ID's length (0: none), or -1 when fd is not
 * 64-bit ELF or its section headers cannot be read (pread alone, bounded as above). */
int debuglink_build_id(int fd, unsigned char *id, bool *debug_info);

/* The path of the debug file of build ID id under the debug directory dir, as Debian's -dbgsym
 * packages install them: DIR/.build-id/xx/rest.debug (xx the first byte in hex, rest the
 * others). false when len < 2 or it does not fit size. */
bool debuglink_build_id_path(const char *dir, const unsigned char *id, size_t len, char *out,
			     size_t size);

#endif /* TOOLS_DEBUGLINK_H */
