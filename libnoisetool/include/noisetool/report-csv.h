/* A report's tables as CSV files with a header row, for pandas, R and spreadsheets
 * (doc/report-csv.md). */
#ifndef NOISETOOL_REPORT_CSV_H
#define NOISETOOL_REPORT_CSV_H

#include <stddef.h>

#include <noisetool/common.h>
#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write sites.csv, ranks.csv, culprits.csv, culprit-nodes.csv, culprit-sites.csv and late.csv
 * into the existing directory dir, each by the output rules (noisetool/outfile.h); all six are
 * written and flushed before any is renamed into place. 0, or -errno with a one-line reason in
 * why: -EINVAL, -ENOMEM, -ENAMETOOLONG, nt_outfile_open's and nt_outfile_commit's errors, or
 * the write's (-EFBIG, -ENOSPC, -EIO). */
NT_API int nt_report_write_csv(const struct nt_report *rep, const char *dir, char *why,
			       size_t why_size);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_REPORT_CSV_H */
