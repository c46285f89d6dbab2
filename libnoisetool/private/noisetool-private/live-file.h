/* A rank's live file: the rank's fixed memory (NOISETOOL_MEM) mapped from a file while the job
 * runs, so that what it measured survives however it ends (SIGKILL, a time limit, MPI_Abort,
 * a crash). The wrapper library writes it (wrappers/live.c); `noisetool report` reads the live
 * files of a job that wrote no log (libnoisetool/livefiles-read.c; doc/ntlog-format.md, "Live
 * files").
 *
 * A job named NAME (OUT/PROG-YYYYmmdd-HHMMSS-ID) keeps NAME.live/, a directory holding rank-R,
 * one file per rank: this header, then the rank's arena. The header says where the call-site
 * table and the records are in the file and where each field the reader needs sits in a site
 * and in a record, so that the reader does not depend on the library's structures. A clean
 * MPI_Finalize writes NAME.ntlog and removes NAME.live. Private: the wrapper library's
 * contract with the core's reader and the noisetool command, not installed. */
#ifndef NOISETOOL_PRIVATE_LIVE_FILE_H
#define NOISETOOL_PRIVATE_LIVE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/loss.h>
#include <noisetool/ntlog.h>
#include <noisetool-private/jobinfo.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_LIVE_MAGIC "NTLIVE1"   /* 8 bytes with its NUL */
/* The header's version: its layout holds NT_LSF_COUNT site fields and NT_LRF_COUNT record
 * fields, so one more window field (noisetool/ntlog.h) or site field makes another version
 * (1: the first layout's 11 and 19; the sampled test calls' three site fields added 3000). */
#define NT_LIVE_VERSION (NT_LRF_COUNT - 18 + 1000 * (NT_LSF_COUNT - 11))
#define NT_LIVE_HEADER_BYTES 65536 /* the header's place in the file: the arena follows */
#define NT_LIVE_MODULES 192        /* modules the header can name */
#define NT_LIVE_FNS 256            /* wrapped functions the header can name */
#define NT_LIVE_FN_NAME 32         /* bytes of a function's name, with its NUL */
#define NT_LIVE_PATH 232           /* bytes of a module's path, with its NUL */
/* The most ranks a job's live directory may claim for each rank file it holds. Every rank
 * creates its own file at MPI_Init, so a claim past the files is believed only this far: a
 * rank without a file costs the reader 200 bytes (its struct nt_log_rank and a pointer) and
 * each file is at least 1 MiB (NOISETOOL_MEM), so the blocks of the missing (800 KiB a file)
 * stay smaller than the files read, and 10^7 ranks claimed
 * by one file (1.9 GB and 51 s of a report, measured) are refused at once. 4096 still reads a
 * job whose live files only one node's ranks could write (node-local NOISETOOL_OUT: 128 ranks
 * of a 524,288-rank job). */
#define NT_LIVE_RANKS_PER_FILE 4096u

enum nt_live_state {
	NT_LIVE_RUNNING = 1,    /* between MPI_Init and MPI_Finalize */
	NT_LIVE_FINALIZING = 2, /* builds before issue 38, inside MPI_Finalize: the records were
				 * being turned into their log form in place (unreadable) */
	NT_LIVE_WRITING = 3,    /* inside MPI_Finalize: the log is being written from the arena,
				 * which stays as it was (readable) */
	NT_LIVE_LOG_FAILED = 4, /* MPI_Finalize could not write the log (log_error says why): the
				 * file holds the rank's whole measurement */
};

/* The fields of a call site the reader uses. */
enum nt_live_site_field {
	NT_LSF_RET,         /* uintptr_t: return address (0: free slot, 1: the merged site) */
	NT_LSF_FN,          /* unsigned: index into the wrapped functions' names */
	NT_LSF_CALLS,       /* uint64_t */
	NT_LSF_TOTAL,       /* uint64_t: cycles */
	NT_LSF_MIN,         /* uint64_t: cycles (UINT64_MAX: none folded yet) */
	NT_LSF_MAX,         /* uint64_t: cycles */
	NT_LSF_BYTES,       /* uint64_t */
	NT_LSF_HIST,        /* uint64_t[NT_LOG_HIST_BINS]: log2 bins of cycles */
	NT_LSF_NONBLOCKING, /* int */
	NT_LSF_DEPTH,       /* int: frames in the stack */
	NT_LSF_STACK,       /* uintptr_t[]: the stack when first seen */
	/* Untimed test calls not in calls and total yet (the wrappers' sites.h, line 10):
	 * poll_gap - poll_skip of them while poll_skip <= poll_gap, else poll_gap, each of
	 * poll_cyc cycles. */
	NT_LSF_POLL_CYC,    /* uint64_t: cycles */
	NT_LSF_POLL_GAP,    /* uint32_t */
	NT_LSF_POLL_SKIP,   /* uint32_t */
	NT_LSF_COUNT,
};

/* The fields of a record the reader uses (a record with flags 0 was never completed). */
enum nt_live_record_field {
	NT_LRF_COMM_ID, NT_LRF_SEQ, NT_LRF_SITE, NT_LRF_FLAGS, NT_LRF_T0, NT_LRF_DURATION,
	NT_LRF_PHASE, NT_LRF_INTERVAL, NT_LRF_P2P,
	/* the window's fields (noisetool/ntlog.h), in the wrappers' units (CYC: counter cycles) */
#define NT_LRF_WIN_(id, name, kind, source, since, key) NT_LRF_WIN_##id,
	NT_LOG_WINDOW_FIELDS(NT_LRF_WIN_)
#undef NT_LRF_WIN_
	NT_LRF_WIN_VALID,
	NT_LRF_COUNT,
};

