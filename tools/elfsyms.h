/* A module's function symbols (.symtab and .dynsym, read from the ELF file itself), to tell
 * whether an address lies inside a function: addr2line -f names the nearest preceding symbol
 * however far away, which in a stripped program is an unrelated exported one. */
#ifndef TOOLS_ELFSYMS_H
#define TOOLS_ELFSYMS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many bytes of symbol table are read from one module (of .symtab and .dynsym
 * together, 24 bytes a symbol: 2.8 million symbols); a larger table is read in its first part.
 * The largest libraries here have a few hundred thousand symbols. */
#define ELFSYMS_MAX_TABLE_BYTES (64u << 20)

struct elfsyms;

/* The defined, sized function symbols (STT_FUNC, STT_GNU_IFUNC) of the 64-bit little- or
 * native-endian ELF file open as fd, read with pread alone, every offset and size checked
 * against the file's size. 0 with *out set (possibly a table without symbols); -ENOEXEC: not a
 * 64-bit ELF file of this machine's byte order; -EINVAL: its headers are out of range;
 * -ENOMEM; -EIO: a read failed. */
int elfsyms_load(int fd, struct elfsyms **out);

/* Whether the file address addr lies inside the function symbol of t nearest before it (the
 * one addr2line -f names): st_value <= addr < st_value + st_size, of the largest symbol at that
 * st_value. *start (may be NULL) gets the symbol's address. */
bool elfsyms_contains(const struct elfsyms *t, uint64_t addr, uint64_t *start);

/* How many function symbols t holds. */
uint64_t elfsyms_count(const struct elfsyms *t);

void elfsyms_free(struct elfsyms *t);

#ifdef __cplusplus
}
#endif

#endif /* TOOLS_ELFSYMS_H */
