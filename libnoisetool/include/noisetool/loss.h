/* What a rank of an MPI job can lose, by kind: the log counts each (all of them since version
 * 3), the report and the job's stderr name them in the same words. */
#ifndef NOISETOOL_LOSS_H
#define NOISETOOL_LOSS_H

#include <stddef.h>
#include <stdint.h>

#include <noisetool/common.h>
#include <noisetool/ntlog.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nt_loss {
	NT_LOSS_MERGED_CALLS, /* calls that found the site table full: counted and timed at their
			       * function's merged site, their own site unknown */
	NT_LOSS_RECORDS,      /* records dropped: the record arena was full */
	NT_LOSS_UNTIMED,      /* nonblocking or persistent collective instances neither timed nor
			       * counted: the table of outstanding requests was full */
	NT_LOSS_UNREGISTERED, /* persistent collectives none of whose starts was timed or
			       * counted: the table of persistent requests was full */
	NT_LOSS_UNKNOWN_COMM, /* records not kept: their communicator had no id */
	NT_LOSS_COUNT,
};

/* How many losses of kind rank counts (0 for a kind its log's version does not have). */
NT_API uint64_t nt_loss_count(const struct nt_log_rank *rank, enum nt_loss kind);

/* The kind's name in JSON and in the log's spec: "dropped_calls", "dropped_records",
 * "untimed_instances", "unregistered_persistent", "unknown_comm_records"; "?" for no kind. */
NT_API const char *nt_loss_key(enum nt_loss kind);

/* n losses of kind as a sentence without a final period, e.g. "3 records were dropped (the
 * record arena was full; raise NOISETOOL_MEM)", into buf (truncated to size, always
 * terminated when size > 0). Returns the length it needed, as snprintf. */
NT_API int nt_loss_describe(enum nt_loss kind, uint64_t n, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* NOISETOOL_LOSS_H */
