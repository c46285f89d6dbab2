/* The collective simulator behind `noisetool simulate`: LogGP messages, round-structured
 * collective algorithms over flat per-rank arrays, and per-rank noise that delays a rank only
 * while it is busy (absorption). Deterministic for a given seed. Model: doc/simulate.md. */
#ifndef NOISETOOL_SIM_H
#define NOISETOOL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <noisetool/common.h>
#include <noisetool/detour.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_SIM_MAX_RANKS (1ull << 30)   /* largest simulated job */
#define NT_SIM_RING_MAX_RANKS 16384     /* ring algorithms are O(P^2) messages */
#define NT_SIM_MAX_RANK_COUNTS 64       /* entries of one --ranks list */
#define NT_SIM_MAX_SOURCES 16           /* detour processes in one node model */
#define NT_SIM_MAX_THREADS 64           /* threads (shards of each round) of one run */

enum nt_sim_collective {
	NT_SIM_BARRIER,
	NT_SIM_BCAST,
	NT_SIM_REDUCE,
	NT_SIM_ALLREDUCE,
	NT_SIM_ALLGATHER,
	NT_SIM_ALLTOALL,
};

enum nt_sim_algorithm {
	NT_SIM_ALG_DEFAULT = 0, /* the collective's default (below) */
	NT_SIM_DISSEMINATION,   /* barrier (default) */
	NT_SIM_BINOMIAL,        /* bcast, reduce (default), root 0 */
	NT_SIM_RECURSIVE_DOUBLING, /* allreduce (default), extra ranks folded in */
	NT_SIM_RING,            /* allgather, alltoall (pairwise exchange) */
	NT_SIM_BRUCK,           /* allgather, alltoall (default) */
};

/* LogGP parameters, in ns (G in ns per byte). */
struct nt_sim_loggp {
	double L_ns;          /* wire latency */
	double o_ns;          /* send and receive overhead (busy time) */
	double g_ns;          /* minimum gap between two send starts of one rank */
	double G_ns_per_byte; /* per additional byte of a message */
};

/* Measured on this machine (2 vCPUs, MPICH 4.0.2 ch4 shared memory, -bind-to core) with
 * `noisetool simulate --calibrate`, three runs: L 20/23/24 ns, o 78 ns (o_send 77.8, o_recv
 * 78.8-87.8), g 67-73 ns, G 0.123 ns/B (half round trip 8 B 180 ns, 1 MiB 123 us). An 8-byte
 * MPI_Allreduce took 300-308 ns in the same runs, against the model's 2o + L = 180 ns: the
 * collective's own software path is not in LogGP. */
#define NT_SIM_LOGGP_DEFAULT ((struct nt_sim_loggp){ 22, 78, 71, 0.123 })

struct nt_sim_noise; /* opaque: per-rank detour processes */

/* Progress: fraction of the current rank count's simulation done, in [0, 1]. */
typedef void (*nt_sim_progress_fn)(void *ctx, double fraction);

struct nt_sim_config {
	enum nt_sim_collective collective;
	enum nt_sim_algorithm algorithm; /* NT_SIM_ALG_DEFAULT: the collective's default */
	uint64_t bytes;                  /* message size; per-rank block for allgather/alltoall */
	struct nt_sim_loggp loggp;
	uint64_t iterations;             /* bulk-synchronous loop: compute, then the collective */
	uint64_t compute_ns;             /* compute per iteration on every rank (0: none) */
	const struct nt_sim_noise *noise; /* NULL: noise-free only */
	nt_sim_progress_fn progress;     /* optional */
	void *progress_ctx;
	unsigned threads; /* shards of each round run on this many threads (at most
			   * NT_SIM_MAX_THREADS; 0: one per CPU this process may use; 1: none).
			   * The answers do not depend on it. */
};

struct nt_sim_result {
	uint64_t ranks;
	uint64_t time_ns_noise_free; /* the last rank's finish, noise switched off */
	uint64_t time_ns_noisy;      /* the same with the noise (equal without noise) */
	double magnification;        /* noisy / noise-free */
	uint64_t events;             /* events of one simulated run: sends + receives + compute phases */
	double events_per_s;         /* events simulated (both runs) per second of wall time */
	double seconds;              /* wall time of both runs */
	unsigned threads;            /* threads the rounds ran on (1: the caller's alone) */
};

/* Check that the configuration can simulate `ranks` ranks: known collective and algorithm
 * (NT_SIM_ALG_DEFAULT resolved), ring at most NT_SIM_RING_MAX_RANKS, 1..NT_SIM_MAX_RANKS ranks,
 * non-negative finite LogGP parameters, iterations >= 1. Returns 0, or -EINVAL with the reason
 * in err. */
