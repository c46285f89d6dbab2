"""The page of `noisetool detour --html` (and of ftq/fwq, ftq.py): per CPU, the detour length
against time and the detour lengths sorted (Beckman et al. 2006, Figs 3-5), the periodic
components marked, the facts and tables of the signature (doc/detour-json.md, doc/html.md).
"""
import math

from .page import Cell, fmt_ns, fmt_num, new_figure

TITLE = "noisetool detour: the node's noise"

# A detour belongs to a component when its start lies within this share of the period from a
# tooth of the fitted comb: the analysis's own tolerance (libnoisetool/signature.c, 3 %).
TOOTH_TOLERANCE = 0.03

# Above this many detours a figure is a PNG (page.py: SVG for few marks).
RASTER_FROM = 2000

COMPONENT_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                    "#e377c2", "#17becf"]
OTHER_COLOR = "#7f7f7f"

METHODS = {
    "detour": "selfish-detour loop",
    "ftq": "fixed time quantum (FTQ)",
    "fwq": "fixed work quantum (FWQ)",
}


def noise_pct(cpu):
    """The noise percentage as the page prints it (tests compare against it)."""
    return f"{100.0 * float(cpu.get('noise_ratio') or 0):.3f} %"


def component_text(p):
    """One periodic component: '250 Hz x 16.7 us (1237)'."""
    return f"{p['freq_hz']:.4g} Hz \u00d7 {fmt_ns(p['typical_ns'])} ({p['count']})"


def memberships(starts, periodic):
    """For each detour start, the index of the first component whose comb it falls on, or -1."""
    combs = []
    for p in periodic:
        f = float(p.get("freq_hz") or 0)
        if f > 0:
            period = 1e9 / f
            combs.append((period, float(p.get("phase_ns") or 0), TOOTH_TOLERANCE * period))
        else:
            combs.append(None)
    out = []
    for s in starts:
        k = -1
        for i, c in enumerate(combs):
            if c is None:
                continue
            period, phase, tol = c
            d = math.fmod(s - phase, period)
            if d < 0:
                d += period
            if min(d, period - d) <= tol:
                k = i
                break
        out.append(k)
    return out


def _time_series(page, cpu, series, member, method, key):
    """Detour length against time, one colour per component, preempted ones as crosses."""
    starts = series["start_ns"]
    durs = series["duration_ns"]
    pre = series.get("preempted") or [False] * len(starts)
    periodic = cpu.get("periodic") or []
    fig, ax = new_figure(8.0, 3.4)
    groups = [(i, component_text(p), COMPONENT_COLORS[i % len(COMPONENT_COLORS)])
              for i, p in enumerate(periodic)]
    groups.append((-1, "not periodic", OTHER_COLOR))
    for k, label, color in groups:
        xs = [starts[i] / 1e9 for i in range(len(starts)) if member[i] == k and not pre[i]]
        ys = [durs[i] / 1e3 for i in range(len(starts)) if member[i] == k and not pre[i]]
        if xs:
            ax.scatter(xs, ys, s=4, color=color, label=label, linewidths=0)
    px = [starts[i] / 1e9 for i in range(len(starts)) if pre[i]]
    py = [durs[i] / 1e3 for i in range(len(starts)) if pre[i]]
    if px:
        ax.scatter(px, py, s=14, marker="x", color="black", linewidths=0.8,
                   label="preempted (another task ran)")
    for i, p in enumerate(periodic):
        ax.axhline(float(p["typical_ns"]) / 1e3, color=COMPONENT_COLORS[i % 8], lw=0.6,
                   ls="--")
    if starts:
        ax.set_yscale("log")
    ax.set_xlabel("time since the run started (s)")
    ax.set_ylabel("detour length (\u00b5s)")
    ax.set_xlim(0, max(float(cpu.get("elapsed_ns") or 0) / 1e9, 1e-6))
    ax.set_title(f"CPU {cpu['cpu']}: every detour ({len(starts)})")
    if starts or periodic:
        ax.legend(loc="upper right", fontsize=7, markerscale=2, framealpha=0.8)
    what = "lossy quanta merged into detours" if method != "detour" else "detours"
    page.figure(fig, f"{key}-time",
                f"CPU {cpu['cpu']}: {what} against time (Beckman et al. Figs 3-4); a colour "
                "per periodic component (start within 3 % of the period from a tooth of its "
                "comb), dashed: its typical length.",
                raster=len(starts) > RASTER_FROM)


