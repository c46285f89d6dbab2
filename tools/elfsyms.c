/* The address ranges of a module's function symbols, read from its section headers, .symtab
 * and .dynsym with pread and kept sorted: the report asks whether a call site lies inside a
 * function before it takes addr2line's function name. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsyms.h"

enum {
	MAX_SECTIONS = 65535, /* e_shnum's range without the extended numbering */
	SYMS_PER_READ = 512, /* symbols read at once: 12 KiB */
};

struct range {
	uint64_t start, size;
};

struct elfsyms {
	struct range *r; /* sorted by start; one entry per start, the largest size */
	size_t n;
};

static bool read_at(int fd, void *buf, size_t n, uint64_t off, uint64_t file_size)
{
	if (off > file_size || n > file_size - off)
		return false;
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0; /* largest first */
}

/* Append the function symbols of the symbol table section sh to t, reading at most *budget
 * bytes of it (lowered by what was read). 0, -ENOMEM, -EIO. */
static int add_table(struct elfsyms *t, size_t *cap, int fd, const Elf64_Shdr *sh,
		     uint64_t file_size, uint64_t *budget)
{
	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_offset > file_size)
		return 0;
	uint64_t bytes = sh->sh_size;
	if (bytes > file_size - sh->sh_offset)
		bytes = file_size - sh->sh_offset;
	if (bytes > *budget)
		bytes = *budget;
	*budget -= bytes;
	uint64_t nsyms = bytes / sizeof(Elf64_Sym);
	Elf64_Sym buf[SYMS_PER_READ];
	for (uint64_t i = 0; i < nsyms; i += SYMS_PER_READ) {
		size_t k = nsyms - i < SYMS_PER_READ ? (size_t)(nsyms - i) : SYMS_PER_READ;
		if (!read_at(fd, buf, k * sizeof *buf, sh->sh_offset + i * sizeof *buf, file_size))
			return -EIO;
		for (size_t j = 0; j < k; j++) {
			const Elf64_Sym *s = &buf[j];
			unsigned type = ELF64_ST_TYPE(s->st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
			    s->st_size == 0 || s->st_value > UINT64_MAX - s->st_size)
				continue;
			if (t->n == *cap) {
				size_t more = *cap ? 2 * *cap : 1024;
				struct range *r = realloc(t->r, more * sizeof *r);
				if (!r)
					return -ENOMEM;
				t->r = r;
				*cap = more;
			}
			t->r[t->n++] = (struct range){ s->st_value, s->st_size };
		}
	}
	return 0;
}

int elfsyms_load(int fd, struct elfsyms **out)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -EIO;
	uint64_t file_size = (uint64_t)st.st_size;
	Elf64_Ehdr eh;
	if (!read_at(fd, &eh, sizeof eh, 0, file_size) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									     : ELFDATA2MSB))
		return -ENOEXEC;
	struct elfsyms *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	int rc = 0;
	size_t cap = 0;
	uint64_t budget = ELFSYMS_MAX_TABLE_BYTES;
	if (eh.e_shnum == 0 && eh.e_shoff == 0)
		goto done; /* no section headers at all (sstrip): no symbols */
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shoff > file_size || (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > file_size - eh.e_shoff) {
		rc = -EINVAL;
		goto done;
	}
	/* .symtab first: in a program that has one it holds the static functions too. */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (unsigned i = 0; i < eh.e_shnum && i < MAX_SECTIONS && rc == 0; i++) {
			Elf64_Shdr sh;
			if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh, file_size)) {
				rc = -EIO;
				break;
			}
			if (sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				rc = add_table(t, &cap, fd, &sh, file_size, &budget);
		}
	}
	if (rc == 0 && t->n) {
		qsort(t->r, t->n, sizeof *t->r, by_start);
		size_t w = 0; /* one entry per start: the largest, sorted first */
		for (size_t i = 0; i < t->n; i++)
			if (w == 0 || t->r[w - 1].start != t->r[i].start)
				t->r[w++] = t->r[i];
		t->n = w;
	}
done:
	if (rc) {
		elfsyms_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

bool elfsyms_contains(const struct elfsyms *t, uint64_t addr, uint64_t *start)
{
	if (!t || !t->n || addr < t->r[0].start)
		return false;
	size_t lo = 0, hi = t->n; /* the last entry with start <= addr: lo */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->r[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* The nearest preceding symbol alone, the one addr2line names: an address past its end
	 * but inside an enclosing one (a symbol for the middle of a function) gets no name rather
	 * than the inner symbol's. */
	if (addr - t->r[lo].start >= t->r[lo].size)
		return false;
	if (start)
		*start = t->r[lo].start;
	return true;
}

uint64_t elfsyms_count(const struct elfsyms *t)
{
	return t ? t->n : 0;
}

void elfsyms_free(struct elfsyms *t)
{
	if (!t)
		return;
	free(t->r);
	free(t);
}
