"""The page of `noisetool simulate --html`: the magnification (noisy / noise-free time) against
the rank count, one curve per run (noise and mode: sync, unsync), on a log ranks axis (Beckman
et al. Figs 6/8, Engelmann Figs 4-6), the times themselves, and the table (doc/simulate.md).
"""
from .page import Cell, fmt_ns, fmt_num, new_figure

TITLE = "noisetool simulate: noise at scale"

MODE_STYLE = {True: ("#1f77b4", "o", "-"), False: ("#d62728", "s", "--")}


def mode_name(run):
    """'sync' or 'unsync'."""
    return "sync" if run.get("sync") else "unsync"


def noise_text(run):
    """The noise of a run as the table's header says it."""
    n = run.get("noise") or {}
    if n.get("kind") == "periodic":
        f = float(n.get("freq_hz") or 0)
        d = float(n.get("detour_ns", n.get("period_ns")) or 0)  # period_ns: the old name
        return f"{f:g} Hz \u00d7 {fmt_ns(d)} ({f * d / 1e9 * 100:.3g} %)"
    if n.get("kind") == "signature":
        return "signature " + ", ".join(n.get("files") or [])
    return str(n.get("kind", "?"))


def magnification_text(x):
    """A magnification as the table prints it (4 decimals; tests compare against it)."""
    return f"{float(x):.4f}"


def runs_of(doc):
    """The noisetool-simulate/1 documents in doc (one, or the runs of a set)."""
    if doc.get("schema") == "noisetool-simulate-set/1":
        return [r for r in doc.get("runs") or [] if r.get("schema") == "noisetool-simulate/1"]
    if doc.get("schema") == "noisetool-simulate/1":
        return [doc]
    return []


def _label(run, several_noises):
    return f"{mode_name(run)}, {noise_text(run)}" if several_noises else mode_name(run)


def render(doc, page):
    """Fill page from a noisetool-simulate/1 or noisetool-simulate-set/1 document."""
    runs = runs_of(doc)
    if not runs:
        page.note(f"not a noisetool-simulate document (schema {doc.get('schema')!r})",
                  warning=True)
        return
    first = runs[0]
    noises = sorted({noise_text(r) for r in runs})
    several = len(noises) > 1
    lg = first.get("loggp") or {}
    page.section("Configuration", "config")
    compute = int(first.get("compute_ns") or 0)
    iters = int(first.get("iterations") or 1)
    what = f"{first.get('collective')} ({first.get('algorithm')}), {first.get('bytes')} B"
    loop = (f"{iters} \u00d7 ({fmt_ns(compute)} compute + the collective)" if compute or
            iters > 1 else "one call")
    facts = [
        ("collective", what, "collective"),
        ("loop", loop, "loop"),
        ("noise", "; ".join(noises), "noise"),
        ("modes", ", ".join(mode_name(r) for r in runs), "modes"),
        ("LogGP", f"L {fmt_num(lg.get('L_ns'))} ns, o {fmt_num(lg.get('o_ns'))} ns, "
                  f"g {fmt_num(lg.get('g_ns'))} ns, G {fmt_num(lg.get('G_ns_per_byte'))} ns/B",
         "loggp"),
        ("seed", str(first.get("seed")), "seed"),
    ]
    for i, r in enumerate(runs):
        res = r.get("results") or []
        if not res:
            continue
        top = max(res, key=lambda x: int(x["ranks"]))
        key = f"magnification.{mode_name(r)}" + (f".{i}" if several else "")
        facts.append((f"magnification at {int(top['ranks']):,} ranks, {_label(r, several)}",
                      magnification_text(top["magnification"]), key))
    page.facts(facts, id="config-facts")

    page.section("Magnification against ranks", "magnification")
    fig, ax = new_figure(8.0, 3.6)
    for r in runs:
        res = sorted(r.get("results") or [], key=lambda x: int(x["ranks"]))
        color, marker, ls = MODE_STYLE[bool(r.get("sync"))]
        if several:
            color = None
        ax.plot([int(x["ranks"]) for x in res], [float(x["magnification"]) for x in res],
                marker=marker, ls=ls, color=color, label=_label(r, several), ms=4)
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_ylabel("magnification (noisy / noise-free)")
    ax.legend(fontsize=8)
    ax.set_title(f"{first.get('collective')}: slowdown by noise at scale")
    page.figure(fig, "magnification-chart",
                "The magnification of the last rank's finish time, against the rank count "
                "(log scale): synchronized noise costs about the noise ratio; unsynchronized "
                "noise grows with the ranks (Beckman et al. Figs 6/8, Engelmann Figs 4-6).")

    fig, ax = new_figure(8.0, 3.2)
    for r in runs:
        res = sorted(r.get("results") or [], key=lambda x: int(x["ranks"]))
        color, marker, ls = MODE_STYLE[bool(r.get("sync"))]
        if several:
            color = None
        ranks = [int(x["ranks"]) for x in res]
        ax.plot(ranks, [int(x["time_ns_noisy"]) / 1e3 for x in res], marker=marker, ls=ls,
                color=color, ms=4, label=f"noisy, {_label(r, several)}")
    if runs and runs[0].get("results"):
        res = sorted(runs[0]["results"], key=lambda x: int(x["ranks"]))
        ax.plot([int(x["ranks"]) for x in res],
                [int(x["time_ns_noise_free"]) / 1e3 for x in res], color="black", lw=1.2,
                label="noise-free")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_ylabel("time of the last rank (\u00b5s)")
    ax.legend(fontsize=8)
    page.figure(fig, "times-chart", "The simulated times themselves: noise-free and noisy.")

    page.section("Results", "results")
    rows = []
    for r in runs:
        for x in sorted(r.get("results") or [], key=lambda x: int(x["ranks"])):
            m = float(x["magnification"])
            rows.append([int(x["ranks"]), _label(r, several),
                         Cell(f"{int(x['time_ns_noise_free']) / 1e3:.3f}",
                              int(x["time_ns_noise_free"])),
                         Cell(f"{int(x['time_ns_noisy']) / 1e3:.3f}", int(x["time_ns_noisy"])),
                         Cell(magnification_text(m), m),
                         int(x["events"]),
                         Cell(f"{float(x.get('seconds') or 0):.3f}",
                              float(x.get("seconds") or 0))])
    page.table(["ranks", "run", "noise-free \u00b5s", "noisy \u00b5s", "magnification",
                "events", "seconds"], rows, id="results-table")
