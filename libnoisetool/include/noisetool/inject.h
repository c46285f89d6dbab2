/* Noise injection: periodic detours (a timer signal to the target thread, then a calibrated
 * spin), synchronized on a global time base or with a seeded random phase per rank, or the
 * replay of a recorded detour trace. The injector accounts exactly what it spun, so that a
 * report can check its attribution against the truth. */
#ifndef NOISETOOL_INJECT_H
#define NOISETOOL_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_INJECT_MAX_RANKS 256 /* ranks named in one spec */

/* The shortest period the injector accepts: 1 ms. Beyond its own length, one detour costs the
 * target thread ~19 us here (the timer interrupt, the signal's delivery, the handler's entry
 * and its sigreturn, on a 2-vCPU KVM guest, Linux 6.18, HZ=250: the median gap a detour leaves
 * in a spinning thread's loop, less the detour, was 18.6 to 19.8 us in each of 18 rows of six
 * runs, 600 to 1,500 detours a row, bench/bench-inject-cost table 1; in its table 3 a 1 ms
 * period took 1.5 to 1.9 % of the thread beyond the detours, 500 us 3.3 %, 100 us 19 %, and
 * 20 us with a 1 us detour left it 1 to 4 %; table 2: the timer's signal reached the handler
 * 13 to 19 us after its due time, timer slack, 50 us, made no difference). So at 1 ms the
 * injector's own cost is ~2 % of the period, and under ~19 us the thread never runs again. */
#define NT_INJECT_MIN_PERIOD_NS 1000000u

/* The longest detour in percent of the period. What is left of a period goes first to that
 * ~19 us signal cost: with less left than one cost the thread never leaves the handler
 * (measured: a 990 us detour every 1 ms, 90 us every 100 us), with 20 us left it kept 0.1 to
 * 0.3 % of its CPU (bench-inject-cost table 3). At 90 % the job keeps at least 10 % less the
 * signal cost (8.1 % measured at the floor: at most ~12x slower) and at least 100 us, five
 * signal costs, between detours. */
#define NT_INJECT_MAX_DUTY_PCT 90u

/* The largest trace the injector reads: 16 MiB, some 800,000 detours of `noisetool detour
 * --trace` (about 20 bytes a line), which at the injector's 1 ms floor between detours replay
 * for 13 minutes before they loop; every rank it targets reads it inside MPI_Init. */
#define NT_INJECT_MAX_TRACE_BYTES (16u << 20)

/* The injector's signal: the first real-time signal from SIGRTMIN + 4 up to SIGRTMAX whose
 * disposition is the default and which the injecting thread does not block. SIGRTMIN + 0..3
 * are left alone: those are the ones programs and libraries take first. */
#define NT_INJECT_SIGNAL_FIRST 4

enum nt_inject_mode {
	NT_INJECT_UNSYNC = 0, /* each rank its own phase, drawn from the seed and the rank */
	NT_INJECT_SYNC = 1,   /* every rank at the same global times (multiples of the period) */
};

struct nt_inject_spec {
	uint64_t period_ns;   /* time between detour starts */
	uint64_t detour_ns;   /* length of one detour */
	enum nt_inject_mode mode;
	uint64_t seed;
	bool all_ranks;       /* no ranks= given */
	uint32_t nranks;
	int ranks[NT_INJECT_MAX_RANKS];
	char trace[1024];     /* trace=FILE: replay these detours instead (period, detour unused) */
};

/* Parse "period=10ms,detour=100us,mode=sync|unsync,ranks=1,3,seed=42" or "trace=FILE[,ranks=..]".
 * Durations take ns, us, ms or s (a bare number is us). ranks= takes a comma list of ranks
 * and ranges (1,3,8-11) and ends at the next key. Defaults: mode unsync, seed 1, all ranks.
 * The period is at least NT_INJECT_MIN_PERIOD_NS and the detour at most NT_INJECT_MAX_DUTY_PCT
 * of it (a trace is checked by nt_inject_start, which reads it). Ranks are not checked against
 * a job's size here (nt_inject_check_ranks). Returns 0, or -EINVAL with a one-line reason in
 * err. */
NT_API int nt_inject_parse(const char *spec, struct nt_inject_spec *out, char *err, size_t errsz);

/* Whether rank is a target of s. */
NT_API bool nt_inject_targets(const struct nt_inject_spec *s, int rank);

