/* Durations and sizes as people write them: a duration read from an option ("25us", "1ms"),
 * durations and sizes written into a message ("2.5 us", "812 MiB"). Private to the core. */
#ifndef LIBNOISETOOL_UNITS_H
#define LIBNOISETOOL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* A duration of len characters at s: a number with the suffix ns, us, ms or s, or a bare number
 * in units of bare_ns (1 = ns, 1e3 = us). Non-negative, at most an hour, rounded to whole ns.
 * Returns 0, or -EINVAL for anything else. */
int nt_parse_duration_ns(const char *s, size_t len, double bare_ns, uint64_t *out_ns);

/* ns as a short duration for a message into buf: "8 ms", "2.5 us", "800 ns". Returns buf. */
const char *nt_fmt_duration(uint64_t ns, char buf[32]);

/* bytes for a message: "100 bytes", "3 KiB", "812 MiB", "3.21 GiB". Returns buf. */
const char *nt_fmt_bytes(uint64_t bytes, char buf[32]);

#endif /* LIBNOISETOOL_UNITS_H */
