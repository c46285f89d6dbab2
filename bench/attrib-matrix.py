#!/usr/bin/env python3
"""The attribution matrix's arithmetic (bench/bench-attrib-matrix.sh, tests/mpi/test-attrib-matrix.sh):
from a `noisetool report --json` of a job disturbed on one rank, how much of the delay the tool
gave that rank, and how much of that rank's delay it gave the expected cause, against the
disturbance's ground truth (what the program or the injector measured).

  attrib-matrix.py header
  attrib-matrix.py row CASE REPORT TRUTH CAUSE RANK        one table row
  attrib-matrix.py check CASE REPORT TRUTH CAUSE RANK ALLOWANCE
      its row, then exit 1 with FAIL lines unless RANK has the majority of the job's delay,
      CAUSE is the largest of RANK's causes beyond CPU competition and half or more of its
      delay beyond CPU competition, and CAUSE holds at most TRUTH + ALLOWANCE (in ns, or
      "N%": N % of TRUTH)

  attrib-matrix.py held CASE REPORT CAUSE RANK [SHARE]
      the held-up time (a member held inside the call after the last arrival: the report's
      held_culprits): the job's, RANK's share of it and the share of it in CAUSE, then the
      case's verdict on the held-up and late time together (see held() below); with SHARE
      (a fraction), exit 1 with a FAIL line unless RANK's CAUSE holds at least SHARE of the
      job's held-up time

CAUSE is a key of the report's "causes" objects (preemption_ns, blocked_ns, ...). TRUTH is the
ground truth in ns, or `injected`: what the injector spun on RANK (the report's rank_times), or
`delay`: none of its own (a CPU hog), RANK's delay stands for it.

CPU competition is preemption and steal: other tasks of the machine, or the host, had the CPU.
The kernel measures both directly (run delay, steal), and a loaded machine adds them to any
case: undisturbed, 0.6 s of work took 0.9-2.7 s beside the other jobs of this 2-vCPU VM, with
0.17-1.29 s of delay, 94-99 % preemption; and no disturbance that runs on the CPU (a detour,
extra work) escapes them, however long. The
column "cause %" is the brief's share of all of RANK's delay; "beyond %" the share of its delay
beyond CPU competition, which the check judges.

Issue 34's acceptance reads against the ground truth: at least 90 % of it given to the disturbed
rank, and at least 90 % of that in the true cause. The columns "given %" (RANK's delay, up to
the truth, over the truth) and "in cause %" (CAUSE's time, up to what was given, over what was
given) are those two figures, and "verdict" says whether both reach AIM (90 %). Machine noise on
RANK adds to its delay beyond the truth (the "cause %" column counts it; these two do not), and
CAUSE's time beyond the truth shows as "over ms": what the tool gave the cause more than happened.
"""
import json
import sys

ROW = "{:<16} {:>9} {:>9} {:>7} {:<15} {:>9} {:>8} {:>10} {:>7} {:>7} {:>8} {:>6} {:>7}  {}"
HELD_AIM = 80  # issue 34: % of the held-up time given to the hogged rank as preemption
AIM = 90  # issue 34: % of the ground truth given to the rank, and % of that in the true cause
COMPETITION = ("preemption_ns", "steal_ns")


def split(path, rank, truth):
    """A dict: the report's cause keys (keys), the job's total delay (total: waiting for late
    arrivals and held inside calls), RANK's delay (delay) and causes (causes) there, the share of the job's late arrivals' delay without OS data (no_os), the
    ground truth (truth, see above); times in ns."""
    with open(path) as f:
        rep = json.load(f)
    keys = [c["json"] for c in rep["causes"]]
    att = rep["attribution"]
    # What the ranks lost waiting for late arrivals and held inside calls (doc/attribution.md,
    # "Coverage"): a disturbance that lands while RANK is inside a call holds the others there.
    total = att["total_delay_ns"] + att.get("held_delay_ns", 0)
    mine = {"delay_ns": 0, "causes": {k: 0 for k in keys}}
    for c in rep["culprits"] + rep.get("held_culprits", []):
        if c["rank"] == rank:
            mine["delay_ns"] += c["delay_ns"]
            for k in keys:
                mine["causes"][k] += c["causes"].get(k, 0)
    if truth == "injected":
        truth_ns = next(r["injected_ns"] for r in rep["rank_times"] if r["rank"] == rank)
    elif truth == "delay":
        truth_ns = mine["delay_ns"]
    else:
        truth_ns = int(truth)
    return {"keys": keys, "total": total, "delay": mine["delay_ns"], "causes": mine["causes"],
            "no_os": (att["delay_without_os_data_ns"] / att["total_delay_ns"]
                      if att["total_delay_ns"] else 0), "truth": truth_ns}


def pct(part, whole):
    return 100 * part / whole if whole else 0


def beyond(s, cause):
    """RANK's delay beyond CPU competition, and its causes there (all of them when CAUSE is
    itself CPU competition)."""
    if cause in COMPETITION:
        return s["delay"], s["keys"]
    keys = [k for k in s["keys"] if k not in COMPETITION]
    return s["delay"] - sum(s["causes"][k] for k in COMPETITION), keys


def against_truth(s, cause):
    """The acceptance's two shares (see above), in %, and the cause's time over the truth (ns)."""
    given = min(s["delay"], s["truth"])
    return (pct(given, s["truth"]), pct(min(s["causes"][cause], given), given),
            max(0, s["causes"][cause] - s["truth"]))


