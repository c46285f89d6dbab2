"""The report page (`noisetool report LOG --html FILE`): the job's facts, its call sites with
their histograms of call time, who made the collectives late and why (by rank, by node, over
time), the latest instances, and what the tool itself cost. The document is noisetool-page/1
(libnoisetool/report-page.c; doc/html.md, "The report page"): the report JSON as --json writes
it under "report", and the page's own bounded data besides.
"""
import datetime
import math

from .page import CAUSE_NAMES, use_causes

TITLE = "noisetool report"

SITE_ROWS = 300      # rows of the call-site table (the rest: --json, --csv)
HIST_PANELS = 12     # small multiples of the call-time histograms
CULPRIT_BARS = 30    # ranks or nodes in a culprit chart
INSTANCE_BARS = 40   # instances in the stacked bars of the latest ones
INSTANCE_ROWS = 20   # rows of the latest-instances table
SPARK = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def cause_share(causes, delay_ns):
    """The largest cause of a delay (the first in CAUSES order on a tie) and its share in %,
    computed as the text report prints it (100.0 * ns / delay, "%.1f")."""
    from .page import CAUSES
    best, best_ns = CAUSES[0], -1
    for c in CAUSES:
        ns = causes.get(c + "_ns", 0)
        if ns > best_ns:
            best, best_ns = c, ns
    share = 100.0 * float(best_ns) / float(delay_ns) if delay_ns else 0.0
    return best, f"{share:.1f} %"


def _time_unit(span_ns):
    return (1e9, "s") if span_ns >= 10e9 else (1e6, "ms")


def _site_name(site, width=48):
    if not site:
        return "?"
    text = f"{site.get('function', '?')} {site.get('location', '')}".strip()
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def _no_minor_ticks(ax):
    """No minor ticks on a log axis: matplotlib lays out dozens per decade, which made the
    histograms' small multiples take seconds to draw (and say nothing the major ones do not)."""
    from matplotlib.ticker import NullLocator
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())


def _sparkline(counts, edges):
    """A histogram as a line of block characters (log of the counts) and its range."""
    from .page import fmt_ns
    nz = [i for i, c in enumerate(counts) if c]
    if not nz:
        return ""
    lo, hi = nz[0], nz[-1]
    top = math.log1p(max(counts))
    bars = "".join(" " if not counts[i] else
                   SPARK[min(len(SPARK) - 1, int(len(SPARK) * math.log1p(counts[i]) / top))]
                   for i in range(lo, hi + 1))
    return f"{bars} {fmt_ns(edges[lo])}\u2013{fmt_ns(edges[hi + 1])}"


def _hosts(rep):
    names = []
    seen = set()
    for r in rep.get("rank_times", []):
        h = r.get("host", "")
        if h not in seen:
            seen.add(h)
            names.append(h)
    return names


def batch_text(job):
    """The batch job as the page's fact says it: "slurm 1234.0 on node[1-4]"."""
    if not job.get("batch_job"):
        return "none (not run by a batch system)" if "batch_job" in job else \
            "not recorded in this log"
    text = f"{job.get('batch_system') or '?'} {job['batch_job']}"
    return text + (f" on {job['batch_nodes']}" if job.get("batch_nodes") else "")


