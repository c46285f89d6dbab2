/* The lines of /proc/interrupts and /proc/softirqs: a header of CPU columns, then a name, a
 * count per column and (interrupts) a description. Parsed for every column (noisetool detour,
 * meanwhile.c) or summed over a set of CPUs while the file streams (a rank's CPUs,
 * wrappers/cpushare.c). */
#ifndef NOISETOOL_PRIVATE_IRQLINES_H
#define NOISETOOL_PRIVATE_IRQLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NT_IRQ_NAME_BYTES 16
#define NT_IRQ_DESC_BYTES 40

/* The columns of header (its "CPUn" words), their CPUs into col_cpu[0..cap) when col_cpu is
 * not NULL. Returns the number of columns (0 when it is no header). */
size_t nt_irq_header(const char *header, int *col_cpu, size_t cap);

/* One line, changed in place: its name ("LOC", "36", "NET_RX"), its ncols counts into row, and
 * its description (a numbered line's last word, its device; a named line's rest: "Local timer
 * interrupts"; "" for softirqs). false when it is not a line of ncols counts (ERR, MIS, a
 * blank line). */
bool nt_irq_line(char *line, size_t ncols, uint64_t *row, char name[NT_IRQ_NAME_BYTES],
		 char desc[NT_IRQ_DESC_BYTES]);

/* One line summed over some CPUs. */
struct nt_irq_count {
	char name[NT_IRQ_NAME_BYTES];
	char desc[NT_IRQ_DESC_BYTES];
	uint64_t count;
};

/* Stream path and sum each line's counts over the CPUs c with in_set[c] (c < map_len) into
 * out[0..cap), in the file's order: *n lines (the rest left out). Holds one line at a time.
 * Returns 0, -EINVAL (NULL arguments), -ENOMEM, or open's error. */
int nt_irq_read_set(const char *path, const bool *in_set, size_t map_len, struct nt_irq_count *out,
		    size_t cap, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_PRIVATE_IRQLINES_H */
