/* Language-binding call sites. */
#include <link.h>
#include <string.h>

#include "binding.h"
#include "stack.h"

enum { MAX_RANGES = 32 };

struct range {
	uintptr_t lo, hi;
	bool binding; /* else: this library */
};

static struct range ranges[MAX_RANGES];
static int nranges;

static bool is_binding_name(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	return !strncmp(base, "libmpichfort", 12) || !strncmp(base, "libmpi_mpifh", 12) ||
	       !strncmp(base, "libmpi_usempi", 13) || !strncmp(base, "libfmpich", 9);
}

static int add_module(struct dl_phdr_info *info, size_t size, void *self_addr)
{
	(void)size;
	bool binding = info->dlpi_name && is_binding_name(info->dlpi_name);
	bool self = false;
	for (int i = 0; i < info->dlpi_phnum && !binding; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (uintptr_t)self_addr >= lo && (uintptr_t)self_addr < lo + ph->p_memsz)
			self = true;
	}
	if (!binding && !self)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		ranges[nranges++] = (struct range){ lo, lo + ph->p_memsz, binding };
	}
	return 0;
}

void nt_binding_init(void)
{
	nranges = 0;
	dl_iterate_phdr(add_module, (void *)nt_binding_init);
}

static const struct range *find(uintptr_t addr)
{
	for (int i = 0; i < nranges; i++)
		if (addr >= ranges[i].lo && addr < ranges[i].hi)
			return &ranges[i];
	return NULL;
}

bool nt_binding_contains(uintptr_t addr)
{
	const struct range *r = find(addr);
	return r && r->binding;
}

uintptr_t nt_binding_caller(void)
{
	uintptr_t ips[8];
	int n = nt_stack_quick(ips, 8), i = 0;
	/* Frames before this library's own are whatever stands between backtrace and it: ASan's
	 * interceptor of backtrace under a sanitizer. */
	while (i < n && !find(ips[i]))
		i++;
	for (; i < n; i++)
		if (!find(ips[i]))
			return ips[i];
	return 0;
}
