/* A module's separate debug files, found as BFD finds them (binutils bfd/opncls.c,
 * find_separate_debug_file and the build-id lookups) and checked with stat() alone. Measured
 * here (binutils 2.40): a stripped program whose .gnu_debuglink names a FIFO beside it kept
 * `addr2line -e prog` blocked in open() until it was killed. */
#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuglink.h"

enum {
	MAX_NAME_BYTES = 4096, /* of a section name table, a link, a note */
	MAX_BUILD_ID = DEBUGLINK_MAX_BUILD_ID,
};

/* What a module names. */
struct links {
	char debuglink[MAX_NAME_BYTES];  /* .gnu_debuglink's file name, "" for none */
	char altlink[MAX_NAME_BYTES];    /* .gnu_debugaltlink's path, "" for none */
	unsigned char build_id[MAX_BUILD_ID], alt_build_id[MAX_BUILD_ID];
	size_t build_id_len, alt_build_id_len;
	bool debug_info;                 /* a .debug_info section with contents */
};

static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return off <= (uint64_t)INT64_MAX - n && pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* A path BFD may open is safe when it is not there or is a regular file. A path too long to
 * build cannot be opened either. */
static bool safe(const char *a, const char *b, const char *c)
{
	char path[3 * PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s%s%s", a, b, c) >= sizeof path)
		return true;
	struct stat st;
	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

bool debuglink_build_id_path(const char *dir, const unsigned char *id, size_t len, char *out,
			     size_t size)
{
	if (len < 2 || len > MAX_BUILD_ID)
		return false;
	char hex[2 * MAX_BUILD_ID + 16];
	size_t n = (size_t)snprintf(hex, sizeof hex, "/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < len; i++)
		n += (size_t)snprintf(hex + n, sizeof hex - n, "%02x", id[i]);
	return (size_t)snprintf(out, size, "%s%s.debug", dir, hex) < size;
}

/* The build-id path: DEBUGLINK_GLOBAL_DIR/.build-id/xx/rest.debug. */
static bool safe_build_id(const unsigned char *id, size_t len)
{
	char path[PATH_MAX];
	if (!debuglink_build_id_path(DEBUGLINK_GLOBAL_DIR, id, len, path, sizeof path))
		return true;
	return safe(path, "", "");
}

/* A section's contents as a NUL-terminated string in out (false when it is larger or does not
 * fit the file); what follows the NUL is left in out for the caller (the alt build ID). */
static bool section_bytes(int fd, const Elf64_Shdr *sh, char *out, size_t size, size_t *len)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0 || sh->sh_size >= size ||
	    !read_at(fd, out, (size_t)sh->sh_size, sh->sh_offset))
		return false;
	out[sh->sh_size] = '\0';
	*len = (size_t)sh->sh_size;
	return true;
}

/* The build ID in a GNU build-id note section. */
static void note_build_id(const char *note, size_t len, unsigned char *id, size_t *id_len)
{
	Elf64_Nhdr nh;
	if (len < sizeof nh)
		return;
	memcpy(&nh, note, sizeof nh);
	size_t name = (nh.n_namesz + 3) & ~(size_t)3;
	if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || memcmp(note + sizeof nh, "GNU", 4) ||
	    nh.n_descsz > MAX_BUILD_ID || sizeof nh + name + nh.n_descsz > len)
		return;
	memcpy(id, note + sizeof nh + name, nh.n_descsz);
	*id_len = nh.n_descsz;
}

/* What the module open as fd names: 0, with *out filled; 1 when it is not 64-bit ELF (nothing
 * known of it); -1 when it is, but its section headers cannot be read (linked programs and
 * libraries have a few dozen sections; none of them here has more than 65,535). */
