/* The job log (.ntlog): one file per MPI job, one checksummed block per rank. The format is
 * specified in doc/ntlog-format.md. Writers stream a rank block through a fixed chunk, so that
 * writing it needs no memory in proportion to it; readers validate every length and checksum
 * before trusting anything. */
#ifndef NOISETOOL_NTLOG_H
#define NOISETOOL_NTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version written; the reader reads 1 to it. Raised with each new field. */
#define NT_LOG_VERSION_WRITTEN 9
#ifndef NT_TEST_EXTRA_ENTRIES
#define NT_LOG_VERSION NT_LOG_VERSION_WRITTEN
#else /* tests/unit/test-one-list.cpp: one more entry in each list, and a version for it */
#define NT_LOG_VERSION (NT_LOG_VERSION_WRITTEN + 1)
#define NT_LOG_WINDOW_FIELDS_EXTRA(X)                                                          \
	X(TEST_DUMMY, test_dummy, COUNT, NONE, NT_LOG_VERSION, "test_dummy")
#define NT_CAUSES_EXTRA(X) X(TEST_DUMMY, "test_dummy", "dummy", "the test's dummy", "#000000")
#endif
#ifndef NT_LOG_WINDOW_FIELDS_EXTRA
#define NT_LOG_WINDOW_FIELDS_EXTRA(X)
#endif
#define NT_LOG_HEADER_BYTES 64
/* How blocking MPI calls waited in the job (NOISETOOL_WAIT, doc/environment.md), the header's
 * u32 at offset 28: its code, its name. 0 in every log before the field (it was reserved, 0),
 * which is right: the MPI's own waits were the only ones then. */
#define NT_LOG_WAIT_MODES(X) X(MPI, 0, "mpi") X(BUSY, 1, "busy") X(ADAPTIVE, 2, "adaptive") \
	X(SLEEP, 3, "sleep")
enum nt_log_wait_mode {
#define NT_LOG_WAIT_ENUM_(id, code, name) NT_LOG_WAIT_##id = code,
	NT_LOG_WAIT_MODES(NT_LOG_WAIT_ENUM_)
#undef NT_LOG_WAIT_ENUM_
	NT_LOG_WAIT_COUNT
};
#define NT_LOG_POLL_SAMPLE_MAX 1024 /* the header's u32 at offset 48 (version 6) */
#define NT_LOG_UNKNOWN UINT64_MAX /* a rank's CPU time that could not be read (version 6) */
#define NT_LOG_RANK_HEADER_BYTES 24 /* before each rank's payload */
#define NT_LOG_CHUNK_BYTES 65536  /* the wrapper library's chunk (nt_log_rank_stream) */
#define NT_LOG_HIST_BINS 48
#define NT_LOG_MAX_DEPTH 32
#define NT_LOG_FLAG_PARTIAL 1u    /* something was lost (struct nt_log_rank counts what) */
#define NT_LOG_FLAG_UNFINISHED 2u /* a rank's block rebuilt from its live file: it ended
				   * without MPI_Finalize (doc/ntlog-format.md, "Live files") */
#define NT_LOG_FLAG_MISSING 4u    /* a rank of which nothing is known: no live file */
#define NT_LOG_FLAG_ABORTED 8u    /* with UNFINISHED: the rank called MPI_Abort */
#define NT_LOG_FLAG_RUNNING 16u   /* with UNFINISHED: the rank's process still ran on this host
				   * when its live file was read (a snapshot of a job in progress) */
#define NT_LOG_FLAG_UNWRITTEN 32u /* a rank's block rebuilt from its live file: it reached
				   * MPI_Finalize, which could not write the log (log_errno) */

/* One stack frame: module path and offset inside it (ASLR-safe). */
struct nt_log_frame {
	const char *module;
	uint64_t offset;
};

