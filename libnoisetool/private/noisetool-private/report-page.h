/* The data of a job's HTML page (noisetool report --html): the report, and what the page draws
 * besides: call-time histograms, lateness by rank and time, the latest instances with their
 * causes, probe cost and injected time per rank (doc/html.md). Private to the core and the
 * noisetool command, whose plotting helper alone reads the document. */
#ifndef NOISETOOL_PRIVATE_REPORT_PAGE_H
#define NOISETOOL_PRIVATE_REPORT_PAGE_H

#include <stdio.h>

#include <noisetool/report.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The page's JSON document (schema noisetool-page/1) for the plotting helper
 * (tools/plot/noisetool_plot/report.py): "log": log_path (NULL: ""), "report": the document of
 * nt_report_write_json, then "partial_reasons", "histograms" (the first 50 call sites),
 * "lateness" (at most 256 rank rows x 100 time bins) and "latest" (the 2000 latest instances):
 * bounded whatever the number of records (doc/html.md, "The report page"). 0, -EINVAL (NULL f
 * or rep, or a report without its log), -EIO (writing failed), -ENOMEM. */
int nt_report_write_page_json(FILE *f, const struct nt_report *rep, const char *log_path);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_REPORT_PAGE_H */