def _job_facts(doc, rep, page):
    from .page import fmt_ns
    job = rep.get("job") or {}
    command = job.get("command")
    if isinstance(command, list):  # an argv, should a log give it so
        command = " ".join(str(a) for a in command)
    hosts = _hosts(rep)
    more = ", \u2026" if len(hosts) > 6 else ""
    host_text = f"{len(hosts)}" + (f" ({', '.join(hosts[:6])}{more})" if hosts else "")
    created = job.get("created_unix_ns", doc.get("created_unix_ns"))
    when = (datetime.datetime.fromtimestamp(created / 1e9, datetime.timezone.utc)
            .strftime("%Y-%m-%d %H:%M:%S UTC") if created else "not recorded")
    reasons = doc.get("partial_reasons", [])
    partial = rep.get("partial", False)
    partial_text = (("yes: " + "; ".join(reasons) if reasons else "yes") if partial
                    else "no (complete)")
    a = rep.get("attribution", {})
    facts = [
        ("ranks", str(rep.get("ranks", 0)), "ranks"),
        ("hosts", host_text, "hosts"),
        ("MPI", job.get("mpi") or "not recorded in this log", "mpi"),
        ("command", command or "not recorded in this log", "command"),
        ("batch job", batch_text(job), "batch-job"),
        ("user", job.get("user") or "not recorded in this log", "user"),
        ("level", rep.get("level", "?"), "level"),
        ("waits", rep.get("wait_mode", "mpi"), "wait-mode"),
        ("clock error", "\u2264 " + fmt_ns(rep.get("clock_sync", {}).get("max_error_ns", 0)),
         "clock-error"),
        ("created", when, "created"),
        ("noisetool", job.get("tool_version") or rep.get("version", "?"), "tool-version"),
        ("log", doc.get("log", ""), "log"),
        ("partial", partial_text, "partial"),
        ("late instances", f"{a.get('instances_late', 0)} of {a.get('instances_joined', 0)} "
         f"joined (late: > {fmt_ns(a.get('threshold_ns', 0))})", "late-instances"),
        ("delay imposed", fmt_ns(a.get("total_delay_ns", 0)), "total-delay"),
    ]
    cov = rep.get("coverage")
    if cov:  # doc/attribution.md, "Coverage"; logs' reports before it have none
        over = cov.get("over_own_cost_ns", 0) or 1
        pct = lambda k: f"{100 * cov.get(k, 0) / over:.1f} %"
        facts.append(("coverage",
                      f"{fmt_ns(cov.get('mpi_ns', 0))} in MPI, "
                      f"{fmt_ns(cov.get('collective_ns', 0))} in collectives, "
                      f"{fmt_ns(cov.get('over_own_cost_ns', 0))} over their own cost: late "
                      f"arrivals {pct('late_arrivals_ns')} of it, holds inside the calls "
                      f"{pct('held_inside_ns')} ({pct('with_cause_ns')} with "
                      f"an OS cause, {pct('unexplained_ns')} unexplained, "
                      f"{pct('not_measured_ns')} not measured), {pct('not_accounted_ns')} not "
                      "accounted for yet", "coverage"))
    cpus = [(r.get("rank"), r.get("cpus") or {}) for r in rep.get("rank_times", [])]
    known = [(k, c) for k, c in cpus if c.get("count")]
    if known:  # doc/attribution.md, "Who shares the CPUs"; logs before version 6 have none
        crowded = rep.get("crowded_ranks", 0)
        if crowded:
            k, c = next((k, c) for k, c in known if c.get("ranks_within", 1) > c["count"])
            text = (f"{crowded} ranks take turns on their CPUs (rank {k}: "
                    f"{c['ranks_within']} ranks on CPU{'s' if c['count'] > 1 else ''} "
                    f"{c.get('list', '?')}), waits "
                    f"{rep.get('wait_mode', 'mpi')}")
            if rep.get("wait_mode", "mpi") in ("mpi", "busy"):
                text += ": --wait adaptive would nap while a CPU is shared"
        else:
            text = "each rank's CPUs are its own in this job"
        k, c = max(known, key=lambda kc: kc[1].get("others_share", 0))
        if c.get("others_share", 0) >= 0.005:
            text += (f"; other tasks took up to {100 * c['others_share']:.1f} % of a rank's "
                     f"CPUs (rank {k})")
        facts.append(("CPUs", text, "cpus"))
    culprits = rep.get("culprits", [])
    if culprits and culprits[0].get("delay_ns"):
        c = culprits[0]
        cause, share = cause_share(c.get("causes", {}), c["delay_ns"])
        facts += [("top culprit rank", str(c["rank"]), "top-culprit-rank"),
                  ("its host", c.get("host", ""), "top-culprit-host"),
                  ("its delay", f"{fmt_ns(c['delay_ns'])} in {c.get('instances', 0)} "
                   "instances", "top-culprit-delay"),
                  ("its top cause", CAUSE_NAMES.get(cause, cause), "top-culprit-cause"),
                  ("share of its delay", share, "top-culprit-share")]
    else:
        facts.append(("top culprit rank", "none (no late instance)", "top-culprit-rank"))
    page.facts(facts, id="job-facts")
    if partial:
        for r in reasons or ["the log is marked partial"]:
            page.note("PARTIAL: " + r, warning=True)