/* A Python call site's module (doc/python.md): "python:FUNCTION:CALL:FILE", CALL the Python
 * call the MPI call comes from ("comm.allreduce", or empty: never a colon, '/' or '<'), FILE
 * absolute (or "<string>" and the like), and its offset is the line. Logs of builds before
 * call names have "python:FUNCTION:FILE". No module file starts so. */
#define NT_LOG_PYTHON_PREFIX "python:"

/* Whether module names a Python call site (either form): then its function (*function_len
 * bytes, up to the first colon) and its file point into module. NULL outputs are not filled. */
NT_API bool nt_log_python_site(const char *module, const char **function, size_t *function_len,
			       const char **file);

/* A Python call site's call name (*call_len bytes inside module, 0 when it has none or the log
 * predates call names); false when module names no Python call site. */
NT_API bool nt_log_python_call(const char *module, const char **call, size_t *call_len);

/* One call site of one rank. */
struct nt_log_site {
	const char *function;   /* "MPI_Allreduce" */
	const char *module;     /* path of the module holding the call instruction */
	uint64_t offset;        /* of the call instruction in it */
	uint64_t calls;
	uint64_t total_ns, min_ns, max_ns;
	uint64_t bytes;         /* sum over calls of count x datatype size */
	uint64_t hist[NT_LOG_HIST_BINS]; /* log2 bins of call duration in counter cycles
					  * (bin b: [2^b, 2^(b+1)); clock_hz converts) */
	uint32_t depth;
	struct nt_log_frame frames[NT_LOG_MAX_DEPTH]; /* the stack when first seen */
};

#define NT_LOG_REC_SLOW 1u       /* more than 3x its call site's mean time in the call */
#define NT_LOG_REC_SAMPLE 2u     /* a sample: the call at which its site's thresholds refresh */
#define NT_LOG_REC_LONG_PHASE 4u /* the span before it over 1.5x its site's mean span, 2 us
				  * more (doc/attribution.md, "The recording policy") */
#define NT_LOG_REC_WINDOW 8u     /* win holds the probe window that ended with this call */
#define NT_LOG_REC_INTERVAL 16u  /* interval_ns and p2p_ns are known */
#define NT_LOG_REC_ABSOLUTE 32u  /* kept by the absolute floor alone: a call or span >= 1 ms
				  * (higher past 1024 calls of its site) */

/* What the OS did to the rank's thread in a probe window (a span of one or more phases that
 * ended with the record's call): the one list of a window's fields that every place holding
 * them is made from -- the log's struct and its encoding and decoding, the wrappers' window,
 * the live files' fields and their reader, the timeline's arguments.
 *   X(ID, name, kind, source, since, key)
 * ID: the live files' field (NT_LRF_WIN_ID); name and kind: the member, by its unit -- NS
 * (name_ns), CYC (the wrappers keep name_cyc in counter cycles, the log name_ns) or COUNT
 * (name); source: where the wrappers take it -- PROBE (the probe's delta field of that name,
 * noisetool/probe.h), COUNTER (the cycle counter), PAPI (the instructions' event), INJECTOR
 * (what it spun); since: the log version that added it (the reader leaves it 0 in older logs);
 * key: its name in outputs. Adding a field: an entry here with since the next version, and
 * NT_LOG_VERSION_WRITTEN raised to it; (a new PROBE field) its read in noisetool/probe.h and
 * probe-os.c;
 * doc/hacking.md, "Add a window field". */
