/* The .ntlog reader's knobs, private to the core and its tests: the window it reads files
 * through and the memory it may take (ntlog-read.c; doc/ntlog-format.md, "Memory"). */
#ifndef LIBNOISETOOL_NTLOG_READ_H
#define LIBNOISETOOL_NTLOG_READ_H

#include <stddef.h>

#include <noisetool/ntlog.h>

#include "mem-headroom.h"

/* The window a file is read through: 1 MiB, a thousand reads a GiB. */
#define NT_LOG_READ_CHUNK_BYTES ((size_t)1 << 20)
/* The smallest window: a record of the latest version, the largest piece decoded in one go
 * (ntlog-read.c, record_bytes). */
#define NT_LOG_READ_WINDOW_BYTES_(id, name, kind, source, since, key) +8
#define NT_LOG_READ_MIN_CHUNK_BYTES                                                            \
	(48 + 16 + 4 NT_LOG_WINDOW_FIELDS(NT_LOG_READ_WINDOW_BYTES_))

/* What the report needs per record besides the decoded log, counted against the room when a
 * log is read (libnoisetool/attrib.c): the cross-rank join's entry (40 bytes) and, at most one
 * per two records, a late instance (112 bytes): 96 at most. Its sorts' scratch (16 bytes a
 * record, glibc's indirect merge sort) is freed before the late instances are made. Measured
 * at 4,096 ranks x 10^7 records (few late instances): peak RSS 1,948 MiB, of which 57 bytes a
 * record besides the decoded log. */
#define NT_LOG_REPORT_BYTES_PER_RECORD 96

/* nt_log_read_file through a window of chunk_bytes (at least NT_LOG_READ_MIN_CHUNK_BYTES),
 * within room (NULL: no limit but what allocations refuse). Returns as nt_log_read_file. */
int nt_log_read_file_with(const char *path, size_t chunk_bytes, const struct nt_mem_headroom *room,
			  struct nt_log *log, char *err, size_t errsz);

#endif /* LIBNOISETOOL_NTLOG_READ_H */
