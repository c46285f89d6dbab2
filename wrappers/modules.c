/* Modules by address, each looked up once. */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modules.h"

/* Modules seen so far: an MPI job maps 50-80; those past the cache are looked up each time. */
enum { CACHE = 128 };
static struct nt_module cache[CACHE];
static int ncached;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct search {
	uintptr_t addr;
	struct nt_module found;
	const char *name; /* the loader's name, "" for the executable */
	int hit;
};

static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct search *s = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0, first_vaddr = UINTPTR_MAX;
	int in = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (s->addr >= a && s->addr < b)
			in = 1;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
		if (ph->p_vaddr < first_vaddr)
			first_vaddr = ph->p_vaddr;
	}
	if (!in)
		return 0;
	/* dli_fbase: where the first segment's page starts. */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	s->found = (struct nt_module){ lo, hi, info->dlpi_addr + (first_vaddr & ~(page - 1)), NULL };
	s->name = info->dlpi_name ? info->dlpi_name : "";
	s->hit = 1;
	return 1;
}

/* The absolute path of a module the loader names name ("" for the executable), malloc'd. */
static char *absolute(const char *name)
{
	char buf[PATH_MAX];
	if (!name[0]) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
		if (n > 0) {
			buf[n] = '\0';
			return strdup(buf);
		}
		return strdup(program_invocation_name);
	}
	if (name[0] != '/' && realpath(name, buf))
		return strdup(buf);
	return strdup(name); /* absolute already (kept as the loader found it), or unknown */
}

int nt_module_of(uintptr_t addr, struct nt_module *m)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < ncached; i++) {
		if (addr >= cache[i].lo && addr < cache[i].hi) {
			*m = cache[i];
			pthread_mutex_unlock(&lock);
			return 0;
		}
	}
	struct search s = { .addr = addr };
	dl_iterate_phdr(find, &s);
	int rc = -ENOENT;
	*m = (struct nt_module){ 0, 0, 0, "" };
	if (s.hit) {
		s.found.path = absolute(s.name);
		if (!s.found.path)
			s.found.path = s.name[0] ? s.name : "";
		*m = s.found;
		if (ncached < CACHE)
			cache[ncached++] = s.found;
		rc = 0;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}
