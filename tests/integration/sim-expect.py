#!/usr/bin/env python3
# What noisetool simulate must make of signature files (doc/simulate.md), worked out here on its
# own: each file's node models, whether they leave time for work, and when work W ends on a rank
# under them: exactly for combs and traces, within bounds when a model draws Poisson detours.
#
#   sim-expect.py variant IN.json OUT.json combs|zero|rare|legacy   a signature with parts taken
#                                                             out (legacy: only "other")
#   sim-expect.py finish W RANKS NOISY FILE...               {"feasible", "why", "exact", "lo",
#                                                             "hi", "rare_rate_hz", "rare_ratio"}
#   sim-expect.py check ITERATIONS COMPUTE_US RANKS RC ERR RUN.json AGAIN.json FILE...
#   sim-expect.py quiet-first W IN.json OUT.json | quiet-first W TRACE,TRACE...
# for a --sync barrier loop of RANKS ranks with free messages (--loggp 0,0,0,0): RANKS ranks
# computing W ns once, or one rank in any number of pieces adding up to W, end when the last
# rank's work does.
import json
import math
import sys


def llround(x):
    r = math.floor(x)
    return r + 1 if x - r >= 0.5 else r


class Model:
    def __init__(self):
        self.ratio, self.why = 0.0, None
        self.intervals = []   # (start, end, repeat every) of combs and traces; repeat 0: once
        self.rare = []        # (rate_hz, [durations])

    def push(self, ratio, why):
        # nt_sim_noise's push_source: the model's noise ratio stays below 1
        if not ratio >= 0 or self.ratio + ratio >= 1:
            self.why = self.why or why
            return False
        self.ratio += ratio
        return True


def json_models(doc):
    models = []
    for cpu in doc["cpus"]:
        m = Model()
        elapsed = cpu["elapsed_ns"]
        if "other" in cpu:   # the measured model (sim-signature.c): refused only without time for work
            if cpu["total_ns"] >= elapsed:
                m.why = "leave no time for work"
            elif cpu["total_ns"] > 0:
                m.rare.append((cpu["detour_count"] / (elapsed * 1e-9), [cpu["max_ns"]]))
            models.append(m)
            continue
        periodic_ns = 0.0
        for c in cpu["periodic"]:
            # a phase on this CPU's axis, which starts start_offset_ns into the run's
            f, typ = c["freq_hz"], c["typical_ns"]
            ph = c["phase_ns"] + cpu.get("start_offset_ns", 0)
            if "count" in c:   # the members' rate when they fill only some teeth
                members = c["count"]
                if members / (elapsed * 1e-9) < f:
                    f = members / (elapsed * 1e-9)
                periodic_ns += members * typ
            dur = llround(typ)
            if dur == 0 or f <= 0:
                continue
            period = 1e9 / f
            phase = int(math.fmod(ph, period))
            if phase >= llround(period):
                phase = 0
            p = llround(period)
            if period > 1e15 or period < 2 or dur >= p or phase >= p:
                m.why = m.why or "100 %"
                continue
            if m.push(dur / p, "100 %"):
                m.intervals.append((phase - p, phase - p + dur, p))
        r = cpu["rare_long"]
        count, thr, longest = r["count"], r["threshold_ns"], r["longest"]
        if count >= 1:
            total = cpu.get("total_ns", -1)
            durs = [llround(x["duration_ns"]) for x in longest] or [llround(thr)]
            split = longest and count > len(longest) and total >= 0
            listed = len(longest) if split else count
            shortest, listed_ns = float(durs[0]), 0.0
            for x in longest:
                shortest = min(shortest, float(llround(x["duration_ns"])))
                listed_ns += float(llround(x["duration_ns"]))
            sources = [(listed / (elapsed * 1e-9), durs)]
            if listed < count:
                each = (total - periodic_ns - listed_ns) / (count - listed)
                each = min(max(each, max(thr, 1)), shortest)
                sources.append(((count - listed) / (elapsed * 1e-9), [llround(each)]))
            for rate, d in sources:
                s = 0.0
                for x in d:
                    s += float(x)
                if m.push(rate * s / len(d) * 1e-9, "leave no time for work"):
                    m.rare.append((rate, d))
        models.append(m)
    return models


