#!/usr/bin/env python3
"""Checks of a `noisetool report --json` against the ground truth the tool itself records: what
the injector spun on each rank, the ranks' MPI time, the log's own clock-error bound. Every check
holds on a correct tool however loaded the machine is; each failed one prints a FAIL line.

  check-attribution.py inject REPORT INJECTED_RANK   noise injected on one rank
  check-attribution.py hog REPORT HOGGED_RANK       a CPU hog beside one rank
  check-attribution.py clock REPORT                  clocks skewed by NOISETOOL_TEST_CLOCK
"""
import json
import sys

CAUSES = []  # the report's own list of causes (NT_CAUSES): its "causes"' JSON keys
failed = []


def check(ok, what):
    if not ok:
        failed.append(what)
        print("FAIL: " + what)


def causes_add_up(rep):
    """Every late instance's and every culprit's causes add up to its delay (the split rounds
    each cause down to whole ns)."""
    for where, items in (("instance", rep["late_instances"]), ("culprit", rep["culprits"])):
        for x in items:
            total = sum(x["causes"][k] for k in CAUSES)
            check(abs(total - x["delay_ns"]) <= len(CAUSES) * x.get("instances", 1),
                  f"{where} {x.get('seq', x.get('rank'))}: causes add up to {total} ns, "
                  f"delay {x['delay_ns']} ns")


def inject(rep, target):
    ranks = {r["rank"]: r for r in rep["rank_times"]}
    culprits = {c["rank"]: c for c in rep["culprits"]}
    spun = ranks[target]["injected_ns"]
    mpi_share = ranks[target]["mpi_ns"] / ranks[target]["wall_ns"]
    blamed = culprits.get(target, {"causes": {"injected_ns": 0}})["causes"]["injected_ns"]
    print(f"rank {target} spun {spun / 1e6:.1f} ms in {ranks[target]['injected_count']} "
          f"detours, {100 * mpi_share:.0f} % of its time in MPI; blamed on it as injected: "
          f"{blamed / 1e6:.1f} ms")
    check(rep["attribution"]["instances_late"] > 0, "no late instance")
    check(ranks[target]["injected_count"] > 0 and spun > 0, f"rank {target}: nothing injected")
    for r, k in ranks.items():
        if r != target:
            check(k["injected_ns"] == 0 and k["injected_count"] == 0,
                  f"rank {r} injected {k['injected_ns']} ns without being a target")
    # The injector ran on the target only: no other rank is ever blamed for injected time.
    for r, c in culprits.items():
        if r != target:
            check(c["causes"]["injected_ns"] == 0,
                  f"rank {r} is blamed for {c['causes']['injected_ns']} ns of injected time")
    for x in rep["late_instances"]:
        if x["last_rank"] != target:
            check(x["causes"]["injected_ns"] == 0,
                  f"instance {x['seq']}: rank {x['last_rank']} blamed for injected time")
    # Never more than was spun; and the detours that fell outside MPI calls (where they delay
    # an arrival; inside a call they only hold everyone's exit) are blamed at least half:
    # a detour overlapping another rank's lateness delays the job by less than its length.
    check(blamed <= spun, f"blamed {blamed} ns of injected time, more than the {spun} ns spun")
    want = 0.5 * spun * (1 - mpi_share)
    check(blamed >= want, f"blamed {blamed / 1e6:.1f} ms of injected time, under half of the "
          f"{spun * (1 - mpi_share) / 1e6:.1f} ms spun outside MPI")
    causes_add_up(rep)


def hog(rep, hogged):
    """A CPU hog shares the hogged rank's CPU: that rank imposes delay (it runs at most half
    the time), and its own counters explain it as preemption. What the other ranks met is
    whatever else ran on their CPUs (the host, daemons, a load beside the suite): it is
    reported as what it was, only never as injected."""
    check(rep["attribution"]["instances_late"] > 0, "no late instance")
    for c in rep["culprits"]:
        mine = c["causes"]
        print(f"rank {c['rank']}: {c['delay_ns'] / 1e6:.1f} ms of delay in {c['instances']} "
              "instances, " + ", ".join(f"{k[:-3]} {100 * mine[k] / c['delay_ns']:.0f} %"
                                        for k in CAUSES if mine[k]))
        check(mine["injected_ns"] == 0, f"rank {c['rank']}: injected time without an injector")
    c = next((c for c in rep["culprits"] if c["rank"] == hogged), None)
    check(c is not None and c["delay_ns"] >= 1000000,
          f"rank {hogged}, beside a hog, imposed under 1 ms of delay")
    # Judged on the instances the tool measured (os_data): one without a probe window is
    # unexplained for want of data, which says how much the read budget let it see, not what
    # the cause was (reads beside a hog are dear: the budget widens the grid of reads).
    mine = [x for x in rep["late_instances"] if x["last_rank"] == hogged]
    seen = [x for x in mine if x["os_data"]]
    delay = sum(x["delay_ns"] for x in seen)
    preempted = sum(x["causes"]["preemption_ns"] for x in seen)
    print(f"rank {hogged}: {len(seen)} of its {len(mine)} late instances listed have OS data: "
          f"preemption {preempted / 1e6:.1f} of their {delay / 1e6:.1f} ms")
    check(len(seen) > 0, f"rank {hogged}: none of its late instances has OS data")
    check(preempted >= 0.5 * delay,
          f"rank {hogged}: preemption {preempted} ns of {delay} ns of delay measured")
    causes_add_up(rep)


def clock(rep):
    sync = rep["clock_sync"]
    bound, err = sync["max_error_ns"], sync.get("test_error_ns")
    print(f"largest error of a corrected time {err} ns, stated bound {bound} ns")
    # The truth is known (the skew was injected); the error stays within the log's own bound
    # (the bound and the error are each rounded up to whole ns).
    check(err is not None, "no test_error_ns: the skew was not applied")
    if err is not None:
        check(err <= bound + 2, f"error {err} ns over the stated bound {bound} ns")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        rep = json.load(f)
    CAUSES[:] = [c["json"] for c in rep["causes"]]
    if mode == "inject":
        inject(rep, int(sys.argv[3]))
    elif mode == "hog":
        hog(rep, int(sys.argv[3]))
    elif mode == "clock":
        clock(rep)
    else:
        sys.exit(__doc__)
    if failed:  # what a failure needs for a diagnosis
        print("attribution: " + json.dumps(rep["attribution"]))
        for r in rep["rank_times"]:
            print("rank_times: " + json.dumps(r))
        for x in rep["late_instances"][:5]:
            print("late: " + json.dumps(x))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
