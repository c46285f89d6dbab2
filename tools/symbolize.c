/* addr2line-based symbolization: one long-lived addr2line coprocess per module (at most
 * max_procs at once, the least recently used stopped first), every answer cached per
 * (module, offset). A log of 5,120 call sites in one module took 110 s to report with one
 * addr2line process per site and takes 0.2 s this way (2 CPUs, Debian 12, binutils 2.40). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "addr2line.h"
#include "debuglink.h"
#include "elfsyms.h"
#include "symbolize.h"

/* A module addr2line died on this many times is given up (a crash on one address costs that
 * address alone, as with one process per address, but a module that always crashes is not
 * restarted for each of its call sites). */
#define MAX_DEATHS 3
/* After this many answers not given in time, addr2line is not asked again. */
#define MAX_TIMEOUTS 2

struct module {
	char *path;
	char *debug_path; /* its debug file under cfg.debug_dir, given to addr2line; NULL: path */
	uint64_t bias;  /* added to an offset: addr2line's file address */
	struct elfsyms *syms; /* its function symbols; NULL: none read (not ELF, or no memory) */
	bool given_up;  /* not a regular file, refused by addr2line, dying or too slow */
	int slot;       /* its coprocess in slots[], or -1 */
	unsigned deaths;
};

struct slot {
	struct addr2line_proc proc;
	uint32_t module;
	uint64_t last_used;
	bool live;
};

struct answer {
	uint32_t module_1; /* module index + 1; 0: an empty bucket */
	uint64_t offset;
	char *text;        /* NULL: no name */
};

struct symbolizer {
	struct symbolizer_config cfg;
	struct module *modules;
	size_t nmodules, modules_cap;
	uint32_t *module_index; /* hash of path -> module index + 1; index_cap buckets */
	size_t index_cap;
	struct answer *answers; /* hash of (module, offset); answers_cap buckets */
	size_t nanswers, answers_cap;
	struct slot *slots;     /* cfg.max_procs */
	uint64_t tick;
	bool no_program;        /* addr2line cannot be run, or is not asked any more */
	unsigned timeouts;
	struct symbolizer_stats stats;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_site(uint32_t module, uint64_t offset)
{
	uint64_t h = offset * 0x9e3779b97f4a7c15ull ^ (module + 1ull) * 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 29);
}

/* The one warning of a run; later problems are not reported again. */
__attribute__((format(printf, 2, 3)))
static void warn_once(struct symbolizer *s, const char *fmt, ...)
{
	if (s->stats.warnings)
		return;
	s->stats.warnings++;
	va_list ap;
	va_start(ap, fmt);
	fprintf(s->cfg.warn, "%s: ", s->cfg.who);
	vfprintf(s->cfg.warn, fmt, ap);
	fputs("; call sites it did not name are shown as module+offset\n", s->cfg.warn);
	va_end(ap);
}

int symbolizer_open(struct symbolizer **out, const struct symbolizer_config *cfg)
{
	if (!out || (cfg && cfg->timeout_ms < 0))
		return -EINVAL;
	struct symbolizer *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	if (cfg)
		s->cfg = *cfg;
	if (!s->cfg.who)
		s->cfg.who = "noisetool";
	if (!s->cfg.program)
		s->cfg.program = "addr2line";
	if (!s->cfg.max_procs)
		s->cfg.max_procs = SYMBOLIZE_MAX_PROCS;
	if (!s->cfg.timeout_ms)
		s->cfg.timeout_ms = SYMBOLIZE_TIMEOUT_MS;
	if (!s->cfg.warn)
		s->cfg.warn = stderr;
	s->slots = calloc(s->cfg.max_procs, sizeof *s->slots);
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

/* Stop a slot's process: addr2line_stop's result (0: it exited by itself with *status). */
static int stop_slot(struct symbolizer *s, struct slot *sl, int grace_ms, int *status)
{
	int rc = addr2line_stop(&sl->proc, grace_ms, status);
	s->modules[sl->module].slot = -1;
	sl->live = false;
	s->stats.live--;
	return rc;
}

void symbolizer_close(struct symbolizer *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->cfg.max_procs; i++)
		if (s->slots[i].live)
			stop_slot(s, &s->slots[i], 0, NULL);
	for (size_t i = 0; i < s->answers_cap; i++)
		free(s->answers[i].text);
	for (size_t i = 0; i < s->nmodules; i++) {
		free(s->modules[i].path);
		free(s->modules[i].debug_path);
		elfsyms_free(s->modules[i].syms);
	}
	free(s->answers);
	free(s->module_index);
	free(s->modules);
	free(s->slots);
	free(s);
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->stats;
}

