/* Durations read from options and written into messages, sizes written into messages
 * (units.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

const char *nt_fmt_duration(uint64_t ns, char buf[32])
{
	if (ns >= 1000000000u)
		snprintf(buf, 32, "%g s", (double)ns / 1e9);
	else if (ns >= 1000000u)
		snprintf(buf, 32, "%g ms", (double)ns / 1e6);
	else if (ns >= 1000u)
		snprintf(buf, 32, "%g us", (double)ns / 1e3);
	else
		snprintf(buf, 32, "%llu ns", (unsigned long long)ns);
	return buf;
}

int nt_parse_duration_ns(const char *s, size_t len, double bare_ns, uint64_t *out_ns)
{
	char buf[64];
	if (!s || !out_ns || len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v >= 0) || buf[0] == '-' || isspace((unsigned char)buf[0]))
		return -EINVAL;
	double scale;
	if (strcmp(end, "ns") == 0)
		scale = 1;
	else if (strcmp(end, "us") == 0)
		scale = 1e3;
	else if (*end == 0)
		scale = bare_ns;
	else if (strcmp(end, "ms") == 0)
		scale = 1e6;
	else if (strcmp(end, "s") == 0)
		scale = 1e9;
	else
		return -EINVAL;
	if (v * scale > 3600e9)
		return -EINVAL;
	*out_ns = (uint64_t)(v * scale + 0.5);
	return 0;
}

const char *nt_fmt_bytes(uint64_t bytes, char buf[32])
{
	if (bytes >= (UINT64_C(1) << 30))
		snprintf(buf, 32, "%.2f GiB", (double)bytes / (1 << 30));
	else if (bytes >= (UINT64_C(1) << 20))
		snprintf(buf, 32, "%.0f MiB", (double)bytes / (1 << 20));
	else if (bytes >= 1024)
		snprintf(buf, 32, "%.0f KiB", (double)bytes / 1024);
	else
		snprintf(buf, 32, "%u bytes", (unsigned)bytes);
	return buf;
}
