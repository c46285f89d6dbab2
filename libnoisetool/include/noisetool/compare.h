/* Two runs of one program compared: per call site and per rank what changed (time, calls,
 * spread, culprits), each change against the two runs' own run-to-run spread, so that a real
 * change is told from noise (doc/compare.md). */
#ifndef NOISETOOL_COMPARE_H
#define NOISETOOL_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include <noisetool/common.h>
#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nt_compare;

/* Compare run b with run a (a: before, b: after); both reports stay borrowed until
 * nt_compare_free. 0, -EINVAL, -ENOMEM. */
NT_API int nt_compare_build(const struct nt_report *a, const struct nt_report *b,
			    struct nt_compare **out);

/* The comparison as text; top = how many rows per table (0 = all). 0 or -EIO. */
NT_API int nt_compare_write_text(FILE *f, const struct nt_compare *c, const char *a_path,
				 const char *b_path, size_t top);

/* As JSON (doc/report-json.md, "Comparing two logs"). 0 or -EIO. */
NT_API int nt_compare_write_json(FILE *f, const struct nt_compare *c, const char *a_path,
				 const char *b_path);

/* Its tables as CSV files in the existing directory dir. 0, or -errno with the reason in why. */
NT_API int nt_compare_write_csv(const struct nt_compare *c, const char *dir, char *why,
				size_t why_size);

NT_API void nt_compare_free(struct nt_compare *c);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_COMPARE_H */
