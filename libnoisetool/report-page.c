/* The data of a job's HTML page (noisetool/report-page.h). */
#include <errno.h>

#include <noisetool/report-page.h>

int nt_report_write_page_json(FILE *f, const struct nt_report *rep, const char *log_path)
{
	(void)log_path;
	return nt_report_write_json(f, rep); /* not yet: the report alone */
}
