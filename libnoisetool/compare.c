/* Two runs compared (noisetool/compare.h). */
#include <errno.h>
#include <stdio.h>

#include <noisetool/compare.h>

int nt_compare_build(const struct nt_report *a, const struct nt_report *b, struct nt_compare **out)
{
	(void)a;
	(void)b;
	*out = NULL;
	return -ENOSYS;
}

int nt_compare_write_text(FILE *f, const struct nt_compare *c, const char *a_path,
			  const char *b_path, size_t top)
{
	return -ENOSYS;
}

int nt_compare_write_json(FILE *f, const struct nt_compare *c, const char *a_path,
			  const char *b_path)
{
	return -ENOSYS;
}

int nt_compare_write_csv(const struct nt_compare *c, const char *dir, char *why, size_t why_size)
{
	snprintf(why, why_size, "%s: not built yet", dir);
	return -ENOSYS;
}

void nt_compare_free(struct nt_compare *c)
{
	(void)c;
}
