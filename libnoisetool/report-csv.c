/* A report's tables as CSV (noisetool/report-csv.h). */
#include <errno.h>
#include <stdio.h>

#include <noisetool/report-csv.h>

int nt_report_write_csv(const struct nt_report *rep, const char *dir, char *why, size_t why_size)
{
	(void)rep;
	snprintf(why, why_size, "%s: CSV output is not built yet", dir);
	return -ENOSYS;
}
