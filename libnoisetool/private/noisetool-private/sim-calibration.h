/* LogGP calibrations that can be trusted and kept: the repetitions of `noisetool simulate
 * --calibrate` combined with a robust rule, written to and read from a small JSON file, and
 * which values are in use and where they came from (doc/simulate.md, "Calibration"). Private
 * to the core (sim-calibration.c) and the noisetool command. */
#ifndef NOISETOOL_PRIVATE_SIM_CALIBRATION_H
#define NOISETOOL_PRIVATE_SIM_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <noisetool/sim.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_LOGGP_MAX_REPS 64  /* repetitions one calibration combines */
#define NT_LOGGP_MIN_KEPT 3   /* repetitions that must agree on every parameter */
#define NT_LOGGP_FILE_MAX (64 * 1024) /* a larger file is refused unread */
/* Differences under these always agree: the ping-pong's clock moved in steps of ~10 ns on the
 * development VM (o_send 50.2 or 60.2 ns, never between), and G's fit scatters by ~0.001 ns/B
 * (0.0641-0.0670 over five repetitions). */
#define NT_LOGGP_NS_FLOOR 10.0
#define NT_LOGGP_G_FLOOR 0.005

/* One parameter over the repetitions that were kept. */
struct nt_loggp_spread {
	double median, min, max; /* of the kept repetitions; median is the value in use */
	double mad;              /* median absolute deviation from the median */
	unsigned kept, rejected; /* repetitions kept, and rejected (preempted or outliers) */
};

/* A calibration: the values in use, their spread, and where and when it was measured. */
struct nt_loggp_calib {
	struct nt_sim_loggp loggp; /* each parameter's median over its kept repetitions */
	struct nt_loggp_spread L, o, g, G;
	unsigned repetitions;      /* measured */
	unsigned preempted;        /* of them, preempted (rejected for every parameter) */
	bool preempt_ignored;      /* too few were not preempted: all used, outliers rejected */
	char date[32];             /* UTC, 2025-01-31T12:00:00Z */
	char host[64];
	char cpu[128];
	char mpi[128];             /* the MPI library's version line */
};

/* Where the LogGP values in use came from. */
enum nt_loggp_origin {
	NT_LOGGP_BUILTIN = 0, /* NT_SIM_LOGGP_DEFAULT: this project's development VM */
	NT_LOGGP_OPTION,      /* --loggp */
	NT_LOGGP_FILE,        /* --loggp-file or the default file */
};

/* Combine n repetitions (1..NT_LOGGP_MAX_REPS) into *out (its date, host, cpu and mpi are left
 * as they are). A repetition with preempted[i] set is rejected for every parameter, unless
 * fewer than min(n, NT_LOGGP_MIN_KEPT) are left (then every one is used, out->preempt_ignored
 * is set and the outlier rule alone decides); then, per
 * parameter, the rule: m the median and MAD the median absolute deviation of the rest, a value
 * further from m than max(3 x 1.4826 x MAD, 10 % of m, NT_LOGGP_NS_FLOOR or for G
 * NT_LOGGP_G_FLOOR) is an outlier and rejected. At least min(n, NT_LOGGP_MIN_KEPT) must be kept
 * for every parameter, and the kept ones must span at most max(half their median, twice the
 * floor). preempted
 * may be NULL. Returns 0, or -EINVAL with a one-line reason in err naming the parameter and its
 * values (e.g. a preempted G of 2.93 ns/B against 0.123 with too few others). */
int nt_loggp_combine(const struct nt_sim_loggp *reps, const bool *preempted, size_t n,
		     struct nt_loggp_calib *out, char *err, size_t errsz);

/* Write c as a "noisetool-loggp/1" JSON document. 0 or -EIO. */
int nt_loggp_write(FILE *f, const struct nt_loggp_calib *c);

/* Read a file nt_loggp_write wrote (at most NT_LOGGP_FILE_MAX bytes). Only "schema", "loggp"
 * (its four values, finite and >= 0) and "date" are required. Returns 0, -errno of opening or
 * reading it (-ENOENT, -EACCES, -EISDIR), or -EINVAL (malformed; err says why), -ENOMEM. */
int nt_loggp_read(const char *path, struct nt_loggp_calib *out, char *err, size_t errsz);

/* The default file: $XDG_CONFIG_HOME/noisetool/loggp.json when XDG_CONFIG_HOME is an absolute
 * path, else $HOME/.config/noisetool/loggp.json. Returns 0, -ENOENT (neither variable usable)
 * or -ENAMETOOLONG. */
int nt_loggp_default_path(char *buf, size_t size);

/* The LogGP values in use when no --loggp is given: file (--loggp-file) when not NULL, else the
 * default file when it exists, else NT_SIM_LOGGP_DEFAULT. Fills *out (zeroed for the built-in
 * values), *origin and path_out (the file read, "" for the built-in). Returns 0, or what
 * nt_loggp_read returns for the file (a default file that exists but cannot be read or is
 * malformed is an error too, not silently ignored); err says why. */
int nt_loggp_resolve(const char *file, struct nt_loggp_calib *out,
		     enum nt_loggp_origin *origin, char *path_out, size_t path_size, char *err,
		     size_t errsz);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_SIM_CALIBRATION_H */