NT_API int nt_sim_check(const struct nt_sim_config *cfg, uint64_t ranks, char *err, size_t errsz);

/* Simulate `ranks` ranks twice, noise-free and (with cfg->noise) noisy, into *out. Memory: 56
 * bytes per rank when cfg->noise keeps a state per rank (nt_sim_noise_stateful: three 8-byte
 * times and a 32-byte struct nt_sim_noise_state), else 24, freed before returning. Returns 0,
 * -EINVAL (nt_sim_check fails), -ENOMEM. */
NT_API int nt_sim_run(const struct nt_sim_config *cfg, uint64_t ranks, struct nt_sim_result *out);

/* A whole `noisetool simulate` run, for the writers. */
struct nt_sim_report {
	const struct nt_sim_config *cfg;
	bool sync;
	uint64_t seed;
	double freq_hz;                 /* periodic noise (--noise), else 0 */
	uint64_t detour_ns;             /* its detour's length */
	const char *const *signatures;  /* or the signature files */
	size_t nsignatures;
	const struct nt_sim_result *results; /* ascending by ranks */
	size_t nresults;
};

/* The JSON document (doc/simulate.md, schema "noisetool-simulate/1"). 0 or -EIO. */
NT_API int nt_sim_write_json(FILE *f, const struct nt_sim_report *rep);

/* The table: a header line, then one row per rank count. 0 or -EIO. */
NT_API int nt_sim_write_text(FILE *f, const struct nt_sim_report *rep);

/* The algorithm that NT_SIM_ALG_DEFAULT stands for. */
NT_API enum nt_sim_algorithm nt_sim_default_algorithm(enum nt_sim_collective c);

/* Names as on the command line ("allreduce", "recursive-doubling"); "?" when unknown. */
NT_API const char *nt_sim_collective_name(enum nt_sim_collective c);
NT_API const char *nt_sim_algorithm_name(enum nt_sim_algorithm a);
/* Name to enum. 0 or -EINVAL. */
NT_API int nt_sim_collective_parse(const char *s, enum nt_sim_collective *out);
NT_API int nt_sim_algorithm_parse(const char *s, enum nt_sim_algorithm *out);

/* "1024,4096", "2^10-2^21", "1024-2097152" (a range: every power of two in it), mixed; values
 * 1..NT_SIM_MAX_RANKS, written as numbers or 2^k. Writes the sorted unique counts to out
 * (at most max). Returns the count, or -EINVAL with the reason in err. */
NT_API int nt_sim_parse_ranks(const char *s, uint64_t *out, size_t max, char *err, size_t errsz);

/* Any spelling nt_sim_parse_noise_spec takes (below): the detours per second and one
 * detour's length. Returns 0, or -EINVAL with the reason in err. */
NT_API int nt_sim_parse_noise(const char *s, double *freq_hz, uint64_t *detour_ns, char *err,
			      size_t errsz);

/* --- The noise vocabulary (doc/simulate.md, "The noise vocabulary"). --- */

enum nt_sim_mode {
	NT_SIM_MODE_UNSET = 0, /* no mode= in the spec */
	NT_SIM_MODE_SYNC,
	NT_SIM_MODE_UNSYNC,
};

/* A periodic noise spec: a detour of detour_ns every period_ns (= 1/freq_hz). */
struct nt_sim_noise_spec {
	double freq_hz;        /* detours per second */
	uint64_t period_ns;    /* from one detour's start to the next's */
	uint64_t detour_ns;    /* one detour's length */
	enum nt_sim_mode mode; /* mode=, or NT_SIM_MODE_UNSET */
	bool deprecated;       /* written in the old freq=F,period=D spelling */
};

/* One vocabulary for --noise, keys in any order, plus mode=sync|unsync in any spelling:
 * - the injector's (NOISETOOL_INJECT): period=T (the interval), detour=T (the length); a bare
 *   number is us, as the injector reads it;
 * - Engelmann's: freq=F (Hz, kHz, MHz or a bare number of Hz), length=T or duration=T (the
 *   length, its unit required: ns, us, ms or s);
 * - the old form, freq=F,period=T (period= the length; a bare number is ns): accepted, and
 *   out->deprecated says so.
 * A mix of the spellings (period= beside length=, freq= beside detour=, freq=,period= beside a
 * length key, two length keys), a key given twice and the injector's ranks=, seed=, trace= are
 * refused naming the keys. The detour must be shorter than the period. Returns 0, or -EINVAL
 * with a one-line reason in err. */
