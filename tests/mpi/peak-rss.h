/* Peak resident set size in KiB (VmHWM): what the process ever held, MPI_Finalize included. For
 * the test programs that report it. */
#ifndef TESTS_MPI_PEAK_RSS_H
#define TESTS_MPI_PEAK_RSS_H

#include <stdio.h>

static long peak_rss_kb(void)
{
	long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

#endif /* TESTS_MPI_PEAK_RSS_H */
