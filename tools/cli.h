/* Argument parsing shared by the noisetool subcommands: strict numbers, CPU lists, one clear
 * line on stderr and exit status 2 for every usage error. */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NT_EXIT_OK 0
#define NT_EXIT_FAIL 1  /* the measurement or an output failed */
#define NT_EXIT_USAGE 2 /* bad arguments */

/* Iterates "--name value" and "--name=value" arguments. */
struct cli {
	const char *cmd;  /* "noisetool detour", for messages */
	int argc;
	char **argv;
	int i;
	const char *name;   /* current option name, e.g. "--seconds" */
	const char *inline_value; /* value after '=', or NULL */
};

void cli_init(struct cli *c, const char *cmd, int argc, char **argv);
/* For commands whose arguments may come anywhere among the options: move every argument that
 * is no option, nor the value of an option named in valued (a NULL-ended list, "--json"), from
 * argv[0..*argc) into out in order, leaving the options in argv for cli_init; "-" is an
 * argument when dash_is_arg. out must hold *argc. Returns how many were moved. */
size_t cli_take_args(int *argc, char **argv, const char *const *valued, bool dash_is_arg,
		     char **out);
/* Next option; false at the end. A non-option argument is a usage error. */
bool cli_next(struct cli *c);
/* True when the current option is `name` (e.g. "--seconds"). */
bool cli_is(const struct cli *c, const char *name);
/* The current option's value (usage error when missing). */
const char *cli_value(struct cli *c);
/* A flag must not carry "=value". */
void cli_flag(struct cli *c);

/* Print "CMD: message" and exit 2. */
_Noreturn void cli_usage_error(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The current option was not recognised. */
_Noreturn void cli_unknown(const struct cli *c);

double cli_double(struct cli *c, double min, double max);
uint64_t cli_u64(struct cli *c, uint64_t min, uint64_t max);

/* "all" or a CPU list ("0", "0,2-3"), each CPU in this process's affinity mask. Returns the
 * number of CPUs written to cpus (ascending, unique). */
size_t cli_cpus(struct cli *c, int *cpus, size_t max);

/* Every CPU in this process's affinity mask (exits 1 when it cannot be read). */
size_t cli_all_cpus(const struct cli *c, int *cpus, size_t max);

/* Progress line on stderr (only when it is a terminal and the run is longer than 3 s). */
struct progress {
	const char *what;
	bool enabled;
	int first_cpu;
};
void progress_init(struct progress *p, const char *what, double seconds, int first_cpu);
void progress_cb(void *ctx, int cpu, double elapsed_s, double total_s);
void progress_done(struct progress *p);

#endif /* TOOLS_CLI_H */