def _sorted_lengths(page, cpu, series, key):
    """The detour lengths sorted, longest first (Beckman et al. Fig 5), with the cumulative
    share of the lost time."""
    durs = sorted((int(d) for d in series["duration_ns"]), reverse=True)
    fig, ax = new_figure(8.0, 3.0)
    xs = list(range(1, len(durs) + 1))
    ax.plot(xs, [d / 1e3 for d in durs], color="#1f77b4", lw=1.2, label="detour length")
    if durs:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("detours, longest first (rank)")
    ax.set_ylabel("detour length (\u00b5s)")
    total = float(sum(durs)) or 1.0
    acc, cum = 0, []
    for d in durs:
        acc += d
        cum.append(100.0 * acc / total)
    ax2 = ax.twinx()
    ax2.plot(xs, cum, color="#ff7f0e", lw=1.0, ls=":", label="share of the lost time")
    ax2.set_ylim(0, 100)
    ax2.set_ylabel("cumulative share of lost time (%)")
    ax2.grid(False)
    rt = float((cpu.get("rare_long") or {}).get("threshold_ns") or 0)
    if rt > 0:
        ax.axhline(rt / 1e3, color="#d62728", lw=0.6, ls="--", label="rare-long threshold")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="lower left", fontsize=7, framealpha=0.8)
    ax.set_title(f"CPU {cpu['cpu']}: detour lengths sorted")
    page.figure(fig, f"{key}-sorted",
                f"CPU {cpu['cpu']}: every detour length, longest first (Beckman et al. Fig 5), "
                "and the share of the lost time the longest ones hold.",
                raster=len(durs) > RASTER_FROM)


def _histogram(page, cpu, key):
    """Without the series: the log2 histogram of the lengths."""
    hist = cpu.get("histogram") or []
    fig, ax = new_figure(8.0, 2.8)
    los = [max(int(b["lo_ns"]), 1) / 1e3 for b in hist]
    widths = [(int(b["hi_ns"]) - max(int(b["lo_ns"]), 1)) / 1e3 for b in hist]
    ax.bar(los, [int(b["count"]) for b in hist], width=widths, align="edge",
           color="#1f77b4", edgecolor="white")
    ax.set_xscale("log")
    ax.set_xlabel("detour length (\u00b5s, log2 bins)")
    ax.set_ylabel("detours")
    ax.set_title(f"CPU {cpu['cpu']}: detour lengths")
    page.figure(fig, f"{key}-hist", f"CPU {cpu['cpu']}: how many detours of each length.")