def row(case, s, cause):
    c, delay = s["causes"], s["delay"]
    rest = beyond(s, cause)[0]
    given, in_cause, over = against_truth(s, cause)
    others = ", ".join(f"{k[:-3]} {pct(c[k], delay):.0f}" for k in s["keys"]
                       if k != cause and pct(c[k], delay) >= 0.5)
    verdict = "-" if s["truth"] == 0 else "ok" if given >= AIM and in_cause >= AIM else "under"
    print(ROW.format(case, f"{s['truth'] / 1e6:.1f}", f"{s['total'] / 1e6:.1f}",
                     f"{pct(delay, s['total']):.0f}", cause, f"{c[cause] / 1e6:.1f}",
                     f"{given:.0f}", f"{in_cause:.0f}", f"{over / 1e6:.1f}",
                     f"{pct(c[cause], delay):.0f}", f"{pct(c[cause], rest):.0f}",
                     f"{100 * s['no_os']:.0f}", verdict, others or "-"))


def check(case, s, cause, rank, allowance_ns):
    c = s["causes"]
    failed = []
    if not s["delay"] * 2 > s["total"]:
        failed.append(f"rank {rank} has {s['delay'] / 1e6:.1f} of {s['total'] / 1e6:.1f} ms of "
                      "the delay, not the majority")
    rest, keys = beyond(s, cause)
    top = max(keys, key=lambda k: c[k])
    if top != cause or c[cause] * 2 < rest:
        failed.append(f"of rank {rank}'s {rest / 1e6:.1f} ms of delay beyond CPU competition, "
                      f"{cause} has {pct(c[cause], rest):.0f} % and {top} "
                      f"{pct(c[top], rest):.0f} %: {cause} is not the largest and half")
    if c[cause] > s["truth"] + allowance_ns:
        failed.append(f"{cause} {c[cause] / 1e6:.2f} ms, over the ground truth "
                      f"{s['truth'] / 1e6:.2f} ms + {allowance_ns / 1e6:.2f} ms of noise")
    for f in failed:
        print(f"FAIL: {case}: {f}")
    return not failed


def held(case, path, cause, rank, share):
    """The held-up row (see above); False when SHARE is given and not reached. With 2 ranks a
    member preempted inside an allreduce holds nobody there (each contribution is sent on entry):
    it leaves late and arrives late at the next instance, where the tool gives its lateness the
    hold's causes (doc/attribution.md). The case is judged on both together: of the job's delay
    and held-up time, the share given to RANK in CAUSE (aim HELD_AIM %)."""
    with open(path) as f:
        rep = json.load(f)
    att = rep["attribution"]
    total = att.get("held_delay_ns", 0)
    mine = next((c for c in rep.get("held_culprits", []) if c["rank"] == rank),
                {"delay_ns": 0, "causes": {}})
    late = next((c for c in rep["culprits"] if c["rank"] == rank), {"causes": {}})
    c, delay = mine["causes"], mine["delay_ns"]
    both = total + att["total_delay_ns"]
    both_cause = c.get(cause, 0) + late["causes"].get(cause, 0)
    others = ", ".join(f"{k[:-3]} {pct(v, delay):.0f}" for k, v in c.items()
                       if k != cause and pct(v, delay) >= 0.5)
    print(f"{case:<16} held {total / 1e6:9.1f} ms, rank {rank} {pct(delay, total):5.1f} %, "
          f"{cause} {c.get(cause, 0) / 1e6:9.1f} ms = {pct(c.get(cause, 0), total):5.1f} % of "
          f"the held-up time; other causes of the rank's: {others or '-'}")
    print(f"{case:<16} held and late together {both / 1e6:.1f} ms, rank {rank}'s {cause} "
          f"{both_cause / 1e6:.1f} ms = {pct(both_cause, both):.1f} % "
          f"({'ok' if pct(both_cause, both) >= HELD_AIM else 'under'}, aim {HELD_AIM} %)")
    if share is not None and not (total > 0 and c.get(cause, 0) >= share * total):
        print(f"FAIL: {case}: rank {rank}'s {cause} is {pct(c.get(cause, 0), total):.1f} % of "
              f"the {total / 1e6:.1f} ms held up, under {100 * share:.0f} %")
        return False
    return True


def main():
    a = sys.argv[1:]
    if a[:1] == ["header"] and len(a) == 1:
        print(ROW.format("case", "truth ms", "delay ms", "rank %", "expected cause", "cause ms",
                         "given %", "in cause %", "over ms", "cause %", "beyond %", "noOS %",
                         "verdict", "other causes of the rank's delay, %"))
    elif a[:1] in (["row"], ["check"]) and len(a) == (6 if a[0] == "row" else 7):
        s = split(a[2], int(a[5]), a[3])
        row(a[1], s, a[4])
        if a[0] == "check":
            allowance = (s["truth"] * float(a[6][:-1]) / 100 if a[6].endswith("%")
                         else int(a[6]))
            sys.exit(0 if check(a[1], s, a[4], int(a[5]), allowance) else 1)
    elif a[:1] == ["held"] and len(a) in (5, 6):
        ok = held(a[1], a[2], a[3], int(a[4]), float(a[5]) if len(a) == 6 else None)
        sys.exit(0 if ok else 1)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