NT_API int nt_sim_parse_noise_spec(const char *s, struct nt_sim_noise_spec *out, char *err,
				   size_t errsz);

/* "L,o,g,G" in ns (G in ns per byte), each finite and >= 0. 0 or -EINVAL with err. */
NT_API int nt_sim_parse_loggp(const char *s, struct nt_sim_loggp *out, char *err, size_t errsz);

/* --- The noise model: a set of node models; rank r follows model r mod count. --- */

/* An empty noise model (no detours until models are added). 0 or -ENOMEM. */
NT_API int nt_sim_noise_new(struct nt_sim_noise **out);

/* A new, empty node model. Returns its index (>= 0), -EINVAL or -ENOMEM. */
NT_API int nt_sim_noise_add_model(struct nt_sim_noise *n);

/* Periodic detours of duration_ns every 1/freq_hz, the first at phase_ns (< the period) when
 * synchronized; unsynchronized ranks get a random phase each. 0, or -EINVAL (bad model, the
 * detour not shorter than the period, the source alone filling the time, the model holding
 * NT_SIM_MAX_SOURCES processes already), -ENOMEM. The same limits hold for the sources below;
 * sources of one model may overlap (a detour's time is lost once). */
NT_API int nt_sim_noise_add_comb(struct nt_sim_noise *n, int model, double freq_hz,
				 uint64_t duration_ns, uint64_t phase_ns);

/* Rare detours: a Poisson process of rate_hz whose durations are drawn uniformly from
 * durations_ns[0..count). 0, -EINVAL (bad model, count 0, a zero duration, rate not positive,
 * noise ratio reaching 1) or -ENOMEM. */
NT_API int nt_sim_noise_add_rare(struct nt_sim_noise *n, int model, double rate_hz,
				 const uint64_t *durations_ns, size_t count);

/* A trace replayed in a loop whose length is its last end; synchronized ranks start it at
 * offset 0, unsynchronized ranks at a random offset. Overlapping detours are merged. 0, or
 * -EINVAL (bad model, empty trace, the trace leaving no time for work, a start or duration
 * past 2^62 ns), -ENOMEM. */
NT_API int nt_sim_noise_add_trace(struct nt_sim_noise *n, int model, const struct nt_detour *d,
				  size_t count);

/* The same, looping at loop_ns when that is past the last end (the run's length, as a trace
 * with a "# elapsed_ns N" line records it); 0: at the last end. loop_ns past 2^62 ns is
 * -EINVAL. */
NT_API int nt_sim_noise_add_trace_loop(struct nt_sim_noise *n, int model, const struct nt_detour *d,
				       size_t count, uint64_t loop_ns);

/* A periodic component as measured: teeth every 1/freq_hz (the first at phase_ns when
 * synchronized, at a random phase per rank otherwise), each hit with probability hit_fraction
 * (drawn per tooth and rank), a hit lasting a length drawn from the quantiles
 * quantiles_ns[0..nq) (ascending, at k / (nq - 1), linearly interpolated; nq 1..32), scaled so
 * that their mean is mean_ns (0: as they are). A length may pass the period: the detours
 * merge. 0, or -EINVAL (bad model, frequency, phase or fraction, no quantiles or descending
 * ones, a length of an hour or more, the component alone filling the time), -ENOMEM. */
NT_API int nt_sim_noise_add_periodic(struct nt_sim_noise *n, int model, double freq_hz,
				     uint64_t phase_ns, double hit_fraction,
				     const uint64_t *quantiles_ns, size_t nq, double mean_ns);

/* A renewal process: detours of lengths drawn from len_q_ns[0..nlen) (quantiles as above,
 * scaled to mean len_mean_ns unless 0), separated by gaps (end to next start) drawn from
 * gap_q_ns[0..ngap) scaled to mean gap_mean_ns unless 0, or exponential gaps of mean
 * gap_mean_ns when ngap is 0. With target_ratio in (0, 1), the gaps are then scaled so that
 * the model's share of time in detours, measured by pushing work through all of its sources,
 * is target_ratio within 0.001 (a signature's gaps include the other sources' detours; sources
 * overlap in the model). Per rank independent when unsynchronized. A rank's detours are one
 * sequence walked forward: through nt_sim_noise_advance_state() a run pays O(1) per detour it
 * passes; nt_sim_noise_advance() walks from time 0 each call. One per model. 0, or -EINVAL (bad
 * model or quantiles, gaps of mean 0 without a target, a target outside [0, 1), a model that
 * has one already), -ENOMEM. */