#define NT_LOG_WINDOW_FIELDS(X)                                                                 \
	X(WALL, wall, CYC, COUNTER, 1, "wall_ns")                                              \
	X(CPU_NS, cpu, NS, PROBE, 1, "cpu_ns")                                                 \
	X(RUN_DELAY_NS, run_delay, NS, PROBE, 1, "run_delay_ns")                               \
	X(VOL, vol_switches, COUNT, PROBE, 1, "voluntary_switches")                            \
	X(INVOL, invol_switches, COUNT, PROBE, 1, "involuntary_switches")                      \
	X(MINOR, minor_faults, COUNT, PROBE, 1, "minor_faults")                                \
	X(MAJOR, major_faults, COUNT, PROBE, 1, "major_faults")                                \
	/* 0 without hardware counters */                                                      \
	X(INSTRUCTIONS, instructions, COUNT, PAPI, 1, "instructions")                          \
	/* spun by the noise injector */                                                       \
	X(INJECTED, injected, CYC, INJECTOR, 1, "injected_ns")                                 \
	/* the kernel's time on the thread's behalf (getrusage's ru_stime): what page faults  \
	 * cost (attrib.c) */                                                                  \
	X(SYS_NS, sys, NS, PROBE, 5, "sys_ns")                                                 \
	NT_LOG_WINDOW_FIELDS_EXTRA(X)

/* A window field's member in the log (NT_LOG_WINDOW_NAME) and in the wrappers (_RAW), by
 * kind. */
#define NT_LOG_WINDOW_NAME(kind, name) NT_LOG_WINDOW_NAME_##kind(name)
#define NT_LOG_WINDOW_NAME_NS(name) name##_ns
#define NT_LOG_WINDOW_NAME_CYC(name) name##_ns
#define NT_LOG_WINDOW_NAME_COUNT(name) name
#define NT_LOG_WINDOW_RAW(kind, name) NT_LOG_WINDOW_RAW_##kind(name)
#define NT_LOG_WINDOW_RAW_NS(name) name##_ns
#define NT_LOG_WINDOW_RAW_CYC(name) name##_cyc
#define NT_LOG_WINDOW_RAW_COUNT(name) name

/* valid: NT_SRC_* bits of the sources behind the values. */
#define NT_LOG_WINDOW_MEMBER_(id, name, kind, source, since, key)                               \
	uint64_t NT_LOG_WINDOW_NAME(kind, name);
struct nt_log_window {
	NT_LOG_WINDOW_FIELDS(NT_LOG_WINDOW_MEMBER_)
	uint32_t valid;
};
#undef NT_LOG_WINDOW_MEMBER_

/* One collective instance that mattered, as this rank saw it. */
struct nt_log_record {
	uint64_t comm_id;      /* agrees across the communicator's members */
	uint64_t seq;          /* instance number on that communicator */
	uint32_t site;         /* index into the rank's sites */
	uint32_t flags;        /* NT_LOG_REC_* */
	uint64_t start_ns;     /* entry, ns since this rank's MPI_Init (local clock) */
	uint64_t duration_ns;  /* time in the call */
	uint64_t phase_ns;     /* compute phase before it */
	uint64_t interval_ns;  /* since the rank's previous blocking collective instance returned */
	uint64_t p2p_ns;       /* time in other MPI calls (point-to-point) within that interval */
	struct nt_log_window win; /* when flags has NT_LOG_REC_WINDOW */
};

/* Another task that ran on a rank's CPUs (version 7). */
#define NT_LOG_OTHERS_MAX 6 /* NT_MEANWHILE_TOP */
#define NT_LOG_TASK_COMM_BYTES 16

enum nt_log_task_kind {
	NT_LOG_TASK_PROCESS,    /* a process of the job's user */
	NT_LOG_TASK_KERNEL,     /* a kernel thread */
	NT_LOG_TASK_OTHER_USER, /* another user's process */
	NT_LOG_TASK_KIND_COUNT
};

struct nt_log_task {
	uint32_t pid;
	uint32_t kind;                      /* enum nt_log_task_kind */
	uint64_t run_ns;                    /* its CPU time on the rank's CPUs over the job */
	char comm[NT_LOG_TASK_COMM_BYTES];  /* its busiest thread's name: printable ASCII, NUL-ended */
};