/* Where a field sits in its structure and how many bytes it takes. */
struct nt_live_field {
	uint16_t offset, size;
};

/* A module the sites' addresses point into: [lo, hi) in the rank's address space; an address
 * a in it is at a - base in the module's file, as dladdr's dli_fbase gives it. */
struct nt_live_module {
	uint64_t lo, hi, base;
	char path[NT_LIVE_PATH]; /* absolute */
};

struct nt_live_header {
	char magic[8];
	uint32_t version;
	uint32_t header_bytes;    /* NT_LIVE_HEADER_BYTES */
	uint32_t rank, size;      /* this rank, the job's ranks */
	uint32_t level;           /* 0 timing, 1 os, 2 full */
	uint32_t state;           /* enum nt_live_state */
	uint64_t pid;
	char host[64];
	double clock_hz;          /* the rank's counter cycles per second */
	double counter_ns_at_zero; /* the rank's local ns at counter 0: local ns = this + cyc/hz */
	uint64_t init_cyc;        /* the rank's MPI_Init on its counter */
	int64_t init_global_ns;   /* and on the job's global time base */
	uint64_t clock_error_ns;  /* bound on the error of its global times (at init) */
	uint64_t created_unix_ns; /* when the file was made */
	uint64_t last_cyc;        /* the latest activity recorded: a heartbeat */
	uint32_t aborted;         /* 1: the rank called MPI_Abort */
	int32_t abort_code;       /* with the error code */
	uint64_t lost[NT_LOSS_COUNT]; /* what the rank lost so far, by kind */
	uint64_t sites_offset;    /* in the file */
	uint64_t site_slots;      /* the table's slots, the merged sites included */
	uint64_t site_bytes;      /* one slot */
	uint64_t records_offset, record_slots, record_bytes;
	struct nt_live_field site_fields[NT_LSF_COUNT];
	struct nt_live_field record_fields[NT_LRF_COUNT];
	uint32_t nfns;            /* the wrapped functions, by their index in a site */
	uint32_t nmodules;        /* filled in order; a module whose entry is being written has
				   * hi 0 and is skipped */
	char fn_names[NT_LIVE_FNS][NT_LIVE_FN_NAME];
	struct nt_live_module modules[NT_LIVE_MODULES];
	/* Python call sites (all 0 in the files of builds without them): the pool of their names
	 * in the file (NUL-terminated "python:FUNCTION:FILE" strings), and where a site keeps its
	 * name (offset + 1 in the pool; 0: a C site) and its line. */
	uint64_t py_names_offset, py_names_bytes;
	struct nt_live_field py_name_field, py_line_field;
	/* The job as the rank saw it at MPI_Init, as its log block records it (all 0 in the files
	 * of builds before them, read as ""; the reader stops at the end of each field whether or
	 * not it holds a NUL): noisetool-private/jobinfo.h. */
	char command[NT_JOBINFO_COMMAND_BYTES];
	char mpi_library[NT_JOBINFO_MPI_BYTES];
	char tool_version[NT_JOBINFO_TOOL_BYTES];
	/* With NT_LIVE_LOG_FAILED: the errno of the failed log write (0 in the files of builds
	 * before it). */
	int32_t log_error;
	/* How the job's blocking calls waited (enum nt_log_wait_mode; 0, the MPI's own, in the
	 * files of builds before it). */
	uint32_t wait_mode;
	/* Test calls timed one in this many (NOISETOOL_POLL_SAMPLE; 0, not recorded, in the files
	 * of builds before it). */
	uint32_t poll_sample;
	/* Who ran the job and its batch job (all 0, read as "", in the files of builds before
	 * them; the reader stops at the end of each field whether or not it holds a NUL). */
	struct nt_jobinfo_batch batch;
};

/* Read the live files of a job (dir: NAME.live) into *log, as if it had written NAME.ntlog:
 * one rank block per rank of the job, rebuilt from each rank's file; a rank that has not
 * finished MPI_Finalize is marked NT_LOG_FLAG_UNFINISHED (and NT_LOG_FLAG_RUNNING while its
 * process still runs: nt_live_process_runs), a rank whose MPI_Finalize could not write the log
 * NT_LOG_FLAG_UNWRITTEN (with its log_errno), a rank without a file NT_LOG_FLAG_MISSING
 * (no sites, no records); all make the log partial. The job's size the headers give is checked
 * against the files found (at most NT_LIVE_RANKS_PER_FILE ranks for each) before anything is
 * allocated for it, every table against its file's size. On error err says what and where.
 * Returns 0, -ENOENT (no rank file), -EINVAL (a file that is not a live file, or a header field
 * out of bounds: err names the file and the field), -ENOMEM (err says so). */
int nt_live_read_job(const char *dir, struct nt_log *log, char *err, size_t errsz);

/* Whether the process that writes a live file still runs: it is on this host (h->host), its
 * pid exists and is not a zombie (a dead rank whose parent has not reaped it yet: its file is
 * final), and it started before the file was made (not a later process given the same pid). */
bool nt_live_process_runs(const struct nt_live_header *h);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_LIVE_FILE_H */
