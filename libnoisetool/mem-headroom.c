/* How much more memory this process can take before it is killed or refused (mem-headroom.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mem-headroom.h"

/* A cgroup v1 "no limit" is a page-rounded 2^63 - 1; anything this large limits nothing. */
#define NO_LIMIT (UINT64_C(1) << 62)

/* The whole of a small text file (at most size - 1 bytes), NUL-terminated; false when it
 * cannot be read. */
static bool read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, size - 1, f);
	bool ok = !ferror(f);
	fclose(f);
	buf[n] = '\0';
	return ok && n > 0;
}

/* The number in a file holding one ("max": none); false when it holds neither. */
static bool read_number(const char *path, uint64_t *v, bool *none)
{
	char buf[64], *end;
	*none = false;
	if (!read_text(path, buf, sizeof buf))
		return false;
	if (strncmp(buf, "max", 3) == 0) {
		*none = true;
		return true;
	}
	*v = strtoull(buf, &end, 10);
	return end != buf;
}

/* Take room when it is smaller than what out holds. */
static void consider(struct nt_mem_headroom *out, uint64_t room, const char *by, const char *raise)
{
	if (room >= out->bytes)
		return;
	out->bytes = room;
	snprintf(out->by, sizeof out->by, "%s", by);
	snprintf(out->raise, sizeof out->raise, "%s", raise);
}

/* The headroom of the cgroup at path (as /proc/self/cgroup names it) under base, and of each
 * of its ancestors up to base: limit - usage in the files of that hierarchy's version. A
 * directory not visible here (another cgroup namespace) is passed over. */
static void cgroup_room(struct nt_mem_headroom *out, const char *base, const char *path,
			const char *limit_file, const char *usage_file)
{
	char dir[1024];
	if ((size_t)snprintf(dir, sizeof dir, "%s%s", base, path) >= sizeof dir)
		return;
	size_t base_len = strlen(base);
	for (;;) {
		size_t n = strlen(dir);
		while (n > base_len && dir[n - 1] == '/')
			dir[--n] = '\0';
		char f[1100];
		uint64_t limit = 0, usage = 0;
		bool none;
		snprintf(f, sizeof f, "%s/%s", dir, limit_file);
		if (read_number(f, &limit, &none) && !none && limit < NO_LIMIT) {
			snprintf(f, sizeof f, "%s/%s", dir, usage_file);
			if (read_number(f, &usage, &none) && !none) {
				char by[sizeof out->by];
				snprintf(by, sizeof by, "the headroom of its memory cgroup: %s - %s in %s",
					 limit_file, usage_file, dir);
				consider(out, limit > usage ? limit - usage : 0, by,
					 "raise the memory limit of its cgroup (a batch job's memory "
					 "request)");
			}
		}
		char *slash = strrchr(dir, '/');
		if (n <= base_len || !slash || (size_t)(slash - dir) < base_len)
			break;
		*slash = '\0';
	}
}

/* The memory cgroups of this process, v2 ("0::/path") and v1 ("N:...memory...:/path"). */
static void cgroups_room(struct nt_mem_headroom *out)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *controllers = c1 + 1, *path = c2 + 1;
		if (strcmp(line, "0") == 0 && !*controllers) {
			*c1 = '\0';
			cgroup_room(out, "/sys/fs/cgroup", path, "memory.max", "memory.current");
			continue;
		}
		for (const char *p = controllers; *p;) {
			size_t k = strcspn(p, ",");
			if (k == 6 && strncmp(p, "memory", 6) == 0) {
				cgroup_room(out, "/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
					    "memory.usage_in_bytes");
				break;
			}
			p += k + (p[k] == ',');
		}
	}
	fclose(f);
}

/* A "Name:   N kB" line of /proc/self/status or /proc/meminfo in bytes; false if absent. */
static bool kib_field(const char *text, const char *name, uint64_t *bytes)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long kib;
		if (strncmp(p, name, n) == 0 && p[n] == ':' && sscanf(p + n + 1, "%llu", &kib) == 1) {
			*bytes = (uint64_t)kib * 1024;
			return true;
		}
	}
	return false;
}

/* The soft limit res against the usage named in /proc/self/status. */
static void rlimit_room(struct nt_mem_headroom *out, int res, const char *status, const char *field,
			const char *by, const char *raise)
{
	struct rlimit rl;
	uint64_t used = 0;
	if (getrlimit(res, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	kib_field(status, field, &used);
	uint64_t lim = (uint64_t)rl.rlim_cur;
	consider(out, lim > used ? lim - used : 0, by, raise);
}

void nt_mem_headroom(struct nt_mem_headroom *room)
{
	room->bytes = UINT64_MAX;
	snprintf(room->by, sizeof room->by, "nothing limits it");
	room->raise[0] = '\0';
	char text[8192];
	uint64_t avail;
	if (read_text("/proc/meminfo", text, sizeof text) && kib_field(text, "MemAvailable", &avail))
		consider(room, avail, "the memory available: MemAvailable in /proc/meminfo",
			 "free memory, or use a machine with more");
	cgroups_room(room);
	if (!read_text("/proc/self/status", text, sizeof text))
		text[0] = '\0';
	rlimit_room(room, RLIMIT_AS, text, "VmSize", "the headroom of its address-space limit: "
		    "ulimit -v", "raise ulimit -v");
	rlimit_room(room, RLIMIT_DATA, text, "VmData", "the headroom of its data-size limit: "
		    "ulimit -d", "raise ulimit -d");
}
