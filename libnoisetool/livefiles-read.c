/* Reading the live files of a job that wrote no log (noisetool-private/live-file.h): each rank's header and
 * arena, every field found through the header's descriptors and checked against the file's
 * size, into the same struct nt_log a log gives. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool-private/live-file.h>

_Static_assert(sizeof(struct nt_live_header) <= NT_LIVE_HEADER_BYTES,
	       "the live header must fit in its place");

/* A rank's file, mapped read-only. */
struct rank_file {
	const unsigned char *bytes;
	size_t len;
	const struct nt_live_header *h;
	char path[4096 + 64];
};

static void say(char *err, size_t errsz, const char *fmt, ...)
{
	if (!err || !errsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

/* The field f of the structure at p, as an unsigned integer of its size (1, 2, 4 or 8). */
static uint64_t get(const unsigned char *p, struct nt_live_field f)
{
	switch (f.size) {
	case 1:
		return p[f.offset];
	case 2: {
		uint16_t v;
		memcpy(&v, p + f.offset, 2);
		return v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p + f.offset, 4);
		return v;
	}
	case 8: {
		uint64_t v;
		memcpy(&v, p + f.offset, 8);
		return v;
	}
	default:
		return 0;
	}
}

/* Whether every descriptor fits a structure of bytes, each scalar being size (0: any of 1, 2,
 * 4, 8) and arrays (whose index is in arrays[]) a multiple of 8. */
static bool fields_fit(const struct nt_live_field *f, int n, uint64_t bytes, const int *arrays,
		       int narrays)
{
	for (int i = 0; i < n; i++) {
		bool array = false;
		for (int a = 0; a < narrays; a++)
			array |= arrays[a] == i;
		if ((uint64_t)f[i].offset + f[i].size > bytes || f[i].size == 0)
			return false;
		if (array ? f[i].size % 8 != 0
			  : !(f[i].size == 1 || f[i].size == 2 || f[i].size == 4 || f[i].size == 8))
			return false;
	}
	return true;
}

/* A part of the file: count slots of bytes each at offset, all inside it. */
static bool part_fits(const struct rank_file *r, uint64_t offset, uint64_t count, uint64_t bytes)
{
	return bytes > 0 && offset <= r->len && count <= (r->len - offset) / bytes;
}

/* Map and check one rank's file. 0, or -EINVAL with err saying what is wrong. */
static int open_rank(struct rank_file *r, char *err, size_t errsz)
{
	int fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		say(err, errsz, "%s: %s", r->path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < NT_LIVE_HEADER_BYTES) {
		close(fd);
		say(err, errsz, "%s: not a live file (too short, or not a regular file)", r->path);
		return -EINVAL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		int e = errno;
		say(err, errsz, "%s: %s", r->path, strerror(e));
		return -e;
	}
	r->bytes = p;
	r->len = (size_t)st.st_size;
	r->h = p;
	const struct nt_live_header *h = r->h;
	const char *why = NULL;
	static const int site_arrays[] = { NT_LSF_HIST, NT_LSF_STACK };
	if (memcmp(h->magic, NT_LIVE_MAGIC, sizeof h->magic) != 0)
		why = "no live-file magic";
	else if (h->version != NT_LIVE_VERSION)
		why = "a live-file version this noisetool does not read";
	else if (h->header_bytes != NT_LIVE_HEADER_BYTES)
		why = "a header of another size";
	else if (h->size == 0 || h->rank >= h->size)
		why = "a rank outside its job";
	else if (!(h->clock_hz > 1e6 && h->clock_hz < 1e12))
		why = "no counter frequency";
	else if (h->nfns > NT_LIVE_FNS || h->nmodules > NT_LIVE_MODULES)
		why = "more functions or modules than a header holds";
	else if (!part_fits(r, h->sites_offset, h->site_slots, h->site_bytes) ||
		 !part_fits(r, h->records_offset, h->record_slots, h->record_bytes))
		why = "tables past the end of the file";
	else if (!fields_fit(h->site_fields, NT_LSF_COUNT, h->site_bytes, site_arrays, 2) ||
		 !fields_fit(h->record_fields, NT_LRF_COUNT, h->record_bytes, NULL, 0) ||
		 h->site_fields[NT_LSF_HIST].size != NT_LOG_HIST_BINS * 8)
		why = "field descriptors outside their structures";
	else if (h->py_names_bytes &&
		 (!part_fits(r, h->py_names_offset, 1, h->py_names_bytes) ||
		  !fields_fit(&h->py_name_field, 1, h->site_bytes, NULL, 0) ||
		  !fields_fit(&h->py_line_field, 1, h->site_bytes, NULL, 0)))
		why = "Python names outside the file or their structures";
	if (why) {
		say(err, errsz, "%s: not a readable live file: %s", r->path, why);
		return -EINVAL;
	}
	return 0;
}

/* Strings of the log, kept once each in one block (log->storage_): while it grows they are
 * named by their offset in it, made pointers at the end. */
struct pool {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the reading fails */
	size_t job_at[7]; /* the previous rank's command, MPI and tool version, user and batch
			   * job's system, id and nodes: offset + 1 */
};

/* The offset of s (at most max bytes) in the pool, added when it is not there yet; 0 with
 * p->failed set when out of memory. Small jobs' strings are few (hosts, modules, function names): a linear
 * search over the distinct ones is enough. */
static size_t intern(struct pool *p, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	for (size_t at = 0; at < p->len;) {
		size_t m = strlen(p->buf + at);
		if (m == n && memcmp(p->buf + at, s, n) == 0)
			return at;
		at += m + 1;
	}
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		while (cap < p->len + n + 1)
			cap *= 2;
		char *b = realloc(p->buf, cap);
		if (!b) {
			p->failed = true;
			return 0;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->buf[p->len + n] = '\0';
	size_t at = p->len;
	p->len += n + 1;
	return at;
}

/* intern(), trying first the string *last_at (offset + 1, 0: none) names: the ranks of a job
 * mostly share their command line, which then costs one comparison per rank whatever the pool
 * holds. */
static size_t intern_again(struct pool *p, size_t *last_at, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	const char *last = *last_at ? p->buf + *last_at - 1 : NULL;
	if (last && strlen(last) == n && memcmp(last, s, n) == 0)
		return *last_at - 1;
	size_t at = intern(p, s, max);
	*last_at = p->failed ? 0 : at + 1;
	return at;
}

#define AS_OFFSET(o) ((const char *)(uintptr_t)(o))

/* An address of the rank as its module's path (an offset in the pool) and offset. */
static size_t locate(struct pool *p, const struct nt_live_header *h, uint64_t addr,
		     uint64_t *offset)
{
	for (uint32_t i = 0; i < h->nmodules; i++) {
		const struct nt_live_module *m = &h->modules[i];
		if (m->hi != 0 && addr >= m->lo && addr < m->hi) {
			*offset = addr - m->base;
			return intern(p, m->path, sizeof m->path);
		}
	}
	*offset = addr;
	return intern(p, "", 1);
}

static uint64_t cyc_ns(double hz, uint64_t cyc)
{
	double ns = (double)cyc / hz * 1e9;
	return ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX;
}

/* A Python site's name in the pool (an offset in the log's pool), or SIZE_MAX for a C site:
 * "python:FUNCTION:CALL:FILE" (or, from earlier builds, "python:FUNCTION:FILE"), NUL-terminated
 * inside the file's pool. */
static size_t python_name(struct pool *p, const struct rank_file *f, const unsigned char *s)
{
	const struct nt_live_header *h = f->h;
	if (!h->py_names_bytes)
		return SIZE_MAX;
	uint64_t at = get(s, h->py_name_field);
	if (at == 0 || at - 1 >= h->py_names_bytes)
		return SIZE_MAX;
	const char *name = (const char *)f->bytes + h->py_names_offset + at - 1;
	size_t room = (size_t)(h->py_names_bytes - (at - 1));
	if (strnlen(name, room) == room || strncmp(name, NT_LOG_PYTHON_PREFIX,
						   strlen(NT_LOG_PYTHON_PREFIX)) != 0)
		return SIZE_MAX;
	return intern(p, name, room);
}

/* A site's calls: those counted, and its untimed test calls not counted yet (in *pending when
 * not NULL), which the site's countdown went down as they were made (the wrappers' sites.h,
 * line 10): a killed rank's are all there. */
static uint64_t site_calls(const unsigned char *s, const struct nt_live_field *sf,
			   uint64_t *pending)
{
	uint64_t gap = get(s, sf[NT_LSF_POLL_GAP]), skip = get(s, sf[NT_LSF_POLL_SKIP]);
	uint64_t n = skip <= gap ? gap - skip : gap;
	if (pending)
		*pending = n;
	return get(s, sf[NT_LSF_CALLS]) + n;
}

/* One rank's block from its file. 0 or -ENOMEM. */
static int rebuild_rank(const struct rank_file *f, struct pool *p, struct nt_log_rank *out)
{
	const struct nt_live_header *h = f->h;
	double hz = h->clock_hz;
	out->rank = h->rank;
	/* A rank whose log could not be written finished MPI_Finalize: its file is final. */
	if (h->state == NT_LIVE_LOG_FAILED) {
		out->flags = NT_LOG_FLAG_PARTIAL | NT_LOG_FLAG_UNWRITTEN |
			     (h->aborted ? NT_LOG_FLAG_ABORTED : 0);
		out->log_errno = h->log_error > 0 ? (uint32_t)h->log_error : 0;
	} else {
		out->flags = NT_LOG_FLAG_PARTIAL | NT_LOG_FLAG_UNFINISHED |
			     (h->aborted ? NT_LOG_FLAG_ABORTED : 0) |
			     (nt_live_process_runs(h) ? NT_LOG_FLAG_RUNNING : 0);
	}
	out->host = AS_OFFSET(intern(p, h->host, sizeof h->host));
	out->command = AS_OFFSET(intern_again(p, &p->job_at[0], h->command, sizeof h->command));
	out->mpi_library = AS_OFFSET(intern_again(p, &p->job_at[1], h->mpi_library,
						  sizeof h->mpi_library));
	out->tool_version = AS_OFFSET(intern_again(p, &p->job_at[2], h->tool_version,
						   sizeof h->tool_version));
	out->user = AS_OFFSET(intern_again(p, &p->job_at[3], h->batch.user, sizeof h->batch.user));
	out->batch_system = AS_OFFSET(intern_again(p, &p->job_at[4], h->batch.system,
						   sizeof h->batch.system));
	out->batch_job = AS_OFFSET(intern_again(p, &p->job_at[5], h->batch.job,
						sizeof h->batch.job));
	out->batch_nodes = AS_OFFSET(intern_again(p, &p->job_at[6], h->batch.nodes,
						  sizeof h->batch.nodes));
	out->cpus = AS_OFFSET(intern(p, "", 1)); /* measured at MPI_Finalize: not in a live file */
	uint64_t last = h->last_cyc > h->init_cyc ? h->last_cyc : h->init_cyc;
	out->init_global_ns = h->init_global_ns;
	out->clock_error_ns = h->clock_error_ns;
	out->dropped = h->lost[NT_LOSS_MERGED_CALLS];
	out->dropped_records = h->lost[NT_LOSS_RECORDS];
	out->untimed_instances = h->lost[NT_LOSS_UNTIMED];
	out->unregistered_persistent = h->lost[NT_LOSS_UNREGISTERED];
	out->unknown_comm_records = h->lost[NT_LOSS_UNKNOWN_COMM];

	/* Sites with calls; the log's index of each table position. */
	const struct nt_live_field *sf = h->site_fields;
	/* Blocks for the sites with calls alone: the slots' count, bounded by the file's size, is
	 * the table's capacity, and a log site is larger than a slot. */
	uint64_t used = 0;
	for (uint64_t i = 0; i < h->site_slots; i++) {
		const unsigned char *s = f->bytes + h->sites_offset + i * h->site_bytes;
		used += get(s, sf[NT_LSF_RET]) != 0 && site_calls(s, sf, NULL) != 0;
	}
	uint32_t *index = malloc((h->site_slots ? h->site_slots : 1) * sizeof *index);
	out->sites = calloc(used ? used : 1, sizeof *out->sites);
	if (!index || !out->sites) {
		free(index);
		return -ENOMEM;
	}
	uint32_t nsites = 0;
	for (uint64_t i = 0; i < h->site_slots; i++) {
		const unsigned char *s = f->bytes + h->sites_offset + i * h->site_bytes;
		index[i] = UINT32_MAX;
		uint64_t pending, ret = get(s, sf[NT_LSF_RET]), calls = site_calls(s, sf, &pending);
		/* A running rank's site that got its first call since the count waits for the
		 * next report. */
		if (ret == 0 || calls == 0 || nsites == used)
			continue;
		struct nt_log_site *o = &out->sites[nsites];
		uint64_t fn = get(s, sf[NT_LSF_FN]);
		size_t py;
		o->function = AS_OFFSET(intern(p, fn < h->nfns ? h->fn_names[fn] : "?",
					       NT_LIVE_FN_NAME));
		if (ret == 1) { /* the function's merged site */
			o->module = AS_OFFSET(intern(p, "[other call sites: the site table was full]",
						     64));
			o->offset = 0;
		} else if ((py = python_name(p, f, s)) != SIZE_MAX) {
			o->module = AS_OFFSET(py);
			o->offset = get(s, h->py_line_field);
		} else {
			o->module = AS_OFFSET(locate(p, h, ret - 1, &o->offset));
		}
		o->calls = calls;
		o->total_ns = cyc_ns(hz, get(s, sf[NT_LSF_TOTAL]) + pending * get(s, sf[NT_LSF_POLL_CYC]));
		uint64_t min = get(s, sf[NT_LSF_MIN]);
		o->min_ns = min == UINT64_MAX ? 0 : cyc_ns(hz, min);
		o->max_ns = cyc_ns(hz, get(s, sf[NT_LSF_MAX]));
		o->bytes = get(s, sf[NT_LSF_BYTES]);
		memcpy(o->hist, s + sf[NT_LSF_HIST].offset, sizeof o->hist);
		uint64_t depth = get(s, sf[NT_LSF_DEPTH]), room = sf[NT_LSF_STACK].size / 8;
		if (depth > room)
			depth = room;
		if (depth > NT_LOG_MAX_DEPTH)
			depth = NT_LOG_MAX_DEPTH;
		o->depth = (uint32_t)depth;
		for (uint32_t k = 0; k < o->depth; k++) {
			uint64_t a;
			memcpy(&a, s + sf[NT_LSF_STACK].offset + 8 * k, 8);
			o->frames[k].module = AS_OFFSET(locate(p, h, a - (k ? 1 : 0), &o->frames[k].offset));
		}
		if (!get(s, sf[NT_LSF_NONBLOCKING]))
			out->mpi_ns += o->total_ns;
		index[i] = nsites++;
	}
	out->nsites = nsites;

	/* Records: readable while the rank runs, while MPI_Finalize writes the log from them, and
	 * when it could not; not in a file of a build before issue 38 that died inside
	 * MPI_Finalize (NT_LIVE_FINALIZING: they were being turned into their log form). */
	const struct nt_live_field *rf = h->record_fields;
	uint64_t kept = 0;
	if (h->state == NT_LIVE_RUNNING || h->state == NT_LIVE_WRITING ||
	    h->state == NT_LIVE_LOG_FAILED) {
		for (uint64_t i = 0; i < h->record_slots; i++)
			kept += get(f->bytes + h->records_offset + i * h->record_bytes, rf[NT_LRF_FLAGS]) != 0;
	}
	out->records = calloc(kept ? kept : 1, sizeof *out->records);
	if (!out->records) {
		free(index);
		return -ENOMEM;
	}
	uint64_t n = 0;
	for (uint64_t i = 0; i < h->record_slots && n < kept; i++) {
		const unsigned char *x = f->bytes + h->records_offset + i * h->record_bytes;
		uint32_t flags = (uint32_t)get(x, rf[NT_LRF_FLAGS]);
		uint64_t site = get(x, rf[NT_LRF_SITE]), t0 = get(x, rf[NT_LRF_T0]);
		if (!flags)
			continue;
		if (site >= h->site_slots || index[site] == UINT32_MAX || t0 < h->init_cyc) {
			out->dropped_records++; /* a record the rank was writing as it died */
			continue;
		}
		uint64_t d = get(x, rf[NT_LRF_DURATION]);
		if (t0 + d > last)
			last = t0 + d;
		out->records[n++] = (struct nt_log_record){
			.comm_id = get(x, rf[NT_LRF_COMM_ID]),
			.seq = get(x, rf[NT_LRF_SEQ]),
			.site = index[site],
			.flags = flags,
			.start_ns = cyc_ns(hz, t0 - h->init_cyc),
			.duration_ns = cyc_ns(hz, d),
			.phase_ns = cyc_ns(hz, get(x, rf[NT_LRF_PHASE])),
			.interval_ns = cyc_ns(hz, get(x, rf[NT_LRF_INTERVAL])),
			.p2p_ns = cyc_ns(hz, get(x, rf[NT_LRF_P2P])),
		};
		struct nt_log_window *w = &out->records[n - 1].win;
#define WIN_VALUE_NS(v) (v)
#define WIN_VALUE_CYC(v) cyc_ns(hz, v)
#define WIN_VALUE_COUNT(v) (v)
#define WINDOW_FIELD(id, name, kind, source, since, key)                                        \
		w->NT_LOG_WINDOW_NAME(kind, name) = WIN_VALUE_##kind(get(x, rf[NT_LRF_WIN_##id]));
		NT_LOG_WINDOW_FIELDS(WINDOW_FIELD)
#undef WINDOW_FIELD
#undef WIN_VALUE_NS
#undef WIN_VALUE_CYC
#undef WIN_VALUE_COUNT
		w->valid = (uint32_t)get(x, rf[NT_LRF_WIN_VALID]);
	}
	out->nrecords = n;
	out->wall_ns = cyc_ns(hz, last - h->init_cyc);
	free(index);
	return 0;
}

/* The pool's offsets in a block, made pointers into the final pool. */
static void fix_strings(struct nt_log *log, const char *base)
{
#define FIX(s) ((s) = base + (uintptr_t)(s))
	for (uint32_t i = 0; i < log->nranks; i++) {
		struct nt_log_rank *r = &log->ranks[i];
		FIX(r->host);
		FIX(r->command);
		FIX(r->mpi_library);
		FIX(r->tool_version);
		FIX(r->cpus);
		FIX(r->user);
		FIX(r->batch_system);
		FIX(r->batch_job);
		FIX(r->batch_nodes);
		for (uint32_t k = 0; k < r->nsites; k++) {
			FIX(r->sites[k].function);
			FIX(r->sites[k].module);
			for (uint32_t d = 0; d < r->sites[k].depth; d++)
				FIX(r->sites[k].frames[d].module);
		}
	}
#undef FIX
}

/* "rank-R" -> R, or -1. */
static long rank_of(const char *name)
{
	if (strncmp(name, "rank-", 5) != 0 || !name[5])
		return -1;
	char *end;
	long r = strtol(name + 5, &end, 10);
	return *end || r < 0 || r > INT32_MAX ? -1 : r;
}

/* The boot time, in seconds since the epoch (/proc/stat's btime), or 0. */
static long long boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	char line[256];
	long long btime = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	fclose(f);
	return btime;
}

bool nt_live_process_runs(const struct nt_live_header *h)
{
	char host[sizeof h->host + 1] = "";
	if (!h || h->pid == 0 || h->pid > INT32_MAX || gethostname(host, sizeof host - 1) != 0 ||
	    strncmp(h->host, host, sizeof h->host) != 0)
		return false;
	char path[64], stat[1024];
	snprintf(path, sizeof path, "/proc/%" PRIu64 "/stat", h->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, stat, sizeof stat - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = '\0';
	/* "PID (COMM) STATE f4 ... f22=starttime": COMM may hold anything, so from its last ')'. */
	const char *p = strrchr(stat, ')');
	char state = 0;
	unsigned long long start_ticks = 0;
	if (!p || sscanf(p + 1, " %c", &state) != 1 || state == 'Z' || state == 'X')
		return false;
	for (int field = 3; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	long hz = sysconf(_SC_CLK_TCK);
	long long btime = boot_time();
	if (p && sscanf(p + 1, "%llu", &start_ticks) == 1 && hz > 0 && btime > 0) {
		/* Started more than 2 s after the file was made: not the rank, a later process. */
		long long started = btime + (long long)(start_ticks / (unsigned long long)hz);
		if (h->created_unix_ns && started > (long long)(h->created_unix_ns / 1000000000u) + 2)
			return false;
	}
	return true;
}

int nt_live_read_job(const char *dir, struct nt_log *log, char *err, size_t errsz)
{
	memset(log, 0, sizeof *log);
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		say(err, errsz, "%s: %s", dir, strerror(e));
		return -e;
	}
	struct rank_file *files = NULL;
	size_t nfiles = 0, cap = 0;
	int rc = 0;
	for (struct dirent *de; rc == 0 && (de = readdir(d));) {
		if (rank_of(de->d_name) < 0)
			continue;
		if (nfiles == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct rank_file *nf = realloc(files, ncap * sizeof *nf);
			if (!nf) {
				rc = -ENOMEM;
				break;
			}
			files = nf;
			cap = ncap;
		}
		struct rank_file *f = &files[nfiles];
		memset(f, 0, sizeof *f);
		snprintf(f->path, sizeof f->path, "%s/%s", dir, de->d_name);
		rc = open_rank(f, err, errsz);
		if (rc == 0)
			nfiles++;
	}
	closedir(d);
	/* The job: its size from the files, which must agree; one file per rank. */
	uint32_t size = nfiles ? files[0].h->size : 0;
	for (size_t i = 0; rc == 0 && i < nfiles; i++) {
		if (files[i].h->size != size) {
			say(err, errsz, "%s: a job of %" PRIu32 " ranks, where %s has %" PRIu32,
			    files[i].path, files[i].h->size, files[0].path, size);
			rc = -EINVAL;
		}
	}
	if (rc == 0 && nfiles == 0) {
		say(err, errsz, "%s: no live file of any rank (rank-0, rank-1, ...)", dir);
		rc = -ENOENT;
	}
	/* The job's size against the directory's real contents, before a block is allocated for
	 * each of its ranks. */
	if (rc == 0 && (uint64_t)size > (uint64_t)nfiles * NT_LIVE_RANKS_PER_FILE) {
		say(err, errsz, "%s: not a readable live file: its header's job size (field size) is "
			"%" PRIu32 " ranks, but %s holds %zu rank file%s (at most %u ranks are "
			"believed for each)", files[0].path, size, dir, nfiles, nfiles == 1 ? "" : "s",
		    NT_LIVE_RANKS_PER_FILE);
		rc = -EINVAL;
	}
	const struct rank_file **by_rank = NULL;
	if (rc == 0) {
		by_rank = calloc(size, sizeof *by_rank);
		log->ranks = calloc(size, sizeof *log->ranks);
		if (!by_rank || !log->ranks) {
			say(err, errsz, "%s: out of memory for a job of %" PRIu32 " ranks", dir, size);
			rc = -ENOMEM;
		}
	}
	for (size_t i = 0; rc == 0 && i < nfiles; i++) {
		uint32_t r = files[i].h->rank;
		if (by_rank[r]) {
			say(err, errsz, "%s and %s: both rank %" PRIu32, by_rank[r]->path,
			    files[i].path, r);
			rc = -EINVAL;
		}
		by_rank[r] = &files[i];
	}
	struct pool pool = { 0 };
	if (rc == 0) {
		const struct nt_live_header *first = by_rank[0] ? by_rank[0]->h : files[0].h;
		log->version = NT_LOG_VERSION;
		log->nranks = size;
		log->level = first->level;
		log->wait_mode = first->wait_mode;
		if (log->wait_mode >= NT_LOG_WAIT_COUNT) {
			say(err, errsz, "%s: wait mode %" PRIu32 " is out of range (0 to %u)",
			    by_rank[0] ? by_rank[0]->path : files[0].path, log->wait_mode,
			    NT_LOG_WAIT_COUNT - 1);
			rc = -EINVAL;
		}
		log->poll_sample = first->poll_sample;
		if (rc == 0 && log->poll_sample > NT_LOG_POLL_SAMPLE_MAX) {
			say(err, errsz, "%s: test-call sampling 1 in %" PRIu32 " is out of range (0 "
			    "to %u)", by_rank[0] ? by_rank[0]->path : files[0].path, log->poll_sample,
			    NT_LOG_POLL_SAMPLE_MAX);
			rc = -EINVAL;
		}
		log->clock_hz = first->clock_hz;
		log->created_unix_ns = first->created_unix_ns;
		log->flags = NT_LOG_FLAG_PARTIAL;
		for (uint32_t r = 0; rc == 0 && r < size; r++) {
			struct nt_log_rank *o = &log->ranks[r];
			if (by_rank[r] && by_rank[r]->h->state != 0) {
				rc = rebuild_rank(by_rank[r], &pool, o);
			} else { /* no file, or one from a rank that died inside MPI_Init */
				o->rank = r;
				o->flags = NT_LOG_FLAG_PARTIAL | NT_LOG_FLAG_MISSING;
				o->host = AS_OFFSET(intern(&pool, "?", 2));
				o->command = o->mpi_library = o->tool_version = o->cpus =
					o->user = o->batch_system = o->batch_job =
						o->batch_nodes = AS_OFFSET(intern(&pool, "", 1));
			}
			log->flags |= o->flags;
		}
		if (rc == 0 && (pool.failed || pool.len == 0))
			rc = -ENOMEM;
		if (rc == -ENOMEM)
			say(err, errsz, "%s: out of memory reading the live files", dir);
	}
	free(by_rank);
	for (size_t i = 0; i < nfiles; i++)
		munmap((void *)files[i].bytes, files[i].len);
	free(files);
	if (rc != 0) {
		free(pool.buf);
		nt_log_free(log);
		return rc;
	}
	log->storage_ = pool.buf;
	fix_strings(log, pool.buf);
	return 0;
}
