/* Symbolization of (module, offset) to "file.c:line" or "function+0xoff" with addr2line
 * (binutils), run after the job, never inside it. */
#ifndef TOOLS_SYMBOLIZE_H
#define TOOLS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* nt_symbolize_fn for nt_report_build; ctx unused. Returns 0 when it found a name. */
int symbolize_addr2line(void *ctx, const char *module, uint64_t offset, char *out, size_t size);

#endif /* TOOLS_SYMBOLIZE_H */
