/* This rank's live file: the header that lets `noisetool report` read the arena behind it
 * without the library (noisetool-private/live-file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <noisetool/clock.h>

#include "live.h"
#include "modules.h"
#include NT_WRAPPER_IDS_FILE /* wrapper-ids-MPI.h, generated for this MPI (meson.build) */

_Static_assert(NT_FN_COUNT <= NT_LIVE_FNS, "the live header must name every wrapped function");
_Static_assert(sizeof(struct nt_live_header) <= NT_LIVE_HEADER_BYTES, "the header fits its place");

static struct nt_live_header *hdr; /* NULL: no live file */
static size_t mapped;              /* the header and the arena */
static char path[4096 + 64];

void *nt_live_create(const char *name, int rank, int size, size_t arena_bytes, char *path_out,
		     size_t path_size)
{
	snprintf(path, sizeof path, "%s.live/rank-%d", name, rank);
	snprintf(path_out, path_size, "%s", path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	size_t total = NT_LIVE_HEADER_BYTES + arena_bytes;
	/* The blocks are allocated now (unwritten extents: ~0.1 ms for 16 MiB on ext4): a page
	 * of a sparse file that finds the disk full when first written kills the process with
	 * SIGBUS. Where that cannot be done (a file system without fallocate), no live file. */
	void *p = MAP_FAILED;
	if (fallocate(fd, 0, 0, (off_t)total) == 0)
		p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		unlink(path);
		errno = e;
		return NULL;
	}
	/* No readahead: a read of a page not written yet (a hash probe of the site table) would
	 * bring the next 128 KiB into the page cache, and the kernel maps up to 16 cached pages
	 * around a read fault: 0.6 MiB more resident than the tables used, at 10 sites. */
	madvise(p, total, MADV_RANDOM);
	hdr = p;
	mapped = total;
	memcpy(hdr->magic, NT_LIVE_MAGIC, sizeof hdr->magic);
	hdr->version = NT_LIVE_VERSION;
	hdr->header_bytes = NT_LIVE_HEADER_BYTES;
	hdr->rank = (uint32_t)rank;
	hdr->size = (uint32_t)size;
	hdr->pid = (uint64_t)getpid();
	gethostname(hdr->host, sizeof hdr->host - 1);
	hdr->clock_hz = nt_clock_hz();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	hdr->created_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	hdr->nfns = NT_FN_COUNT;
	for (unsigned i = 0; i < NT_FN_COUNT; i++)
		snprintf(hdr->fn_names[i], NT_LIVE_FN_NAME, "%s", nt_fn_name[i]);
	return (char *)p + NT_LIVE_HEADER_BYTES;
}

void nt_live_describe(const struct nt_live_part *sites, const struct nt_live_part *records,
		      unsigned level, unsigned wait_mode, unsigned poll_sample)
{
	if (!hdr)
		return;
	hdr->sites_offset = NT_LIVE_HEADER_BYTES + sites->at;
	hdr->site_slots = sites->slots;
	hdr->site_bytes = sites->bytes;
	memcpy(hdr->site_fields, sites->fields, sizeof hdr->site_fields);
	hdr->records_offset = NT_LIVE_HEADER_BYTES + records->at;
	hdr->record_slots = records->slots;
	hdr->record_bytes = records->bytes;
	memcpy(hdr->record_fields, records->fields, sizeof hdr->record_fields);
	hdr->level = level;
	hdr->wait_mode = wait_mode;
	hdr->poll_sample = poll_sample;
}

void nt_live_python_names(const void *mem, size_t bytes, struct nt_live_field name,
			  struct nt_live_field line)
{
	const char *base = (const char *)hdr, *at = mem;
	if (!hdr || !mem || at < base || bytes > mapped || (size_t)(at - base) > mapped - bytes)
		return;
	hdr->py_name_field = name;
	hdr->py_line_field = line;
	hdr->py_names_offset = (uint64_t)(at - base);
	hdr->py_names_bytes = bytes;
}

void nt_live_job(const char *command, const char *mpi_library, const char *tool_version,
		 const struct nt_jobinfo_batch *batch)
{
	if (!hdr)
		return;
	hdr->batch = *batch;
	snprintf(hdr->command, sizeof hdr->command, "%s", command);
	snprintf(hdr->mpi_library, sizeof hdr->mpi_library, "%s", mpi_library);
	snprintf(hdr->tool_version, sizeof hdr->tool_version, "%s", tool_version);
}

void nt_live_clock(uint64_t init_cyc, int64_t init_global_ns, uint64_t clock_error_ns)
{
	if (!hdr)
		return;
	hdr->init_cyc = init_cyc;
	hdr->init_global_ns = init_global_ns;
	hdr->clock_error_ns = clock_error_ns;
	hdr->last_cyc = init_cyc;
	/* Last: a reader takes a file in this state as one it can read. */
	__atomic_store_n(&hdr->state, NT_LIVE_RUNNING, __ATOMIC_RELEASE);
}

/* The module addr is in, named in the header (single writer: the sites' insert lock). */
static void note_module(uintptr_t addr)
{
	uint32_t n = hdr->nmodules;
	for (uint32_t i = 0; i < n; i++)
		if (addr >= hdr->modules[i].lo && addr < hdr->modules[i].hi)
			return;
	struct nt_module m;
	if (n >= NT_LIVE_MODULES || nt_module_of(addr, &m) != 0)
		return; /* the reader names such an address by its offset alone */
	struct nt_live_module *e = &hdr->modules[n];
	e->lo = m.lo;
	e->base = m.base;
	snprintf(e->path, sizeof e->path, "%s", m.path);
	__atomic_store_n(&e->hi, (uint64_t)m.hi, __ATOMIC_RELEASE);
	__atomic_store_n(&hdr->nmodules, n + 1, __ATOMIC_RELEASE);
}

void nt_live_site(uintptr_t ret, const uintptr_t *stack, int depth)
{
	if (!hdr)
		return;
	note_module(ret);
	for (int k = 0; k < depth; k++)
		note_module(stack[k]);
}

void nt_live_lost(enum nt_loss kind, uint64_t n)
{
	if (hdr && (unsigned)kind < NT_LOSS_COUNT)
		__atomic_fetch_add(&hdr->lost[kind], n, __ATOMIC_RELAXED);
}

void nt_live_beat(uint64_t cyc)
{
	if (hdr)
		__atomic_store_n(&hdr->last_cyc, cyc, __ATOMIC_RELAXED);
}

void nt_live_abort(int code)
{
	if (!hdr)
		return;
	hdr->abort_code = code;
	__atomic_store_n(&hdr->aborted, 1, __ATOMIC_RELEASE);
}

void nt_live_finalizing(void)
{
	if (!hdr)
		return;
	/* The log is written from the arena, which stays as it is: a rank that dies now leaves a
	 * file as readable as before. */
	__atomic_store_n(&hdr->state, NT_LIVE_WRITING, __ATOMIC_RELEASE);
}

void nt_live_log_failed(int error)
{
	if (!hdr)
		return;
	hdr->log_error = error;
	__atomic_store_n(&hdr->state, NT_LIVE_LOG_FAILED, __ATOMIC_RELEASE);
}

void nt_live_close(int remove)
{
	if (!hdr)
		return;
	munmap(hdr, mapped);
	hdr = NULL;
	if (remove)
		unlink(path);
}
