/* A report's merged call site of a rank's log site, for the writers that name every record's
 * and late instance's site (trace, CSV, page, comparison). Private to the core. */
#ifndef LIBNOISETOOL_SITE_INDEX_H
#define LIBNOISETOOL_SITE_INDEX_H

#include <noisetool/ntlog.h>
#include <noisetool/report.h>

/* The merged site of s (same function, module file name and offset: nt_site_identity_cmp's
 * identity), or NULL when s is NULL or not in the report: a binary search of the report's
 * sites in identity order (report.c keeps that order). O(log n), no memory. */
const struct nt_report_site *nt_report_merged_site(const struct nt_report *rep,
						   const struct nt_log_site *s);

#endif /* LIBNOISETOOL_SITE_INDEX_H */