/* The rank's other tasks' flags (version 7). */
#define NT_LOG_OTHERS_KNOWN 1u   /* read at MPI_Init and MPI_Finalize */
#define NT_LOG_OTHERS_PARTIAL 2u /* the node had more threads than the rank followed */
#define NT_LOG_IRQS_KNOWN 4u     /* the interrupts and softirqs on its CPUs were read */
/* The other tasks were read at MPI_Init but not at MPI_Finalize: reading them again would have
 * taken the rank's reads (probe windows and /proc at both ends) past 1 % of its wall time (a
 * short job). */
#define NT_LOG_OTHERS_SKIPPED 8u

/* An interrupt line or softirq kind counted on a rank's CPUs over the job (version 7). */
#define NT_LOG_IRQS_MAX 6
#define NT_LOG_IRQ_NAME_BYTES 16
#define NT_LOG_IRQ_DESC_BYTES 32

enum nt_log_irq_kind { NT_LOG_IRQ_INTERRUPT, NT_LOG_IRQ_SOFTIRQ, NT_LOG_IRQ_KIND_COUNT };

struct nt_log_irq {
	uint32_t kind;                      /* enum nt_log_irq_kind */
	char name[NT_LOG_IRQ_NAME_BYTES];   /* "LOC", "36", "NET_RX": printable ASCII, NUL-ended */
	char desc[NT_LOG_IRQ_DESC_BYTES];   /* "Local timer interrupts", a device, "" */
	uint64_t count;                     /* over the rank's CPUs, over the tasks' span */
};

/* One rank's block. */
struct nt_log_rank {
	uint32_t rank;
	uint32_t flags;         /* NT_LOG_FLAG_* */
	const char *host;
	uint64_t wall_ns;       /* MPI_Init to MPI_Finalize */
	uint64_t mpi_ns;        /* sum of its call sites */
	uint64_t dropped;       /* calls not kept because the site table was full */
	int64_t init_global_ns; /* this rank's MPI_Init on the job's global time base (rank 0's
				 * clock, origin at rank 0's MPI_Init) */
	int64_t drift_ppb;      /* global time runs 1 + drift_ppb/1e9 times as fast as local */
	uint64_t clock_error_ns;      /* bound on the error of the rank's global times */
	uint64_t clock_test_error_ns; /* with NOISETOOL_TEST_CLOCK: the largest error seen */
	uint64_t injected_ns, injected_count; /* what the injector spun on this rank */
	uint64_t probe_reads, probe_cost_ns;  /* probe windows closed, and their mean cost */
	/* What the rank lost besides dropped and dropped_records (version 3; 0 when read from
	 * an older log, which did not count them): */
	uint64_t untimed_instances;      /* nonblocking or persistent collective instances not
					  * timed: the outstanding-request table was full */
	uint64_t unregistered_persistent; /* persistent collectives whose starts were never timed:
					   * the persistent-request table was full */
	uint64_t unknown_comm_records;   /* records not kept: their communicator had no id */
	uint32_t nsites;
	struct nt_log_site *sites;
	uint64_t dropped_records; /* records not kept because the arena was full */
	uint64_t nrecords;
	struct nt_log_record *records;
	/* The job as the rank saw it at MPI_Init (version 4; "" when read from an older log or a
	 * live file of a build before them, NULL written as ""): doc/ntlog-format.md, "The job". */
	const char *command;      /* its command line, shell-quoted, bounded */
	const char *mpi_library;  /* the first line of the MPI library's version */
	const char *tool_version; /* the noisetool that measured it */
	/* The rank's CPUs from MPI_Init to MPI_Finalize (version 6; "" and 0 when read from an
	 * older log or a live file): doc/ntlog-format.md, "The rank's CPUs". cpus is "" when the
	 * affinity could not be read, a time NT_LOG_UNKNOWN when it could not. */
	const char *cpus;        /* its thread's affinity at MPI_Init, a CPU list ("0", "0-3,8") */
	uint64_t cpu_ns;         /* its process's CPU time, user and system */
	uint64_t run_delay_ns;   /* its thread's time runnable, waiting for a CPU */
	uint64_t cpus_busy_ns;   /* the time its CPUs ran any task, summed over them (/proc/stat:
				  * user, nice, system, irq, softirq; 10 ms ticks) */
	uint64_t cpus_steal_ns;  /* the time the hypervisor took from its CPUs, summed likewise */
	/* The rank's process and what else ran on its CPUs over the tasks' span (version 7; 0 when
	 * read from an older log or a live file): doc/ntlog-format.md, "Other tasks on the rank's
	 * CPUs". */
	uint32_t pid;
	uint32_t others_flags;   /* NT_LOG_OTHERS_* */
	uint64_t others_ns;      /* every other process's CPU time there (the job's other ranks too) */
	uint32_t others_count;   /* those processes */
	uint32_t nothers;        /* the busiest, at most NT_LOG_OTHERS_MAX, most time first */
	struct nt_log_task others[NT_LOG_OTHERS_MAX];
	/* With NT_LOG_IRQS_KNOWN: every interrupt and softirq counted on its CPUs, and the lines
	 * and kinds with most counts, most first. */
	uint64_t irq_count, softirq_count;
	uint32_t nirqs;
	struct nt_log_irq irqs[NT_LOG_IRQS_MAX];
	uint64_t scan_ns; /* what reading them from /proc cost the rank, both ends (version 7) */
	/* The span the other tasks and interrupts cover (version 9; before it they were read at
	 * MPI_Init: 0, and the rank's run_delay_ns): from others_from_ns after MPI_Init to
	 * MPI_Finalize, and the rank's run delay in it (NT_LOG_UNKNOWN when not read). */
	uint64_t others_from_ns;
	uint64_t others_run_delay_ns;
	/* Who ran the job and the batch job it ran in, as the rank saw them at MPI_Init (version
	 * 8; "" when read from an older log, or not known): doc/ntlog-format.md, "The job". */
	const char *user;         /* the rank's user: a name, or "uid 1000" */
	const char *batch_system; /* "slurm", "pbs", "lsf", "flux"; "" outside a batch job */
	const char *batch_job;    /* its job id ("1234.0": Slurm's job and step) */
	const char *batch_nodes;  /* the job's node list as the batch system gives it */
	/* With NT_LOG_FLAG_UNWRITTEN: why MPI_Finalize could not write the log (an errno; 0 when
	 * not known). Never in a log file. */
	uint32_t log_errno;
};