static int read_links(int fd, struct links *out)
{
	memset(out, 0, sizeof *out);
	Elf64_Ehdr eh;
	if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 1;
	if (eh.e_shnum == 0 && eh.e_shoff == 0)
		return 0; /* no section headers at all (sstrip): nothing to follow */
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
		return -1;
	Elf64_Shdr strtab;
	char names[MAX_NAME_BYTES], buf[MAX_NAME_BYTES];
	size_t names_len, len;
	if (!read_at(fd, &strtab, sizeof strtab, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof strtab))
		return -1;
	/* Section names: a long table is read in its first MAX_NAME_BYTES (the debug sections'
	 * names come early in what linkers and objcopy write; a name past it is not seen). */
	if (strtab.sh_size >= sizeof names)
		strtab.sh_size = sizeof names - 1;
	if (!section_bytes(fd, &strtab, names, sizeof names, &names_len))
		return -1;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh))
			return -1;
		if (sh.sh_name >= names_len)
			continue;
		const char *name = names + sh.sh_name;
		if (!strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS && sh.sh_size)
			out->debug_info = true;
		if (!strcmp(name, ".gnu_debuglink") && section_bytes(fd, &sh, buf, sizeof buf, &len)) {
			memcpy(out->debuglink, buf, strlen(buf) + 1);
		} else if (!strcmp(name, ".gnu_debugaltlink") &&
			   section_bytes(fd, &sh, buf, sizeof buf, &len)) {
			size_t n = strlen(buf);
			memcpy(out->altlink, buf, n + 1);
			size_t id = n < len ? len - n - 1 : 0;
			if (id > MAX_BUILD_ID)
				id = MAX_BUILD_ID;
			memcpy(out->alt_build_id, buf + n + 1, id);
			out->alt_build_id_len = id;
		} else if (!strcmp(name, ".note.gnu.build-id") &&
			   section_bytes(fd, &sh, buf, sizeof buf, &len)) {
			note_build_id(buf, len, out->build_id, &out->build_id_len);
		}
	}
	return 0;
}

/* name looked up as BFD does for a module in dir (with its trailing '/'), and in the global
 * debug directory under it. */
static bool safe_in(const char *dir, const char *name)
{
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof sub, "%s.debug/", dir);
	return safe(dir, "", name) && safe(sub, "", name) &&
	       safe(DEBUGLINK_GLOBAL_DIR, dir[0] == '/' ? dir : "/", name) &&
	       safe(DEBUGLINK_GLOBAL_DIR "/", dir, name);
}

/* The directory of path with its trailing '/' ("" for a bare name). */
static void dir_of(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) + 1 : 0;
	if (n >= size)
		n = 0;
	memcpy(out, path, n);
	out[n] = '\0';
}

bool debuglink_files_safe(int fd, const char *path)
{
	struct links l;
	int rc = read_links(fd, &l);
	if (rc != 0)
		return rc > 0;
	char dir[PATH_MAX + 1], canon_dir[PATH_MAX + 1] = "";
	dir_of(path, dir, sizeof dir);
	char *canon = realpath(path, NULL);
	if (canon) {
		dir_of(canon, canon_dir, sizeof canon_dir);
		free(canon);
	}
	bool ok = safe_build_id(l.build_id, l.build_id_len) &&
		  safe_build_id(l.alt_build_id, l.alt_build_id_len);
	for (int k = 0; k < 2 && ok; k++) {
		const char *name = k == 0 ? l.debuglink : l.altlink;
		if (!name[0])
			continue;
		if (name[0] == '/') /* an absolute alt link is opened as it is */
			ok = safe(name, "", "") && safe(DEBUGLINK_GLOBAL_DIR, name, "");
		else
			ok = safe_in(dir, name) && (!canon_dir[0] || safe_in(canon_dir, name));
	}
	return ok;
}

int debuglink_build_id(int fd, unsigned char *id, bool *debug_info)
{
	struct links l;
	*debug_info = false;
	if (read_links(fd, &l) != 0)
		return -1;
	memcpy(id, l.build_id, l.build_id_len);
	*debug_info = l.debug_info;
	return (int)l.build_id_len;
}