def tsv_model(text):
    m = Model()
    det = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            s, d = line.split()
            det.append((int(s), int(d)))
    if not det:
        m.why = "no detours in the trace"
        return m
    merged = []
    for s, d in sorted(det):
        if d == 0:
            continue
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], s + d)
        else:
            merged.append([s, s + d])
    if not merged:
        m.why = "leave no time for work"
        return m
    busy = sum(e - s for s, e in merged)
    # the run's length when the trace records it ("# elapsed_ns N"), else the last end
    runs = [int(x.split()[2]) for x in text.splitlines()
            if x.strip().startswith("#") and len(x.split()) >= 3 and x.split()[1] == "elapsed_ns"]
    loop = max([merged[-1][1]] + runs[:1])
    if busy >= loop or not m.push(busy / loop, "leave no time for work"):
        m.why = m.why or "leave no time for work"
        return m
    # this CPU's axis starts "# start_offset_ns N" into the run's: local time u is run time u + N
    offs = [int(x.split()[2]) for x in text.splitlines()
            if x.strip().startswith("#") and len(x.split()) >= 3 and x.split()[1] == "start_offset_ns"]
    o = offs[0] % loop if offs else 0
    m.intervals += [(s + o - loop, e + o - loop, loop) for s, e in merged]
    return m


def load(path):
    text = open(path).read()
    if text.lstrip().startswith("{"):
        return json_models(json.loads(text))
    return [tsv_model(text)]


def finish(m, work, latest=False):
    """When work W started at 0 ends under the model's combs and traces (all detours known):
    the first time with W ns outside detours; latest: the last such time (a detour may follow)."""
    horizon = 2 * work + 1
    while True:
        iv = []
        for s, e, rep in m.intervals:
            k = 0
            while s + k * rep < horizon:
                if e + k * rep > 0:
                    iv.append((max(s + k * rep, 0), e + k * rep))
                if rep == 0:
                    break
                k += 1
        iv.sort()
        t, w, end = 0, work, None
        for s, e in iv:
            if e <= t:
                continue
            if s > t:
                if w <= s - t:
                    end = t + w
                    break
                w -= s - t
            t = max(t, e)
        if end is None and t + w < horizon:
            end = t + w
        if end is None:
            horizon *= 2
            continue
        while latest:   # through the detours that begin right there
            later = max((e for s, e in iv if s <= end < e), default=end)
            if later == end:
                break
            end = later
        return end


def variant(src, dst, kind):
    doc = json.load(open(src))
    for cpu in doc["cpus"]:
        # Without the model's inputs ("other", doc/detour-json.md) simulate builds the model of
        # old, which this script works out; the measured model is checked by
        # test-sim-signatures.sh.
        cpu.pop("other", None)
        if kind in ("combs", "zero"):
            cpu["rare_long"]["count"] = 0
        if kind in ("rare", "zero"):
            cpu["periodic"] = []
    json.dump(doc, open(dst, "w"), indent=1)


def expect(work, ranks, noisy, files):
    """What the --sync run with free messages must give: feasible or why not, then the last
    rank's finish exactly (exact) or within [lo, hi]; the Poisson rate and ratio at most."""
    models = [m for f in files for m in load(f)]
    out = {"feasible": all(m.why is None for m in models),
           "why": next((m.why for m in models if m.why), None)}
    if not out["feasible"]:
        return out
    lo = hi = 0
    rate = ratio = cv2 = 0.0
    for r in range(ranks):
        m = models[r % len(models)]
        lo = max(lo, finish(m, work))
        # Poisson arrivals in [0, noisy]: at most mean + 10 sd + 10 (chance < 1e-20); each
        # takes at most its longest duration out of the work.
        lam = sum(rt for rt, d in m.rare) * noisy * 1e-9
        n = lam + 10 * math.sqrt(lam) + 10 if m.rare else 0
        longest = max((max(d) for rt, d in m.rare), default=0)
        hi = max(hi, finish(m, work + math.ceil(n * longest), latest=True))
        rate = max(rate, sum(rt for rt, d in m.rare))
        ratio = max(ratio, sum(rt * sum(d) / len(d) * 1e-9 for rt, d in m.rare))
        if m.rare:   # E[d^2] / E[d]^2 of one arrival's duration
            w = sum(rt for rt, d in m.rare)
            m1 = sum(rt * sum(d) / len(d) for rt, d in m.rare) / w
            m2 = sum(rt * sum(x * x for x in d) / len(d) for rt, d in m.rare) / w
            cv2 = max(cv2, m2 / (m1 * m1))
    out.update(exact=all(not m.rare for m in models), lo=lo, hi=hi, rare_rate_hz=rate,
               rare_ratio=ratio, rare_cv2=cv2)
    return out


