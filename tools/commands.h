/* The noisetool subcommands: each takes the arguments after its name, returns the exit status. */
#ifndef TOOLS_COMMANDS_H
#define TOOLS_COMMANDS_H

int cmd_detour(int argc, char **argv);
int cmd_ftq(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_simulate(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>

/* Print the report of a log (and write JSON when json_path is given). Returns the exit status. */
int report_print(const char *cmd, const char *log_path, const char *json_path, size_t top,
		 size_t late, bool symbols);

#endif /* TOOLS_COMMANDS_H */
