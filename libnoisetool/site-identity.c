/* A call site's identity across ranks (site-identity.h). */
#include <string.h>

#include <noisetool/ntlog.h>

#include "site-identity.h"

int nt_site_identity_cmp(const struct nt_log_site *a, const struct nt_log_site *b)
{
	int c = strcmp(a->function, b->function);
	if (c)
		return c;
	const char *ma = strrchr(a->module, '/') ? strrchr(a->module, '/') + 1 : a->module;
	const char *mb = strrchr(b->module, '/') ? strrchr(b->module, '/') + 1 : b->module;
	if ((c = strcmp(ma, mb)))
		return c;
	return (a->offset > b->offset) - (a->offset < b->offset);
}