def _cpu(page, doc, cpu):
    key = f"cpu{cpu['cpu']}"
    method = doc.get("method", "detour")
    page.section(f"CPU {cpu['cpu']}", key)
    periodic = cpu.get("periodic") or []
    rare = cpu.get("rare_long") or {}
    elapsed = float(cpu.get("elapsed_ns") or 0)
    facts = [
        ("CPU", str(cpu["cpu"]), f"{key}.cpu"),
        ("ran on", " \u2192 ".join(str(x) for x in cpu.get("ran_on", [])), f"{key}.ran_on"),
        ("run length", fmt_ns(elapsed), f"{key}.elapsed"),
        ("noise", noise_pct(cpu), f"{key}.noise_pct"),
        ("detours", int(cpu.get("detour_count") or 0), f"{key}.detours"),
        ("longest detour", fmt_ns(cpu.get("max_ns") or 0), f"{key}.max"),
        ("median detour", fmt_ns(cpu.get("median_ns") or 0), f"{key}.median"),
    ]
    if method == "detour":
        facts.append(("preempted detours", int(cpu.get("preempted_count") or 0)
                      if cpu.get("classified") else "not classified", f"{key}.preempted"))
        facts.append(("undisturbed iteration", fmt_ns(cpu.get("t_min_ns") or 0),
                      f"{key}.t_min"))
    else:
        facts.append(("quantum", fmt_ns(cpu.get("quantum_ns") or 0), f"{key}.quantum"))
    if cpu.get("dropped"):
        facts.append(("dropped (array full)", int(cpu["dropped"]), f"{key}.dropped"))
    for i, p in enumerate(periodic):
        facts.append((f"component {i + 1}", component_text(p), f"{key}.component{i + 1}"))
    if not periodic:
        facts.append(("periodic components", "none", f"{key}.components"))
    facts.append(("rare long detours", int(rare.get("count") or 0), f"{key}.rare"))
    page.facts(facts, id=f"{key}-facts")
    if cpu.get("dropped"):
        page.note(f"{cpu['dropped']} detours came after the array was full (--max-detours): "
                  "they are in no statistic and no figure.", warning=True)

    series = cpu.get("detours")
    if series is not None:  # drawn even when empty: a quiet CPU is a result
        member = memberships(series["start_ns"], periodic)
        _time_series(page, cpu, series, member, method, key)
        _sorted_lengths(page, cpu, series, key)
    elif int(cpu.get("detour_count") or 0) > 0:
        page.note("This document has no detour time series (it comes with --html or "
                  "--json-detours): only the histogram is drawn.")
        _histogram(page, cpu, key)
    else:
        page.note("No detour on this CPU: it was quiet at this threshold.")

    if periodic:
        rows = []
        for i, p in enumerate(periodic):
            f = float(p["freq_hz"])
            share = (int(p["count"]) * float(p["typical_ns"]) / elapsed * 100) if elapsed else 0
            rows.append([Cell(str(i + 1), i + 1),
                         Cell(f"{f:.6g}", f),
                         Cell(fmt_ns(1e9 / f) if f > 0 else "-", 1e9 / f if f > 0 else 0),
                         Cell(fmt_ns(p["typical_ns"]), float(p["typical_ns"])),
                         int(p["count"]),
                         Cell(fmt_ns(p["jitter_ns"]), float(p["jitter_ns"])),
                         Cell(fmt_ns(p["phase_ns"]), float(p["phase_ns"])),
                         Cell(f"{share:.3f} %", share)])
        page.table(["#", "frequency (Hz)", "period", "typical length", "detours", "jitter",
                    "phase", "time lost"], rows, id=f"{key}-periodic",
                   caption="Periodic components (the signature analysis)")
    longest = rare.get("longest") or []
    if longest:
        rows = [[Cell(fmt_ns(r["start_ns"]), int(r["start_ns"])),
                 Cell(fmt_ns(r["duration_ns"]), int(r["duration_ns"])),
                 "yes" if r.get("preempted") else "no"] for r in longest]
        page.table(["start", "length", "preempted"], rows, id=f"{key}-rare",
                   caption=f"The longest rare long detours (at least "
                           f"{fmt_ns(rare.get('threshold_ns') or 0)}, in no component)")
    _detour_time(page, cpu, key)
    _meanwhile(page, cpu, key)


def _detour_time(page, cpu, key):
    """Where the CPU's detour time went (doc/noisetool.md, "Where the detour time went"): another
    task, periodic interrupts, softirqs at other times, neither; a part that was not told (FTQ,
    --no-classify: null) reads "not told"."""
    t = cpu.get("detour_time")
    if not t or not t.get("total_ns"):
        return
    total = float(t["total_ns"])
    kinds = ", ".join(k.get("name", "") for k in t.get("softirq_kinds") or [])
    parts = [("another task", "another_task_ns",
              "the loop's schedstat moved: another task ran"),
             ("periodic interrupts", "periodic_interrupts_ns",
              "components an interrupt line or softirq kind fired at, or the tick"),
             ("softirqs", "softirqs_ns",
              "other detours in which a softirq ran" + (f" ({kinds})" if kinds else "")),
             ("neither", "neither_ns",
              "not preempted, nothing counted at its rate or in it: the hypervisor, the "
              "hardware, interrupts that raise no softirq")]
    rows = []
    for name, k, what in parts:
        v = t.get(k)
        if v is None:
            rows.append([name, Cell("not told", -1), Cell("-", -1), what])
        else:
            rows.append([name, Cell(fmt_ns(v), int(v)),
                         Cell(f"{100.0 * float(v) / total:.1f} %", float(v)), what])
    page.table(["part", "time", "share", "what it is"], rows, id=f"{key}-detour-time",
               caption=f"Where the detour time of CPU {cpu['cpu']} went ({fmt_ns(total)} in all)")