def _sites(doc, rep, page):
    from .page import Cell, fmt_ns, new_figure
    import matplotlib.pyplot as plt
    sites = rep.get("sites", [])
    h = doc.get("histograms", {})
    edges = h.get("bin_edges_ns", [])
    hist = {x["site"]: x["counts"] for x in h.get("sites", [])}
    page.section("Call sites", "sites")
    page.note("Merged across ranks, by MPI time (click a header to sort). The histogram is of "
              "the time of each call, in log2 bins, counts on a log scale so that the rare "
              "slow calls show (Jones et al. 2003, Fig. 4).")
    rows = []
    for i, s in enumerate(sites[:SITE_ROWS]):
        rows.append([
            s.get("function", ""), s.get("location", ""), s.get("calls", 0),
            Cell(fmt_ns(s.get("time_ns_total", 0)), s.get("time_ns_total", 0)),
            Cell(fmt_ns(s.get("time_ns_max_rank", 0)), s.get("time_ns_max_rank", 0)),
            Cell(fmt_ns(s.get("time_ns_max", 0)), s.get("time_ns_max", 0)),
            Cell(f"{s.get('cov', 0):.3f}", s.get("cov", 0)),
            Cell(f"{s.get('bytes_per_call', 0):.0f}", s.get("bytes_per_call", 0)),
            _sparkline(hist[i], edges) if i in hist and edges else "",
        ])
    page.table(["function", "location", "calls", "MPI time", "max per rank", "longest call",
                "cov", "bytes/call", "call time (log2 bins, log counts)"], rows, id="site-table")
    if len(sites) > SITE_ROWS:
        page.note(f"{len(sites) - SITE_ROWS} more call sites: --json or --csv lists them all.")
    shown = [i for i in range(len(sites)) if i in hist and any(hist[i])][:HIST_PANELS]
    if not shown or not edges:
        return
    cols = min(4, len(shown))
    nrows = (len(shown) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(2.6 * cols + 0.6, 2.1 * nrows + 0.4),
                             squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    for ax, i in zip(axes.flat, shown):
        counts = hist[i]
        nz = [b for b, c in enumerate(counts) if c]
        lo, hi = max(nz[0] - 1, 0), min(nz[-1] + 2, len(counts))
        left = [edges[b] for b in range(lo, hi)]
        widths = [edges[b + 1] - edges[b] for b in range(lo, hi)]
        ax.bar(left, [counts[b] for b in range(lo, hi)], width=widths, align="edge",
               color="#4c72b0", edgecolor="white", linewidth=0.4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        _no_minor_ticks(ax)
        ax.set_ylim(0.5, max(counts) * 2)
        ax.set_title(f"#{i + 1} " + _site_name(sites[i], 34), fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("call time (ns)", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("calls", fontsize=8)
    fig.subplots_adjust(wspace=0.3, hspace=0.55)
    page.figure(fig, "site-histograms",
                f"Call time of the {len(shown)} largest call sites (log2 bins; log counts)")


def _stacked(ax, labels, items):
    """Horizontal bars, one per item (its "causes", ns), stacked by cause, in ms."""
    from .page import CAUSES, CAUSE_COLORS
    left = [0.0] * len(items)
    y = list(range(len(items)))
    for c in CAUSES:
        w = [it.get("causes", {}).get(c + "_ns", 0) / 1e6 for it in items]
        if any(w):
            ax.barh(y, w, left=left, color=CAUSE_COLORS[c], label=CAUSE_NAMES[c], height=0.8)
        left = [a + b for a, b in zip(left, w)]
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("delay imposed (ms)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)


def _culprits(rep, page):
    from .page import Cell, fmt_ns, new_figure
    page.section("Culprits", "culprits")
    ranks = rep.get("culprits", [])
    if not ranks:
        page.note("No late instance: no rank made a collective late by more than the "
                  "threshold.")
        return
    page.note("Which ranks and nodes made the collectives late, by the delay they imposed as "
              "last arrivers, split by what the OS did to them (doc/attribution.md).")
    top = ranks[:CULPRIT_BARS]
    fig, ax = new_figure(8, 0.8 + 0.25 * len(top))
    _stacked(ax, [f"rank {c['rank']} ({c.get('host', '')})" for c in top], top)
    ax.set_title("Culprits by rank" + (f" (the {len(top)} largest of {len(ranks)})"
                                       if len(ranks) > len(top) else ""))
    page.figure(fig, "culprit-ranks", "Delay imposed per rank, by cause")
    nodes = rep.get("culprit_nodes", [])
    if nodes:
        topn = nodes[:CULPRIT_BARS]
        fig, ax = new_figure(8, 0.8 + 0.25 * len(topn))
        _stacked(ax, [c.get("host", "") for c in topn], topn)
        ax.set_title("Culprits by node")
        page.figure(fig, "culprit-nodes", "Delay imposed per node, by cause")
    from .page import CAUSES
    rows = []
    for c in ranks[:50]:
        d = c.get("delay_ns", 0)
        rows.append([c["rank"], c.get("host", ""), Cell(fmt_ns(d), d), c.get("instances", 0)] +
                    [Cell(f"{100.0 * float(c['causes'].get(k + '_ns', 0)) / float(d):.1f}"
                          if d else "0.0", c["causes"].get(k + "_ns", 0)) for k in CAUSES])
    page.table(["rank", "host", "delay", "late"] + [CAUSE_NAMES[k] + " %" for k in CAUSES],
               rows, id="culprit-table")
    _other_tasks(rep, page)


def _other_tasks(rep, page):
    """The other processes on each rank's CPUs (log version 7; doc/attribution.md, "Who the
    other tasks were"): who took the CPUs a rank was preempted from."""
    from .page import Cell, fmt_ns
    rows = []
    for r in rep.get("rank_times", []):
        o = (r.get("cpus") or {}).get("others")
        for t in (o or {}).get("tasks", []):
            who = (f"this job's rank {t['job_rank']}" if "job_rank" in t
                   else t.get("comm", ""))
            rows.append([r.get("rank"), r.get("host", ""), who, Cell(str(t.get("pid", "")),
                         t.get("pid", 0)), t.get("kind", ""),
                         Cell(fmt_ns(t.get("run_ns", 0)), t.get("run_ns", 0)),
                         Cell(f"{100.0 * float(t.get('share', 0)):.1f} %", t.get("share", 0)),
                         Cell(f"{o.get('from_ns', 0) / 1e9:.2f} s", o.get("from_ns", 0)),
                         Cell(fmt_ns(o["run_delay_ns"]), o["run_delay_ns"])
                         if "run_delay_ns" in o else ""])
    if rows:
        page.table(["rank", "host", "other task", "pid", "kind", "CPU time there",
                    "of other tasks' time", "read from", "rank waited for a CPU"],
                   rows[:300], id="other-tasks",
                   caption="The other processes on each rank's CPUs, from their first reading "
                           "(read from: after MPI_Init) to MPI_Finalize, the busiest 6 per "
                           "rank; and how long the rank waited for a CPU meanwhile")


def _lateness(doc, rep, page):
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    import numpy as np
    from .page import new_figure
    lat = doc.get("lateness", {})
    rows = lat.get("rows", [])
    page.section("Lateness over time", "lateness")
    m = np.array([r["delay_ns"] for r in rows], dtype=float) if rows else np.zeros((0, 0))
    if not rows or not m.any():
        page.note("No late instance to place in time.")
        return
    bins = lat.get("bins", m.shape[1])
    span = lat.get("bin_ns", 1) * bins
    scale, unit = _time_unit(span)
    grouped = any(r["first_rank"] != r["last_rank"] for r in rows)
    page.note("The delay each rank imposed as the last arriver, in each of "
              f"{bins} slices of the job on the global time base"
              + (" (each row a block of consecutive ranks)" if grouped else "") + ".")
    fig, ax = new_figure(9, min(2 + 0.12 * len(rows), 9))
    masked = np.ma.masked_less_equal(m / 1e6, 0)
    cmap = plt.get_cmap("magma_r").copy()
    cmap.set_bad("white")
    im = ax.imshow(masked, aspect="auto", interpolation="nearest", cmap=cmap,
                   norm=LogNorm(vmin=max(masked.min(), 1e-4), vmax=masked.max()),
                   extent=(0, span / scale, len(rows) - 0.5, -0.5))
    ax.grid(False)
    ticks = sorted(set(np.linspace(0, len(rows) - 1, min(len(rows), 16)).round().astype(int)))
    ax.set_yticks(ticks)
    ax.set_yticklabels([str(rows[t]["first_rank"]) if rows[t]["first_rank"] == rows[t]["last_rank"]
                        else f"{rows[t]['first_rank']}\u2013{rows[t]['last_rank']}"
                        for t in ticks], fontsize=7)
    ax.set_ylabel("rank")
    ax.set_xlabel(f"time since rank 0's MPI_Init ({unit})")
    fig.colorbar(im, ax=ax, label="delay imposed (ms)")
    page.figure(fig, "lateness-heatmap", "Delay imposed by each rank over time", raster=True)


def _latest(doc, rep, page):
    from .page import CAUSES, CAUSE_COLORS, Cell, fmt_ns, new_figure
    import matplotlib.pyplot as plt
    latest = doc.get("latest", {})
    inst = latest.get("instances", [])
    keys = [k[:-3] for k in doc["cause_keys"]]
    sites = rep.get("sites", [])
    page.section("Latest instances", "latest")
    if not inst:
        page.note("No late instance.")
        return
    total = latest.get("total", len(inst))
    page.note(f"The {len(inst)} latest of {total} late instances, at their start (the median "
              "arrival), with their last arriver and what delayed it.")

    def causes_of(x):
        return dict(zip(keys, x.get("causes", [])))

    def dominant(x):
        c = causes_of(x)
        return max(CAUSES, key=lambda k: (c.get(k, 0), -CAUSES.index(k)))

    span = max(x["time_ns"] for x in inst) or 1
    scale, unit = _time_unit(span)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 6.4),
                                 gridspec_kw={"height_ratios": [1.2, 1]})
    for c in CAUSES:
        pts = [x for x in inst if dominant(x) == c]
        if pts:
            ax.scatter([x["time_ns"] / scale for x in pts], [x["delay_ns"] / 1e6 for x in pts],
                       s=10, color=CAUSE_COLORS[c], label=CAUSE_NAMES[c], alpha=0.75,
                       linewidths=0)
    for x in inst[:5]:
        ax.annotate(f"rank {x['rank']}", (x["time_ns"] / scale, x["delay_ns"] / 1e6),
                    fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_yscale("log")
    _no_minor_ticks(ax)
    ax.set_ylim(top=max(x["delay_ns"] for x in inst) / 1e6 * 3)  # room for the labels
    ax.set_xlabel(f"start ({unit} since rank 0's MPI_Init)")
    ax.set_ylabel("delay (ms)")
    ax.set_title("Late instances by their largest cause")
    ax.legend(fontsize=8, markerscale=2, loc="upper left", bbox_to_anchor=(1.01, 1),
              borderaxespad=0)
    top = inst[:INSTANCE_BARS]
    bottom = [0.0] * len(top)
    xs = list(range(len(top)))
    for c in CAUSES:
        h = [causes_of(x).get(c, 0) / 1e6 for x in top]
        if any(h):
            bx.bar(xs, h, bottom=bottom, color=CAUSE_COLORS[c], label=CAUSE_NAMES[c], width=0.8)
        bottom = [a + b for a, b in zip(bottom, h)]
    bx.set_xticks(xs)
    bx.set_xticklabels([f"r{x['rank']}" for x in top], fontsize=7, rotation=90)
    bx.set_ylabel("delay (ms)")
    bx.set_title(f"The {len(top)} latest: last arriver and cause split")
    fig.subplots_adjust(hspace=0.45)
    page.figure(fig, "latest-instances", "Late instances over the job, and the latest split "
                "by cause")
    rows = []
    for x in inst[:INSTANCE_ROWS]:
        c = causes_of(x)
        d = x["delay_ns"]
        s = sites[x["site"]] if 0 <= x.get("site", -1) < len(sites) else None
        inst_name = (f"world:{x['seq']}" if x.get("comm_id", 0) == 0
                     else f"{x['comm_id']:x}:{x['seq']}")
        rows.append([Cell(f"{x['time_ns'] / 1e6:.3f}", x["time_ns"]), inst_name,
                     _site_name(s, 60), x["rank"], x.get("host", ""), Cell(fmt_ns(d), d)] +
                    [Cell(f"{100.0 * float(c.get(k, 0)) / float(d):.1f}" if d else "0.0",
                          c.get(k, 0)) for k in CAUSES])
    page.table(["at ms", "instance", "call site", "last rank", "host", "delay"] +
               [CAUSE_NAMES[k] + " %" for k in CAUSES], rows, id="latest-table")


def _coverage(rep, page):
    """Where the MPI time over the calls' own cost went, by rank and by collective call site
    (doc/attribution.md, "Coverage"): the text report's two tables."""
    from .page import Cell, fmt_ns
    cov = rep.get("coverage")
    if not cov or not cov.get("ranks"):
        return  # a report before the coverage
    page.section("MPI time", "coverage")
    page.note("Each rank's and each collective call site's MPI time in collectives: the calls' "
              "own cost (the lower quartile of their times), waiting for late arrivals, held "
              "inside the call, and what is not accounted for yet; measured: the share of the "
              "waits and holds with OS data. Each table adds up to the job's.")
    keys = ["mpi_ns", "collective_ns", "own_cost_ns", "late_arrivals_ns", "held_inside_ns",
            "not_accounted_ns"]

    def row(c):
        lost = c.get("late_arrivals_ns", 0) + c.get("held_inside_ns", 0)
        measured = 100 * (lost - c.get("not_measured_ns", 0)) / lost if lost else 100.0
        return [Cell(fmt_ns(c.get(k, 0)), c.get(k, 0)) for k in keys] + \
            [Cell(f"{measured:.1f} %", measured)]

    head = ["MPI", "collectives", "own cost", "waiting", "held inside", "not accounted",
            "measured"]
    page.table(["rank"] + head, [[c.get("rank", i)] + row(c)
                                 for i, c in enumerate(cov["ranks"][:SITE_ROWS])],
               id="coverage-ranks")
    sites = cov.get("sites", [])
    _coverage_bars(page, "coverage-ranks-bars", "MPI time in collectives per rank",
                   [f"rank {c.get('rank', i)}" for i, c in enumerate(cov["ranks"])],
                   cov["ranks"], 64)
    if sites:
        _coverage_bars(page, "coverage-sites-bars",
                       "MPI time in collectives per call site (the 12 largest)",
                       [f"{s.get('function', '')} {s.get('location', '')}"[:48] for s in sites],
                       sites, 12)
        page.table(["function", "location"] + head,
                   [[s.get("function", ""), s.get("location", "")] + row(s)
                    for s in sites[:SITE_ROWS]], id="coverage-sites")


# The parts of a collective's time, in the order they stack, and their colours.
COVERAGE_PARTS = [("own_cost_ns", "own cost", "#bbbbbb"),
                  ("late_arrivals_ns", "waiting for late arrivals", "#d62728"),
                  ("held_inside_ns", "held inside the call", "#ff7f0e"),
                  ("not_accounted_ns", "not accounted for yet", "#7f7f7f")]


def _coverage_bars(page, key, title, labels, parts, limit):
    """Horizontal bars, one per rank or site (the first `limit`), stacked by part."""
    from .page import new_figure
    labels, parts = labels[:limit], parts[:limit]
    if not parts or not any(p.get("collective_ns", 0) for p in parts):
        return
    fig, ax = new_figure(8, 0.8 + 0.25 * len(parts))
    left = [0.0] * len(parts)
    ys = list(range(len(parts)))
    for k, name, colour in COVERAGE_PARTS:
        v = [p.get(k, 0) / 1e6 for p in parts]
        ax.barh(ys, v, left=left, color=colour, label=name, height=0.7)
        left = [a + b for a, b in zip(left, v)]
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ms (all ranks)" if key.startswith("coverage-sites") else "ms")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=7, framealpha=0.8)
    page.figure(fig, key, title + ": own cost, waiting for late arrivals, held inside, not "
                "accounted for yet")


def _costs(rep, page):
    from .page import new_figure
    import matplotlib.pyplot as plt
    rt = rep.get("rank_times", [])
    page.section("Probe cost and injected time", "costs")
    if not rt:
        return
    page.note("What the tool cost each rank (reading OS counters: % of its wall time; the "
              "budget is 1 %) and what the noise injector spun on it.")
    ranks = [r["rank"] for r in rt]
    probe = [r.get("probe_pct") or 0 for r in rt]
    inj = [r.get("injected_ns", 0) / 1e6 for r in rt]
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    if len(rt) <= 128:
        ax.bar(ranks, probe, color="#8c564b", width=0.8)
        bx.bar(ranks, inj, color="#2ca02c", width=0.8)
    else:
        ax.plot(ranks, probe, color="#8c564b", drawstyle="steps-mid", linewidth=0.8)
        bx.plot(ranks, inj, color="#2ca02c", drawstyle="steps-mid", linewidth=0.8)
    ax.set_ylim(bottom=0)
    bx.set_ylim(bottom=0)
    ax.set_ylabel("probe cost (% of wall)")
    ax.set_title("Probe cost per rank")
    bx.set_ylabel("injected (ms)")
    bx.set_xlabel("rank")
    bx.set_title("Injected noise per rank")
    fig.subplots_adjust(hspace=0.4)
    page.figure(fig, "rank-costs", "Probe cost and injected time per rank")


# Table cells of numbers and names on one line (the page's own style wraps them).
_STYLE = ("<style>#latest-table td, #culprit-table td, #site-table td "
          "{ white-space: nowrap; }</style>")


def render(doc, page):
    rep = doc.get("report", doc)
    use_causes(rep["causes"])
    page.raw(_STYLE)
    page.title = f"noisetool report: {doc.get('log') or 'job'}"
    page.section("Job", "job")
    _job_facts(doc, rep, page)
    _culprits(rep, page)
    _coverage(rep, page)
    _lateness(doc, rep, page)
    _latest(doc, rep, page)
    _sites(doc, rep, page)
    _costs(rep, page)