NT_API int nt_sim_noise_add_renewal(struct nt_sim_noise *n, int model, const uint64_t *len_q_ns,
				    size_t nlen, double len_mean_ns, const uint64_t *gap_q_ns,
				    size_t ngap, double gap_mean_ns, double target_ratio);

/* The share of time in detours that the model's signature measured (total_ns / elapsed_ns
 * of its CPU, or the trace's busy time over its length), to print beside nt_sim_noise_ratio.
 * NAN when not known (a model built by hand, a bad model). */
NT_API void nt_sim_noise_set_measured(struct nt_sim_noise *n, int model, double ratio);
NT_API double nt_sim_noise_measured_ratio(const struct nt_sim_noise *n, int model);

/* Add the node models of one signature file: a `noisetool detour|ftq --json` document (one
 * model per CPU entry: its periodic components and rare long detours) or a TSV trace
 * (start_ns<TAB>duration_ns, one model). path is a regular file or a pipe, read to its end
 * (`<(noisetool detour --json -)`); it is opened without blocking, so a FIFO that no one writes
 * reads as an empty file, and a device is refused unread. At most 64 MiB. Returns the number of
 * models added (>= 1), -errno of opening or reading it (e.g. -ENOENT, -EISDIR; the file is
 * unreadable), -EINVAL (malformed or unusable, not a regular file or pipe, too large; err says
 * why), -ENOMEM. */
NT_API int nt_sim_noise_load(struct nt_sim_noise *n, const char *path, char *err, size_t errsz);

/* Where model's time axis starts on the axis common to its signature's CPUs (a multi-CPU
 * measurement's start_offset_ns; default 0). With --sync, a comb's tooth at phase p of its own
 * axis lies at p + offset_ns on the common one, and a trace's time 0 at offset_ns, so the models
 * of several CPUs keep their measured alignment. No effect unsynchronized. */
NT_API void nt_sim_noise_set_origin(struct nt_sim_noise *n, int model, uint64_t offset_ns);

/* Synchronized (the same detours on every rank of a model) or not, and the seed of every random
 * draw. Default: unsynchronized, seed 1. */
NT_API void nt_sim_noise_set_sync(struct nt_sim_noise *n, bool sync, uint64_t seed);

/* Node models in n. */
NT_API size_t nt_sim_noise_models(const struct nt_sim_noise *n);

/* Long-run share of time that model spends in detours (0..1), 0 for a bad model: the union
 * of its sources, 1 - prod(1 - share), or as measured on the model when a renewal process was
 * fitted to a target (nt_sim_noise_add_renewal). */
NT_API double nt_sim_noise_ratio(const struct nt_sim_noise *n, int model);

/* When work of work_ns, started by rank at t_ns, ends: the first time by which work_ns of
 * detour-free time has passed (a start inside a detour waits for its end). Cost O(1 + detours
 * hit), and O(t_ns / mean cycle) for a renewal process (see nt_sim_noise_advance_state). n may be NULL (no noise): t_ns + work_ns. An end past 2^62 ns (146 years) is
 * UINT64_MAX: never, rather than a time that wrapped round. */
NT_API uint64_t nt_sim_noise_advance(const struct nt_sim_noise *n, uint64_t rank, uint64_t t_ns,
				     uint64_t work_ns);

/* What a run knows of a rank's noise so far, kept by the caller: one per rank, zeroed before
 * the run, 32 bytes. The end of the detour-free time found by the last call, and the rank's
 * place in its renewal sequence (nt_sim_noise_add_renewal). */
struct nt_sim_noise_state {
	uint64_t quiet;      /* no detour starts between the last call's end and this */
	uint64_t start, end; /* the renewal detour under the cursor */
	uint64_t count;      /* renewal detours drawn; 0: not started */
};

/* Whether a state per rank pays for itself: n has a model that is not one plain comb (whose
 * advance() is a closed form). */
NT_API bool nt_sim_noise_stateful(const struct nt_sim_noise *n);

/* nt_sim_noise_advance() for a run: st is rank's state (NULL: none, as
 * nt_sim_noise_advance()), and the calls for one rank come with t_ns never below the end the
 * last call returned (a rank's clock). The answers are those of nt_sim_noise_advance(); the
 * cost is O(1) when no detour starts before the end, else O(sources x detours passed). */
NT_API uint64_t nt_sim_noise_advance_state(const struct nt_sim_noise *n,
					   struct nt_sim_noise_state *st, uint64_t rank,
					   uint64_t t_ns, uint64_t work_ns);

/* Free a noise model and every node model in it. NULL is accepted. */
NT_API void nt_sim_noise_free(struct nt_sim_noise *n);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_SIM_H */