def check(a):
    """check ITERATIONS COMPUTE_US RANKS RC ERRFILE RUN.json AGAIN.json FILE...: the run (exit RC,
    stderr in ERRFILE) and its repetition against what the files say. Prints each problem."""
    it, us, ranks, rc = int(a[0]), int(a[1]), int(a[2]), int(a[3])
    err = open(a[4]).read()
    work = it * us * 1000
    e = expect(work, ranks, 0, a[7:])
    bad = []
    if not e["feasible"]:
        if rc != 2 or err.count("\n") != 1 or e["why"] not in err:
            bad.append("the files leave no time for work (%s): want exit 2 and one line saying "
                       "so, got %d: %s" % (e["why"], rc, err.strip()))
        return bad
    if rc != 0:
        return ["exit %d: %s" % (rc, err.strip())]
    run, again = json.load(open(a[5])), json.load(open(a[6]))
    r = run["results"][0]
    e = expect(work, ranks, r["time_ns_noisy"], a[7:])
    log2 = (ranks - 1).bit_length()
    if r["time_ns_noise_free"] != work:
        bad.append("noise-free %d ns, not the %d ns of work" % (r["time_ns_noise_free"], work))
    if r["events"] != it * ranks * (1 + 2 * log2):
        bad.append("events %d, want %d" % (r["events"], it * ranks * (1 + 2 * log2)))
    if e["exact"] and r["time_ns_noisy"] != e["lo"]:
        bad.append("noisy %d ns, the files' detours give %d" % (r["time_ns_noisy"], e["lo"]))
    if not e["lo"] <= r["time_ns_noisy"] <= e["hi"]:
        bad.append("noisy %d ns outside [%d, %d]" % (r["time_ns_noisy"], e["lo"], e["hi"]))
    if not (r["magnification"] >= 1 and abs(r["magnification"] * work - r["time_ns_noisy"])
            <= 1e-6 * r["time_ns_noisy"]):
        bad.append("magnification %r" % r["magnification"])
    for doc in (run, again):
        for x in doc["results"]:
            x.pop("seconds")
            x.pop("events_per_s")
    if run != again:
        bad.append("a second run with the same seed differs")
    return bad


def quiet_first(work, src, dst):
    """src's CPUs, the one whose combs and traces delay work W least first: with as many ranks
    as CPUs, the last rank's finish is then another CPU's, unless every CPU is the same."""
    doc = json.load(open(src))
    doc["cpus"].sort(key=lambda c: finish(json_models({"cpus": [c]})[0], work))
    json.dump(doc, open(dst, "w"), indent=1)


def main():
    a = sys.argv[1:]
    if a[0] == "variant":
        variant(a[1], a[2], a[3])
    elif a[0] == "quiet-first":
        if a[2].endswith(".json"):
            quiet_first(int(a[1]), a[2], a[3])
        else:   # a comma list of traces
            files = a[2].split(",")
            files.sort(key=lambda f: finish(load(f)[0], int(a[1])) if load(f)[0].why is None
                       else 0)
            print(",".join(files))
    elif a[0] == "check":
        bad = check(a[1:])
        for b in bad:
            print(b)
        sys.exit(1 if bad else 0)
    else:   # finish W RANKS NOISY FILE...
        print(json.dumps(expect(int(a[1]), int(a[2]), int(a[3]), a[4:])))


main()
