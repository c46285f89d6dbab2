/* A report's merged call sites by identity, to find the merged site (and so the location) of a
 * rank's log site: for the trace and CSV writers, which name every record's and late
 * instance's site. */
#ifndef LIBNOISETOOL_SITE_INDEX_H
#define LIBNOISETOOL_SITE_INDEX_H

#include <stddef.h>

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

struct nt_site_index {
	const struct nt_report_site **sites; /* rep->sites in identity order */
	size_t n;
};

/* Index rep's merged sites. Memory: one pointer per merged site. 0, -EINVAL, -ENOMEM. */
int nt_site_index_build(const struct nt_report *rep, struct nt_site_index *ix);

/* The merged site of s (same function, module file name and offset: nt_site_identity_cmp's
 * identity), or NULL when s is NULL or not in the report. O(log n). */
const struct nt_report_site *nt_site_index_find(const struct nt_site_index *ix,
						const struct nt_log_site *s);

void nt_site_index_free(struct nt_site_index *ix);

#endif /* LIBNOISETOOL_SITE_INDEX_H */
