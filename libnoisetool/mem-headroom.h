/* How much more memory this process can take before the kernel kills it or refuses it: the
 * smallest of the memory available on the machine, its memory cgroup's headroom and its
 * ulimits' headroom. Readers of large inputs check it before they allocate, so that a too
 * large input is one clear message rather than an OOM kill. */
#ifndef LIBNOISETOOL_MEM_HEADROOM_H
#define LIBNOISETOOL_MEM_HEADROOM_H

#include <stdint.h>

struct nt_mem_headroom {
	uint64_t bytes;  /* UINT64_MAX: nothing limits it that could be read */
	char by[1200];   /* what sets it, for a message: "MemAvailable in /proc/meminfo" */
	char raise[96];  /* how to get more: "free memory, or use a machine with more" */
};

/* The room now (each source read once: /proc/meminfo, /proc/self/cgroup and the cgroup's
 * memory files, v2 or v1, up to the root of its hierarchy, getrlimit RLIMIT_AS and RLIMIT_DATA
 * against /proc/self/status). A source that cannot be read does not limit it. */
void nt_mem_headroom(struct nt_mem_headroom *room);

#endif /* LIBNOISETOOL_MEM_HEADROOM_H */
