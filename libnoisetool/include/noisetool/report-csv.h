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

/* Write the site, rank, culprit and late-instance tables into the existing directory dir, each
 * file by the output rules (noisetool/outfile.h). 0, or -errno with a one-line reason in why. */
NT_API int nt_report_write_csv(const struct nt_report *rep, const char *dir, char *why,
			       size_t why_size);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_REPORT_CSV_H */
