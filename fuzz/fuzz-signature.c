/* libFuzzer harness for the noise signature reader (nt_sim_noise_load,
 * libnoisetool/sim-signature.c): every input is a signature file, a `noisetool detour|ftq
 * --json` document or a TSV trace, read through the real entry point from a memory file; what
 * loads is asked for its noise ratio and advanced over a little work, the arithmetic the
 * simulator does with the file's numbers. fuzz/README.md says how to run it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create (the build defines it for every file) */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <noisetool/sim.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the reader: said, then a crash for libFuzzer to keep the input. */
static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-signature: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-signature", MFD_CLOEXEC);
		if (fd < 0)
			broken("memfd_create failed", strerror(errno));
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		broken("writing the memory file failed", strerror(errno));

	struct nt_sim_noise *n;
	if (nt_sim_noise_new(&n) != 0)
		return 0;
	char err[256] = "";
	int rc = nt_sim_noise_load(n, path, err, sizeof err);
	if (rc == -EINVAL && !err[0])
		broken("refused without saying why", NULL);
	for (size_t m = 0; rc > 0 && m < nt_sim_noise_models(n); m++) {
		double ratio = nt_sim_noise_ratio(n, (int)m);
		if (!(ratio >= 0 && ratio < 1))
			broken("a loaded model leaves no time for work", NULL);
	}
	if (rc > 0) {
		for (int sync = 0; sync < 2; sync++) {
			nt_sim_noise_set_sync(n, sync, 7);
			for (uint64_t rank = 0; rank < 3; rank++) {
				uint64_t t = nt_sim_noise_advance(n, rank, 1000000, 10000);
				if (t < 1000000 + 10000)
					broken("noise made work shorter", NULL);
			}
		}
	}
	nt_sim_noise_free(n);
	return 0;
}
