/* Which hosts make jobs late, across many jobs' logs (`noisetool hosts`; issue 36, the fleet
 * view): for each host, the delay its ranks imposed on the jobs they were in by arriving last at
 * collectives (the job reports' culprits by node), by cause, against the job time its ranks
 * spent (rank-hours), what they held up inside calls beside it, the jobs it was in and hurt,
 * the worst of them, and the span of time covered. */
#ifndef NOISETOOL_HOSTS_H
#define NOISETOOL_HOSTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/common.h>
#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nt_hosts;

/* An empty view; NULL when out of memory. */
NT_API struct nt_hosts *nt_hosts_new(void);

/* Add one job: its report (built from its log, which it borrows only during the call) and the
 * log's path (copied: the worst jobs name it). 0, -EINVAL, -ENOMEM. */
NT_API int nt_hosts_add(struct nt_hosts *h, const struct nt_report *rep, const char *log_path);

/* A log that could not be read, and why (both copied): counted and listed, never fatal. */
NT_API int nt_hosts_add_unreadable(struct nt_hosts *h, const char *log_path, const char *why);

/* The text table: hosts by the delay they imposed, most first; top = how many hosts (0: all).
 * 0, -EINVAL, -EIO. */
NT_API int nt_hosts_write_text(FILE *f, const struct nt_hosts *h, size_t top);

/* The JSON document (schema noisetool-hosts/1, doc/hosts.md). 0, -EINVAL, -EIO. */
NT_API int nt_hosts_write_json(FILE *f, const struct nt_hosts *h);

/* NULL is accepted. */
NT_API void nt_hosts_free(struct nt_hosts *h);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_HOSTS_H */
