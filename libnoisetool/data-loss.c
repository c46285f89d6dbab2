/* What a rank can lose of its measurement, by kind (noisetool/loss.h): the counts a log's rank
 * keeps, their keys and their wording. */
#include <stdio.h>

#include <noisetool/loss.h>

uint64_t nt_loss_count(const struct nt_log_rank *rank, enum nt_loss kind)
{
	if (!rank)
		return 0;
	switch (kind) {
	case NT_LOSS_MERGED_CALLS:
		return rank->dropped;
	case NT_LOSS_RECORDS:
		return rank->dropped_records;
	case NT_LOSS_UNTIMED:
		return rank->untimed_instances;
	case NT_LOSS_UNREGISTERED:
		return rank->unregistered_persistent;
	case NT_LOSS_UNKNOWN_COMM:
		return rank->unknown_comm_records;
	default:
		return 0;
	}
}

const char *nt_loss_key(enum nt_loss kind)
{
	static const char *const keys[NT_LOSS_COUNT] = {
		"dropped_calls", "dropped_records", "untimed_instances", "unregistered_persistent",
		"unknown_comm_records",
	};
	return (unsigned)kind < NT_LOSS_COUNT ? keys[kind] : "?";
}

int nt_loss_describe(enum nt_loss kind, uint64_t n, char *buf, size_t size)
{
	/* "N what (why)": what was lost, for one and for several; why, and what to do. */
	static const struct {
		const char *one, *many, *why;
	} text[NT_LOSS_COUNT] = {
		[NT_LOSS_MERGED_CALLS] = { "call found the site table full",
					   "calls found the site table full",
					   "counted at the function's merged site; raise NOISETOOL_MEM" },
		[NT_LOSS_RECORDS] = { "record was dropped", "records were dropped",
				      "the record arena was full; raise NOISETOOL_MEM" },
		[NT_LOSS_UNTIMED] = { "nonblocking or persistent collective instance was not timed",
				      "nonblocking or persistent collective instances were not timed",
				      "the table of outstanding requests was full; missing from their "
				      "call sites' counts and times; raise NOISETOOL_MEM" },
		[NT_LOSS_UNREGISTERED] = { "persistent collective was not registered",
					   "persistent collectives were not registered",
					   "the table of persistent requests was full; their starts "
					   "were neither timed nor counted; raise NOISETOOL_MEM" },
		[NT_LOSS_UNKNOWN_COMM] = { "record was not kept", "records were not kept",
					   "the communicator had no id: made by spawn or "
					   "connect/accept, which the tool does not see, or the "
					   "communicator table was full; raise NOISETOOL_MEM" },
	};
	if ((unsigned)kind >= NT_LOSS_COUNT)
		return snprintf(buf, size, "%llu losses of an unknown kind", (unsigned long long)n);
	return snprintf(buf, size, "%llu %s (%s)", (unsigned long long)n,
			n == 1 ? text[kind].one : text[kind].many, text[kind].why);
}
