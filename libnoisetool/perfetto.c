/* The Chrome trace-event timeline of a job (noisetool/perfetto.h). */
#include <errno.h>

#include <noisetool/perfetto.h>

int nt_perfetto_write(FILE *f, const struct nt_report *rep)
{
	(void)f;
	(void)rep;
	return -ENOSYS; /* not yet */
}