/* A whole log as read. */
struct nt_log {
	uint32_t version;
	uint32_t nranks;
	uint32_t flags;         /* OR of the header flag and every rank's flags */
	uint32_t level;         /* 0 timing, 1 os, 2 full */
	uint32_t wait_mode;     /* enum nt_log_wait_mode */
	uint32_t poll_sample;   /* test calls timed one in this many (NOISETOOL_POLL_SAMPLE);
				 * 0: not recorded (before version 6) */
	double clock_hz;
	uint64_t created_unix_ns;
	struct nt_log_rank *ranks;
	void *storage_;         /* private: the block of the strings (freed by nt_log_free) */
};

/* The 64-byte file header for a job of nranks whose blocking calls waited in wait_mode (enum
 * nt_log_wait_mode) and whose test calls were timed one in poll_sample (1 to
 * NT_LOG_POLL_SAMPLE_MAX). */
NT_API void nt_log_header(unsigned char out[NT_LOG_HEADER_BYTES], uint32_t nranks, uint32_t flags,
			  uint32_t level, uint32_t wait_mode, uint32_t poll_sample, double clock_hz,
			  uint64_t created_unix_ns);

/* Site i of the rank being encoded, filled into *site (zeroed before the call); its strings
 * must stay valid until the next call. The encoder asks for 0 ... nsites - 1 in order, once per
 * pass. Returns 0, or -errno to stop the encoding with that error. */
typedef int (*nt_log_site_fn)(void *ctx, uint32_t i, struct nt_log_site *site);

/* Record i of the rank being encoded, filled into *record (zeroed before the call). The encoder
 * asks for 0 ... nrecords - 1 in order, once per pass. Returns 0, or -errno to stop the encoding
 * with that error. */