/* The debug file of the module open as fd (a regular file) under dir, by its build ID: when the
 * module has no DWARF of its own and the file is a regular file with the same build ID and
 * DWARF, true with its path in out and its function symbols (a stripped module has its
 * exported ones alone; the debug file keeps .symtab) put in *syms. */
static bool find_debug_file(const char *dir, int fd, char *out, size_t size, struct elfsyms **syms)
{
	unsigned char id[DEBUGLINK_MAX_BUILD_ID], dbg_id[DEBUGLINK_MAX_BUILD_ID];
	bool dwarf;
	int len = debuglink_build_id(fd, id, &dwarf);
	if (len < 2 || dwarf || !debuglink_build_id_path(dir, id, (size_t)len, out, size))
		return false;
	struct stat st;
	if (stat(out, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	int dfd = open(out, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (dfd < 0)
		return false;
	bool ok = fstat(dfd, &st) == 0 && S_ISREG(st.st_mode) &&
		  debuglink_build_id(dfd, dbg_id, &dwarf) == len && dwarf &&
		  !memcmp(id, dbg_id, (size_t)len) && debuglink_files_safe(dfd, out);
	struct elfsyms *full;
	if (ok && elfsyms_load(dfd, &full) == 0) {
		if (elfsyms_count(full) > elfsyms_count(*syms)) {
			elfsyms_free(*syms);
			*syms = full;
		} else {
			elfsyms_free(full);
		}
	}
	close(dfd);
	return ok;
}

/* Whether module is a regular file addr2line may read, and its bias: addr2line wants file
 * addresses, which for a PIE or a shared object are the offsets from the load base, and for a
 * fixed-address executable (ET_EXEC) the offsets plus its first loadable segment's address.
 * stat() first and O_NONBLOCK: a FIFO or a device named as a module is never opened. Nor is
 * one that the module names as its separate debug file, which addr2line would open blocking
 * (debuglink.h): such a module is not given to addr2line. *syms gets its function symbols
 * (NULL: none read), *debug_path its debug file under cfg.debug_dir (NULL: none there). */
static bool inspect(const struct symbolizer *s, const char *path, uint64_t *bias,
		    struct elfsyms **syms, char **debug_path)
{
	*bias = 0;
	*syms = NULL;
	*debug_path = NULL;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && /* replaced in between? */
		  debuglink_files_safe(fd, path);
	Elf64_Ehdr eh;
	if (ok && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_type == ET_EXEC) {
		for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
			Elf64_Phdr ph;
			off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);
			if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
				break;
			if (ph.p_type == PT_LOAD) {
				*bias = ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	/* Its function symbols, to check addr2line's function names (format_answer). */
	if (ok && elfsyms_load(fd, syms) != 0)
		*syms = NULL;
	char dbg[PATH_MAX];
	if (ok && s->cfg.debug_dir && find_debug_file(s->cfg.debug_dir, fd, dbg, sizeof dbg, syms))
		*debug_path = strdup(dbg); /* NULL (no memory): the module itself, as before */
	close(fd);
	return ok;
}

static int grow_module_index(struct symbolizer *s)
{
	size_t cap = s->index_cap ? 2 * s->index_cap : 64;
	uint32_t *idx = calloc(cap, sizeof *idx);
	if (!idx)
		return -ENOMEM;
	for (size_t m = 0; m < s->nmodules; m++) {
		size_t b = hash_str(s->modules[m].path) & (cap - 1);
		while (idx[b])
			b = (b + 1) & (cap - 1);
		idx[b] = (uint32_t)m + 1;
	}
	free(s->module_index);
	s->module_index = idx;
	s->index_cap = cap;
	return 0;
}

/* The module named path, inspected when first seen. Its index, or -ENOMEM. */
static long module_get(struct symbolizer *s, const char *path)
{
	size_t b = 0;
	if (s->index_cap) {
		for (b = hash_str(path) & (s->index_cap - 1); s->module_index[b];
		     b = (b + 1) & (s->index_cap - 1))
			if (!strcmp(s->modules[s->module_index[b] - 1].path, path))
				return s->module_index[b] - 1;
	}
	if (s->nmodules == s->modules_cap) {
		size_t cap = s->modules_cap ? 2 * s->modules_cap : 16;
		struct module *more = realloc(s->modules, cap * sizeof *more);
		if (!more)
			return -ENOMEM;
		s->modules = more;
		s->modules_cap = cap;
	}
	struct module *m = &s->modules[s->nmodules];
	*m = (struct module){ .path = strdup(path), .slot = -1 };
	if (!m->path)
		return -ENOMEM;
	m->given_up = !inspect(s, path, &m->bias, &m->syms, &m->debug_path);
	s->nmodules++;
	if (2 * s->nmodules > s->index_cap) {
		if (grow_module_index(s) != 0) {
			free(m->path);
			free(m->debug_path);
			elfsyms_free(m->syms);
			s->nmodules--;
			return -ENOMEM;
		}
	} else {
		s->module_index[b] = (uint32_t)s->nmodules;
	}
	return (long)s->nmodules - 1;
}

/* The cache bucket of (module, offset): the entry, or the empty bucket it would go in. */
static struct answer *answer_bucket(struct symbolizer *s, uint32_t module, uint64_t offset)
{
	size_t b = hash_site(module, offset) & (s->answers_cap - 1);
	while (s->answers[b].module_1 &&
	       (s->answers[b].module_1 != module + 1 || s->answers[b].offset != offset))
		b = (b + 1) & (s->answers_cap - 1);
	return &s->answers[b];
}

/* Remember the answer (text NULL: no name); a full cache only costs speed, so -ENOMEM is
 * dropped. */
static void answer_put(struct symbolizer *s, uint32_t module, uint64_t offset, const char *text)
{
	if (2 * (s->nanswers + 1) > s->answers_cap) {
		size_t cap = s->answers_cap ? 2 * s->answers_cap : 1024;
		struct answer *old = s->answers, *fresh = calloc(cap, sizeof *fresh);
		if (!fresh)
			return;
		size_t old_cap = s->answers_cap;
		s->answers = fresh;
		s->answers_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].module_1)
				*answer_bucket(s, old[i].module_1 - 1, old[i].offset) = old[i];
		free(old);
	}
	char *copy = NULL;
	if (text && !(copy = strdup(text)))
		return;
	*answer_bucket(s, module, offset) = (struct answer){ module + 1, offset, copy };
	s->nanswers++;
}

/* A coprocess for module m: its own, a free slot or the least recently used one. Its slot, or
 * NULL when addr2line cannot be run (warned). */
static struct slot *slot_for(struct symbolizer *s, uint32_t m)
{
	struct module *mod = &s->modules[m];
	if (mod->slot >= 0)
		return &s->slots[mod->slot];
	struct slot *sl = NULL;
	for (unsigned i = 0; i < s->cfg.max_procs; i++) {
		struct slot *c = &s->slots[i];
		if (!c->live) {
			sl = c;
			break;
		}
		if (!sl || c->last_used < sl->last_used)
			sl = c;
	}
	if (sl->live)
		stop_slot(s, sl, 0, NULL);
	int rc = addr2line_start(&sl->proc, s->cfg.program,
				 mod->debug_path ? mod->debug_path : mod->path);
	if (rc) {
		warn_once(s, "cannot run %s (binutils): %s", s->cfg.program, strerror(-rc));
		s->no_program = true;
		return NULL;
	}
	sl->module = m;
	sl->live = true;
	mod->slot = (int)(sl - s->slots);
	s->stats.started++;
	if (++s->stats.live > s->stats.peak_live)
		s->stats.peak_live = s->stats.live;
	return sl;
}

/* addr2line's answer for module m at addr (its two lines), or -1. Gives the module up when
 * addr2line refuses it, dies on it too often or does not answer in time. */
static int ask(struct symbolizer *s, uint32_t m, uint64_t addr, char *fn, size_t fnsz, char *loc,
	       size_t locsz)
{
	struct slot *sl = slot_for(s, m);
	if (!sl)
		return -1;
	sl->last_used = ++s->tick;
	int rc = addr2line_ask(&sl->proc, addr, s->cfg.timeout_ms, fn, fnsz, loc, locsz);
	if (rc == 0)
		return 0;
	struct module *mod = &s->modules[m];
	bool answered_before = sl->proc.answers > 0;
	if (rc == -ETIMEDOUT) {
		stop_slot(s, sl, 0, NULL);
		warn_once(s, "%s gave no answer within %d ms on %s", s->cfg.program,
			  s->cfg.timeout_ms, mod->path);
		mod->given_up = true;
		/* Twice is addr2line's trouble, not one module's: a report waits for two timeouts at
		 * most, not one per module. */
		if (++s->timeouts >= MAX_TIMEOUTS)
			s->no_program = true;
		return -1;
	}
	/* It exited, or closed a pipe: exiting, which takes a millisecond; a process that stays is
	 * killed after a second. */
	int status = 0;
	bool exited = stop_slot(s, sl, 1000, &status) == 0;
	if (exited && !answered_before && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		/* The exec failed after all (posix_spawnp reports that itself with glibc >= 2.24,
		 * but not under valgrind): the shell's "command not found". */
		warn_once(s, "cannot run %s (binutils)", s->cfg.program);
		s->no_program = true;
		return -1;
	}
	if (exited && !answered_before && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		/* It refused the module (not an object file it knows): no name, as before. */
		mod->given_up = true;
		return -1;
	}
	if (exited && WIFSIGNALED(status))
		warn_once(s, "%s was killed by signal %d on %s", s->cfg.program, WTERMSIG(status),
			  mod->path);
	else
		warn_once(s, "%s stopped answering on %s", s->cfg.program, mod->path);
	if (++mod->deaths >= MAX_DEATHS)
		mod->given_up = true;
	return -1;
}

/* The name from addr2line's two lines for the file address addr of a module with the function
 * symbols syms: the file's base name and line without its discriminator, else the function and
 * the offset of addr in it ("fn+0x1a"), but only when addr lies inside it. addr2line -f names
 * the nearest symbol before the address however far away; in a stripped program (.dynsym
 * alone) that is an exported function that does not contain it (BAGEL, Debian:
 * std::ctype<char>::do_narrow, 3 bytes long, for an address 140 KB past it), so a function name
 * is taken only when syms has the symbol and addr is inside it. 0, or -1 when neither is
 * known. */
static int format_answer(char *fn, char *loc, const struct elfsyms *syms, uint64_t addr,
			 char *out, size_t size)
{
	char *disc = strstr(loc, " (discriminator");
	if (disc)
		*disc = '\0';
	if (loc[0] && strncmp(loc, "??", 2) != 0 && !strstr(loc, ":?") && !strstr(loc, ":0")) {
		const char *base = strrchr(loc, '/') ? strrchr(loc, '/') + 1 : loc;
		snprintf(out, size, "%s", base);
		return 0;
	}
	uint64_t start;
	if (fn[0] && strcmp(fn, "??") != 0 && elfsyms_contains(syms, addr, &start)) {
		/* With the call's offset in it, as perf and gdb write it: two sites of one function
		 * without line information stay two names. */
		snprintf(out, size, "%s+0x%llx", fn, (unsigned long long)(addr - start));
		return 0;
	}
	return -1;
}

/* Bytes of a name's end kept when it is cut ("...const+0x1a", "...long_file_name.c:1234"). */
#define KEPT_END 24

/* name into out: whole when it fits, else its start and its last KEPT_END bytes around "...":
 * the report's names are 255 bytes, C++ functions run longer, and their end (the offset in the
 * function) is what tells two sites apart. */
static void copy_name(char *out, size_t size, const char *name)
{
	size_t len = strlen(name);
	if (len < size || size <= KEPT_END + 4) {
		snprintf(out, size, "%s", name);
		return;
	}
	size_t head = size - 1 - 3 - KEPT_END, tail = len - KEPT_END;
	while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80)
		head--; /* neither cut inside a UTF-8 sequence */
	while (tail < len && ((unsigned char)name[tail] & 0xc0) == 0x80)
		tail++;
	memcpy(out, name, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, name + tail, len - tail + 1);
}

static int lookup(struct symbolizer *s, const char *module, uint64_t offset, char *out,
		  size_t size)
{
	s->stats.lookups++;
	long m = module_get(s, module);
	if (m < 0)
		return -1;
	if (s->answers_cap) {
		struct answer *a = answer_bucket(s, (uint32_t)m, offset);
		if (a->module_1) {
			s->stats.cached++;
			if (!a->text)
				return -1;
			copy_name(out, size, a->text);
			return 0;
		}
	}
	if (s->modules[m].given_up || s->no_program)
		return -1;
	char fn[512], loc[512], name[512 + 32]; /* fn and its offset */
	uint64_t addr = offset + s->modules[m].bias;
	int rc = ask(s, (uint32_t)m, addr, fn, sizeof fn, loc, sizeof loc);
	if (rc == 0)
		rc = format_answer(fn, loc, s->modules[m].syms, addr, name, sizeof name);
	answer_put(s, (uint32_t)m, offset, rc == 0 ? name : NULL);
	if (rc == 0)
		copy_name(out, size, name);
	return rc;
}

int symbolize_addr2line(void *ctx, const char *module, uint64_t offset, char *out, size_t size)
{
	if (!module || !*module || !out || !size)
		return -1;
	if (strncmp(module, "python:", 7) == 0) /* NT_LOG_PYTHON_PREFIX (ntlog.h): a Python */
		return -1; /* site's file and line (doc/python.md), nothing for addr2line */
	if (ctx)
		return lookup(ctx, module, offset, out, size);
	struct symbolizer *once;
	if (symbolizer_open(&once, &(struct symbolizer_config){ .max_procs = 1 }) != 0)
		return -1;
	int rc = lookup(once, module, offset, out, size);
	symbolizer_close(once);
	return rc;
}
