/* Finding a log site's merged site in a report (site-index.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "site-index.h"

/* The identity of a site: function, module file name (not its path), offset; the order of
 * nt_site_identity_cmp (util.h), which takes log sites where these are merged ones. */
struct key {
	const char *function, *module;
	uint64_t offset;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int cmp_key(const struct key *a, const struct key *b)
{
	int c = strcmp(a->function, b->function);
	if (c)
		return c;
	if ((c = strcmp(base_name(a->module), base_name(b->module))))
		return c;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

static struct key key_of(const struct nt_report_site *s)
{
	return (struct key){ s->function, s->module, s->offset };
}

static int cmp_sites(const void *x, const void *y)
{
	struct key a = key_of(*(const struct nt_report_site *const *)x),
		   b = key_of(*(const struct nt_report_site *const *)y);
	return cmp_key(&a, &b);
}

static int cmp_find(const void *k, const void *y)
{
	struct key b = key_of(*(const struct nt_report_site *const *)y);
	return cmp_key(k, &b);
}

int nt_site_index_build(const struct nt_report *rep, struct nt_site_index *ix)
{
	if (!rep || !ix || (rep->nsites && !rep->sites))
		return -EINVAL;
	memset(ix, 0, sizeof *ix);
	ix->sites = calloc(rep->nsites ? rep->nsites : 1, sizeof *ix->sites);
	if (!ix->sites)
		return -ENOMEM;
	for (size_t i = 0; i < rep->nsites; i++)
		ix->sites[i] = &rep->sites[i];
	ix->n = rep->nsites;
	qsort(ix->sites, ix->n, sizeof *ix->sites, cmp_sites);
	return 0;
}

const struct nt_report_site *nt_site_index_find(const struct nt_site_index *ix,
						const struct nt_log_site *s)
{
	if (!ix || !s || !ix->n || !s->function || !s->module)
		return NULL;
	struct key k = { s->function, s->module, s->offset };
	const struct nt_report_site *const *hit = bsearch(&k, ix->sites, ix->n, sizeof *ix->sites,
							   cmp_find);
	return hit ? *hit : NULL;
}

void nt_site_index_free(struct nt_site_index *ix)
{
	if (!ix)
		return;
	free((void *)ix->sites);
	memset(ix, 0, sizeof *ix);
}