typedef int (*nt_log_record_fn)(void *ctx, uint64_t i, struct nt_log_record *record);

/* The next len bytes of a rank block. Returns 0, or -errno to stop the encoding with it. */
typedef int (*nt_log_sink_fn)(void *ctx, const unsigned char *bytes, size_t len);

/* A rank block to encode: rank's fields, its sites from site() when it is set (then
 * rank->sites is not read), else from rank->sites, and its records likewise from record() or
 * rank->records. With both functions a block is made as it is written, from tables in any
 * form, without a copy of them. */
struct nt_log_source {
	const struct nt_log_rank *rank;
	nt_log_site_fn site;
	void *site_ctx;
	nt_log_record_fn record;
	void *record_ctx;
};

/* What the first pass learns of a rank block. */
struct nt_log_block {
	uint64_t bytes;       /* the whole block: its header and payload */
	uint32_t payload_crc; /* the CRC-32 its header carries */
};

/* The first pass over a rank block: its size and checksum, from bytes that are not kept (a
 * few KiB of stack). Returns 0, -EINVAL (no rank, sites or records missing), or the site or
 * record function's error. */
NT_API int nt_log_rank_measure(const struct nt_log_source *src, struct nt_log_block *block);

/* The second pass: the block measured as *block, encoded into chunk (chunk_bytes >= 1) and
 * handed to sink one full chunk at a time, the last one possibly short. Memory: chunk alone,
 * whatever the block's size. Never hands more than block->bytes bytes to sink. Returns 0,
 * -EINVAL (bad arguments), the site or record function's or the sink's error, or -EIO when
 * the source gave other bytes than at the first pass (it changed in between). */
NT_API int nt_log_rank_stream(const struct nt_log_source *src, const struct nt_log_block *block,
			      unsigned char *chunk, size_t chunk_bytes, nt_log_sink_fn sink,
			      void *sink_ctx);

/* One rank block (sites from r->sites) in a malloc'd buffer (*out, *len), for tests and
 * tools: the two passes above with a chunk as large as the block. Returns 0, -EINVAL,
 * -ENOMEM. */
NT_API int nt_log_rank_encode(const struct nt_log_rank *r, unsigned char **out, size_t *len);

/* Read and validate a whole log of version 1 to 4 from memory (buf stays owned by the
 * caller; the log keeps copies of what it needs). Fields an older version lacks read as 0
 * (doc/ntlog-format.md, "Older versions"). On error, err says what is wrong and where.
 * Returns 0, -EINVAL (not a log, corrupt, truncated: err tells which), -ENOTSUP (another
 * version), -ENOMEM (an allocation failed). */
NT_API int nt_log_decode(const unsigned char *buf, size_t len, struct nt_log *log, char *err,
			 size_t errsz);

/* Read a log file (or a per-rank log: PATH holding the header alone, its blocks in
 * PATH.part0 ...), decoding it while it is read through a 1 MiB window: memory is the decoded
 * log, never the file (doc/ntlog-format.md, "Memory"). The same checks and messages as
 * nt_log_decode, plus -errno of opening or reading it (-EISDIR a directory, -ENODEV not a
 * regular file: FIFOs and devices are opened without blocking and never read), and -ENOMEM
 * when the decoded log and its report would need more memory than this process can take
 * (the memory available, its cgroup's and its ulimits' headroom): err names the limit and how
 * to raise it, so that a log too large is refused rather than the process killed. */
NT_API int nt_log_read_file(const char *path, struct nt_log *log, char *err, size_t errsz);

/* Free what nt_log_decode or nt_log_read_file allocated and zero *log (the struct itself is
 * the caller's). NULL is accepted. */
NT_API void nt_log_free(struct nt_log *log);

/* CRC-32 (IEEE 802.3, as zlib's crc32). */
NT_API uint32_t nt_crc32(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_NTLOG_H */