def _meanwhile(page, cpu, key):
    """What else ran on the CPU during the run (doc/noisetool.md, "What else ran on each CPU
    meanwhile"): the other tasks by CPU time, the interrupt lines and softirq kinds by count."""
    m = cpu.get("meanwhile")
    if not m:
        return
    secs = float(m.get("elapsed_ns") or 0) / 1e9
    tasks = m.get("tasks") or []
    if tasks:
        rows = [[t.get("comm", ""), Cell(str(t.get("pid", "")), int(t.get("pid") or 0)),
                 t.get("kind", ""),
                 Cell(fmt_ns(t.get("run_ns") or 0), int(t.get("run_ns") or 0)),
                 Cell(f"{100.0 * float(t.get('run_ns') or 0) / (secs * 1e9):.2f} %"
                      if secs else "-", float(t.get("run_ns") or 0))] for t in tasks]
        page.table(["task", "pid", "kind", "CPU time there", "share of the run"], rows,
                   id=f"{key}-tasks",
                   caption=f"Other tasks that ran on CPU {cpu['cpu']} meanwhile "
                           f"({int(m.get('task_count') or 0)} in all, "
                           f"{fmt_ns(m.get('tasks_ns') or 0)})")
    rows = []
    for kind in ("interrupts", "softirqs"):
        for u in (m.get(kind) or {}).get("top") or []:
            n = int(u.get("count") or 0)
            rows.append([kind[:-1], u.get("name", ""), u.get("desc", ""), n,
                         Cell(f"{n / secs:.1f}" if secs else "-", n / secs if secs else 0)])
    if rows:
        page.table(["kind", "line", "description", "count", "per second"], rows,
                   id=f"{key}-interrupts",
                   caption=f"Interrupts and softirqs counted on CPU {cpu['cpu']} meanwhile")


def render(doc, page):
    """Fill page from a noisetool-noise/1 document (doc/detour-json.md)."""
    if doc.get("schema") != "noisetool-noise/1":
        page.note(f"not a noisetool-noise/1 document (schema {doc.get('schema')!r})",
                  warning=True)
        return
    method = doc.get("method", "detour")
    host = doc.get("host") or {}
    cpus = doc.get("cpus") or []
    page.section("Run", "run")
    page.facts([
        ("method", METHODS.get(method, method), "method"),
        ("host", f"{host.get('hostname', '')} ({host.get('kernel', '')})", "host"),
        ("CPU model", host.get("cpu_model") or "unknown", "cpu_model"),
        ("kernel HZ", int(host.get("kernel_hz") or 0) or "unknown", "kernel_hz"),
        ("CPUs measured", ", ".join(str(c["cpu"]) for c in cpus), "cpus"),
        ("seconds per CPU", fmt_num(float(doc.get("seconds") or 0)), "seconds"),
        ("threshold", fmt_ns(doc.get("threshold_ns") or 0), "threshold"),
    ], id="run-facts")
    if len(cpus) > 1:
        rows = [[Cell(str(c["cpu"]), int(c["cpu"])),
                 Cell(noise_pct(c), 100.0 * float(c.get("noise_ratio") or 0)),
                 int(c.get("detour_count") or 0),
                 Cell(fmt_ns(c.get("max_ns") or 0), int(c.get("max_ns") or 0)),
                 len(c.get("periodic") or []),
                 int((c.get("rare_long") or {}).get("count") or 0)] for c in cpus]
        page.table(["CPU", "noise", "detours", "longest", "components", "rare long"], rows,
                   id="cpus", caption="Every measured CPU")
    for cpu in cpus:
        _cpu(page, doc, cpu)