/* The ranks s names that a job of size ranks does not have (rank >= size), counted once each.
 * Writes a one-line explanation to why ("ranks=5 names ranks that do not exist in this 2-rank
 * job: 5"), or "" when there are none. Pure: every rank of a job gets the same answer.
 * Returns how many (0 when all exist or s targets every rank), or -EINVAL (s NULL, size < 1). */
NT_API int nt_inject_check_ranks(const struct nt_inject_spec *s, int size, char *why, size_t whysz);

/* Whether any rank of a job of size ranks is a target of s (false for NULL s or size < 1). */
NT_API bool nt_inject_any_target(const struct nt_inject_spec *s, int size);

/* Start injecting into the calling thread (one injector per process). global_minus_local_ns:
 * global time minus this process's CLOCK_MONOTONIC, for the synchronized phase (0 on one node).
 * A trace replays in a loop; on average its detours must start at least NT_INJECT_MIN_PERIOD_NS
 * apart and cover at most NT_INJECT_MAX_DUTY_PCT of the time, as a period and a detour must.
 * The trace must be a regular file of at most NT_INJECT_MAX_TRACE_BYTES: it is opened without
 * blocking and anything else (a FIFO, a device, a directory) is refused unread.
 * Returns 0; -EBUSY when already running; -EINVAL with a reason in err (a period or detour out
 * of those bounds, set without nt_inject_parse); -ENOENT, -EIO, -EFBIG or -EINVAL with a reason
 * in err when the trace cannot be read, is no regular file, is too large or breaks those
 * bounds; -EBUSY with a reason in err when no signal is free (NT_INJECT_SIGNAL_FIRST); -errno
 * from timer_create. */
NT_API int nt_inject_start(const struct nt_inject_spec *s, int rank, int64_t global_minus_local_ns,
			   char *err, size_t errsz);

/* Read and check the trace at path as nt_inject_start would (a regular file of at most
 * NT_INJECT_MAX_TRACE_BYTES, its lines, its average bounds), without injecting: for a command
 * that starts a job replaying it, so that a bad trace is said before the job starts. Returns 0;
 * -EINVAL (path NULL); -EBUSY while an injector runs in this process; else what
 * nt_inject_start returns for the trace, with the reason in err. */
NT_API int nt_inject_check_trace(const char *path, char *err, size_t errsz);

/* Stop the timer and give the signal back: what it had before nt_inject_start when its handler
 * is still the injector's, else (the application installed its own since) leave the
 * application's in place and note it for nt_inject_displaced(). Safe to call when not
 * running. */
NT_API void nt_inject_stop(void);

/* Whether the application put its own handler on the injector's signal while the injector ran
 * (seen at a detour or at nt_inject_stop). Injection stopped when it was seen: the handler that
 * runs on the next expiry re-arms the timer only when it is the injector's, so at most one of
 * the injector's signals reached the application's handler, and the application's handler is
 * left in place. Cleared by nt_inject_start. */
NT_API bool nt_inject_displaced(void);

/* Counter cycles spun by the injector in this process so far, and the number of detours. The
 * spun time is what the handler actually spun: a detour's wall length less the time the thread
 * was off the CPU inside it (preempted, or an interrupt over 1 us), which its run delay shows. */
NT_API uint64_t nt_inject_spun_cyc(void);
/* That time off the CPU inside detours: spun + lost is their wall length, at least the
 * detours' lengths. */
NT_API uint64_t nt_inject_lost_cyc(void);
NT_API uint64_t nt_inject_count(void);
#define NT_INJECT_DELIVERY_MAX_NS 50000u /* a signal's delivery counted at most (below) */
/* The signals' delivery: from each expiry of the timer to its handler's start (the timer's
 * interrupt and the kernel's signal frame, ~19 us here), summed over the detours whose
 * delivery took at most NT_INJECT_DELIVERY_MAX_NS; a longer one (the thread was off the CPU
 * at the expiry, which its run delay shows) counts 0. */
NT_API uint64_t nt_inject_delivery_cyc(void);
/* What the injection took from the thread: spun + delivery (the log's injected time, and its
 * probe windows'). */
NT_API uint64_t nt_inject_taken_cyc(void);

/* The signal the running injector took, or the one nt_inject_start would take now from this
 * thread (NT_INJECT_SIGNAL_FIRST), or -EBUSY when every one has a handler or is blocked. */
NT_API int nt_inject_signal(void);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_INJECT_H */
