/* Which MPI a job runs on (mpi-pick.h): by its launcher, else by what its program links. */
#include "mpi-pick.h"

#include "nt-config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum mpi_kind mpi_kind_named(const char *name)
{
	if (!strcmp(name, "mpich"))
		return MPI_KIND_MPICH;
	if (!strcmp(name, "openmpi") || !strcmp(name, "ompi"))
		return MPI_KIND_OMPI;
	return MPI_KIND_UNKNOWN;
}

const char *mpi_kind_title(enum mpi_kind kind)
{
	return kind == MPI_KIND_MPICH ? "MPICH" : kind == MPI_KIND_OMPI ? "Open MPI" : "unknown";
}

const char *mpi_kind_lib(enum mpi_kind kind)
{
	return kind == MPI_KIND_MPICH ? "mpich" : kind == MPI_KIND_OMPI ? "ompi" : "";
}

/* name through PATH (as execvp finds it) into out; false when no such executable file. */
static bool which(const char *name, char *out, size_t size)
{
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*name)
		return false;
	while (*path) {
		size_t len = strcspn(path, ":");
		if ((int)snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", name) < (int)size &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/* A launcher's file name (after symbolic links: /usr/bin/mpiexec -> /etc/alternatives/mpiexec
 * -> orterun). */
static enum mpi_kind launcher_kind(const char *base)
{
	static const char *const mpich[] = { "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
					     "mpiexec.gforker", NULL };
	static const char *const ompi[] = { "orterun", "mpirun.openmpi", "mpiexec.openmpi",
					    "prterun", "oshrun", NULL };
	for (const char *const *p = mpich; *p; p++)
		if (!strcmp(base, *p))
			return MPI_KIND_MPICH;
	for (const char *const *p = ompi; *p; p++)
		if (!strcmp(base, *p))
			return MPI_KIND_OMPI;
	return MPI_KIND_UNKNOWN;
}

/* A DT_NEEDED name's MPI: libmpich* and libmpi.so.12 (MPICH's ABI, also Intel MPI's) or
 * Open MPI's libmpi.so.4x and its Fortran libraries. */
static enum mpi_kind needed_kind(const char *lib)
{
	if (!strncmp(lib, "libmpich", 8) || !strncmp(lib, "libmpifort.so.12", 16) ||
	    !strcmp(lib, "libmpi.so.12"))
		return MPI_KIND_MPICH;
	if (!strncmp(lib, "libmpi.so.4", 11) || !strncmp(lib, "libmpi_mpifh.so", 15) ||
	    !strncmp(lib, "libmpi_usempi", 13))
		return MPI_KIND_OMPI;
	return MPI_KIND_UNKNOWN;
}

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

/* The MPI an ELF file was linked with, from its dynamic section's DT_NEEDED entries; the
 * library's name into lib. Not an ELF file, or no MPI: MPI_KIND_UNKNOWN. */
static enum mpi_kind elf_mpi(const char *path, char *lib, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MPI_KIND_UNKNOWN;
	enum mpi_kind kind = MPI_KIND_UNKNOWN;
	Elf64_Ehdr eh;
	if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && kind == MPI_KIND_UNKNOWN; i++) {
		Elf64_Shdr dyn, str;
		if (!read_at(fd, &dyn, sizeof dyn, (off_t)(eh.e_shoff + i * sizeof dyn)))
			break;
		if (dyn.sh_type != SHT_DYNAMIC || dyn.sh_link >= eh.e_shnum ||
		    !read_at(fd, &str, sizeof str, (off_t)(eh.e_shoff + dyn.sh_link * sizeof str)))
			continue;
		for (Elf64_Xword off = 0; off + sizeof(Elf64_Dyn) <= dyn.sh_size; off += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;
			if (!read_at(fd, &d, sizeof d, (off_t)(dyn.sh_offset + off)) || d.d_tag == DT_NULL)
				break;
			char name[64] = "";
			if (d.d_tag != DT_NEEDED || d.d_un.d_val >= str.sh_size ||
			    pread(fd, name, sizeof name - 1, (off_t)(str.sh_offset + d.d_un.d_val)) <= 0)
				continue;
			name[sizeof name - 1] = '\0';
			if ((kind = needed_kind(name)) != MPI_KIND_UNKNOWN) {
				snprintf(lib, size, "%s", name);
				break;
			}
		}
	}
out:
	close(fd);
	return kind;
}

void mpi_pick(char *const *job, struct mpi_pick *out)
{
	*out = (struct mpi_pick){ .kind = MPI_KIND_UNKNOWN };
	char path[PATH_MAX], real[PATH_MAX], lib[64];
	if (job[0] && which(job[0], path, sizeof path) && realpath(path, real)) {
		const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
		out->kind = launcher_kind(base);
		if (out->kind != MPI_KIND_UNKNOWN) {
			out->ompi_launcher = out->kind == MPI_KIND_OMPI;
			snprintf(out->why, sizeof out->why, "the launcher %s is %s's", job[0],
				 mpi_kind_title(out->kind));
			return;
		}
	}
	for (char *const *a = job; *a; a++) {
		if (**a == '-' || !which(*a, path, sizeof path))
			continue;
		out->kind = elf_mpi(path, lib, sizeof lib);
		if (out->kind != MPI_KIND_UNKNOWN) {
			snprintf(out->why, sizeof out->why, "%s is linked with %s", *a, lib);
			return;
		}
	}
}

int mpi_library(enum mpi_kind kind, char *out, size_t size)
{
	char self[PATH_MAX / 2];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			/* The build tree's library, named without "tools/.." (it is printed) */
			char dir[PATH_MAX / 2 + 16], real[PATH_MAX];
			snprintf(dir, sizeof dir, "%s/../wrappers", self);
			snprintf(out, size, "%s/libnoisetool-%s.so", realpath(dir, real) ? real : dir,
				 mpi_kind_lib(kind));
			if (access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, size, "%s/libnoisetool-%s.so", NT_LIBDIR, mpi_kind_lib(kind));
	return access(out, R_OK) == 0 ? 0 : -ENOENT;
}
