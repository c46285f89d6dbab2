/* The noisetool subcommands: each takes the arguments after its name, returns the exit status. */
#ifndef TOOLS_COMMANDS_H
#define TOOLS_COMMANDS_H

int cmd_detour(int argc, char **argv);
int cmd_ftq(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif /* TOOLS_COMMANDS_H */
