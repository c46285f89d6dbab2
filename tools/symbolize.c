/* addr2line-based symbolization. */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize.h"

/* addr2line wants file addresses: for a PIE or a shared object that is the offset from the load
 * base; for a fixed-address executable (ET_EXEC) add its first loadable segment's address. */
static uint64_t file_address(const char *module, uint64_t offset)
{
	int fd = open(module, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return offset;
	Elf64_Ehdr eh;
	uint64_t addr = offset;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_EXEC) {
		for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
			Elf64_Phdr ph;
			off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);
			if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
				break;
			if (ph.p_type == PT_LOAD) {
				addr = offset + ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	close(fd);
	return addr;
}

/* Run addr2line -f -C -e module addr; fill fn and loc with its two output lines. */
static int run_addr2line(const char *module, uint64_t addr, char *fn, size_t fnsz, char *loc,
			 size_t locsz)
{
	int pfd[2];
	if (pipe(pfd) != 0)
		return -1;
	char hex[32];
	snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)addr);
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		close(pfd[0]);
		execlp("addr2line", "addr2line", "-f", "-C", "-e", module, hex, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	int ok = f && fgets(fn, (int)fnsz, f) && fgets(loc, (int)locsz, f);
	if (f)
		fclose(f);
	else
		close(pfd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	fn[strcspn(fn, "\n")] = '\0';
	loc[strcspn(loc, "\n")] = '\0';
	return 0;
}

int symbolize_addr2line(void *ctx, const char *module, uint64_t offset, char *out, size_t size)
{
	(void)ctx;
	if (!module || !*module)
		return -1;
	char fn[512], loc[512];
	if (run_addr2line(module, file_address(module, offset), fn, sizeof fn, loc, sizeof loc) != 0)
		return -1;
	char *disc = strstr(loc, " (discriminator");
	if (disc)
		*disc = '\0';
	if (loc[0] && strncmp(loc, "??", 2) != 0 && !strstr(loc, ":?") && !strstr(loc, ":0")) {
		const char *base = strrchr(loc, '/') ? strrchr(loc, '/') + 1 : loc;
		snprintf(out, size, "%s", base);
		return 0;
	}
	if (fn[0] && strcmp(fn, "??") != 0) {
		snprintf(out, size, "%s", fn);
		return 0;
	}
	return -1;
}
