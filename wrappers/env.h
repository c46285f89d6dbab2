/* NOISETOOL_* environment settings of the wrapper library (doc/environment.md). Parsing is
 * pure so that it can be tested; a bad value is reported and that setting falls back. */
#ifndef WRAPPERS_ENV_H
#define WRAPPERS_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/inject.h>
#include <noisetool/probe.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_ENV_JOB_MAX 64 /* NOISETOOL_JOB's longest value */

/* One timed test call in 64 (doc/overhead.md, "Sampled test calls"): in a polling loop between
 * cache-evicting work a timed call costs ~55 ns more than an untimed one (poll-thrash, 256 MiB:
 * one in 16 left a poll 6.2 ns over PMPI_Iprobe, one in 64 3.6; medians of 12 paired runs). */
#define NT_ENV_POLL_SAMPLE_DEFAULT 64u
#define NT_ENV_POLL_SAMPLE_MAX 1024u

struct nt_env {
	bool disable;               /* NOISETOOL_DISABLE=1: pass every call through, write nothing */
	enum nt_probe_level level;  /* NOISETOOL_LEVEL=timing|os|full (default os) */
	uint64_t mem_bytes;         /* NOISETOOL_MEM=N[K|M|G] (default 16M, 1M..4G: arena.h) */
	const char *out_dir;        /* NOISETOOL_OUT (default ".") */
	const char *job;            /* NOISETOOL_JOB: the job's id in its log's name (noisetool run
				     * sets it; default NULL: rank 0's host and pid) */
	bool log_per_rank;          /* NOISETOOL_LOG=per-rank: one part file per rank, no shared file */
	bool summary;               /* NOISETOOL_SUMMARY=0|1: rank 0's summary on stderr (default 1) */
	bool live;                  /* NOISETOOL_LIVE=0|1: each rank's measurement in a live file
				     * under NOISETOOL_OUT while it runs (default 1; live.h) */
	bool callsite_every_call;   /* NOISETOOL_CALLSITE=every-call: walk the stack on every call
				     * as mpiP does (benchmark comparison only; default cached) */
	int wait;                   /* NOISETOOL_WAIT=mpi|busy|adaptive|sleep (enum nt_wait_mode;
				     * default mpi: the MPI's own blocking calls) */
	unsigned poll_sample;       /* NOISETOOL_POLL_SAMPLE=N: the fast path times one test call
				     * in N at a site, estimates the rest (1..1024, default 64;
				     * 1: every call timed) */
	bool inject;                /* NOISETOOL_INJECT=SPEC given and valid */
	struct nt_inject_spec inject_spec;
};

/* Parse the variables through getenv_fn (getenv in the library, a fake in tests). Each bad
 * value leaves its default and appends one line naming the variable and the accepted values
 * to errors (NUL-terminated, truncated to size). Returns the number of bad values. */
int nt_env_parse(struct nt_env *env, const char *(*getenv_fn)(const char *name), char *errors,
		 size_t size);

#ifdef __cplusplus
}
#endif
#endif /* WRAPPERS_ENV_H */
