/* The noisetool subcommands: each takes the arguments after its name, returns the exit status. */
#ifndef TOOLS_COMMANDS_H
#define TOOLS_COMMANDS_H

int cmd_detour(int argc, char **argv);
int cmd_ftq(int argc, char **argv);
int cmd_hosts(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_simulate(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>

/* The outputs of a report besides its text (NULL: not asked for). */
struct report_outputs {
	const char *json, *html, *perfetto, *csv_dir;
};

/* Print the report of a log and write the outputs asked for (noisetool report LOG ...).
 * Returns the exit status. */
int report_print(const char *cmd, const char *log_path, const struct report_outputs *outs,
		 size_t top, size_t late, bool symbols);

/* Check the outputs of a report by the output rules before the work that makes the log (a
 * page also needs Python with matplotlib), inputs being files the work reads; creates csv_dir.
 * Returns NT_EXIT_OK, or prints one line and returns the exit status. */
int report_check_outputs(const char *cmd, const struct report_outputs *outs,
			 const char *const *inputs, size_t ninputs);

#endif /* TOOLS_COMMANDS_H */
