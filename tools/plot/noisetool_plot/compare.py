"""The comparison page of `noisetool report A B --html FILE`: the summary, the sites and ranks
tables (sortable), and A against B with the noise as error bars (doc/html.md, "The comparison
page"). The document is nt_compare_write_json's (schema noisetool-compare/1)."""
from .page import CAUSE_COLORS, CAUSE_NAMES, CAUSES, Cell, fmt_ns, new_figure, use_causes

TITLE = "noisetool: two runs compared"

A_COLOR, B_COLOR = "#1f77b4", "#ff7f0e"
TOP = 12  # bars per chart: the first rows, significant first


def _signed(ns):
    return ("+" if ns >= 0 else "\u2212") + fmt_ns(abs(ns))


def _value_cells(v):
    """A, B, change, noise, verdict of a judged value, as table cells."""
    return [Cell(fmt_ns(v["a"]), v["a"]), Cell(fmt_ns(v["b"]), v["b"]),
            Cell(_signed(v["change"]), v["change"]), Cell("\u00b1" + fmt_ns(v["noise"]),
                                                          v["noise"]),
            v["verdict"]]


def _bars(page, id, caption, labels, values, title, ylabel):
    """Grouped bars A and B per label, with 2 x the noise as error bars."""
    fig, ax = new_figure(8.0, 0.5 + 0.35 * max(len(labels), 2) if len(labels) > 8 else 3.2)
    x = range(len(labels))
    w = 0.4
    ax.bar([i - w / 2 for i in x], [v["a"] / 1e3 for v in values], w,
           yerr=[2 * v["noise_a"] / 1e3 for v in values], capsize=3, color=A_COLOR, label="A")
    ax.bar([i + w / 2 for i in x], [v["b"] / 1e3 for v in values], w,
           yerr=[2 * v["noise_b"] / 1e3 for v in values], capsize=3, color=B_COLOR, label="B")
    for i, v in enumerate(values):
        if v["verdict"] == "significant":
            top = max(v["a"] + 2 * v["noise_a"], v["b"] + 2 * v["noise_b"]) / 1e3
            ax.annotate("*", (i, top), ha="center", va="bottom", fontsize=12)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 3 else 0, ha="right"
                       if len(labels) > 3 else "center", fontsize=8)
    ax.set_ylim(bottom=0)  # error bars past 0 would draw negative time
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    page.figure(fig, id, caption)


def render(doc, page):
    use_causes(doc["causes"])
    a, b = doc.get("a", {}), doc.get("b", {})
    rules = doc.get("rules", {})
    page.section("Summary", "summary")
    for line in doc.get("summary", []):
        page.note(line, warning=line.startswith(("B is", "rank", "the job")))
    page.facts([
        ("A", a.get("log", ""), "a-log"),
        ("B", b.get("log", ""), "b-log"),
        ("ranks A / B", f"{a.get('ranks', 0)} / {b.get('ranks', 0)}", "ranks"),
        ("wall A / B", f"{fmt_ns(a.get('wall_ns', 0))} / {fmt_ns(b.get('wall_ns', 0))}",
         "wall"),
        ("late arrivals A / B", f"{fmt_ns(a.get('total_delay_ns', 0))} / "
         f"{fmt_ns(b.get('total_delay_ns', 0))}", "delay"),
        ("rule", f"significant when |B \u2212 A| > {rules.get('sigmas', 3):g} x noise and "
         f">= {100 * rules.get('relative_floor', 0.1):g} % of the larger value", "rule"),
    ], id="runs")
    if a.get("partial") or b.get("partial"):
        page.note("A run is PARTIAL (something was lost): its numbers are lower bounds.",
                  warning=True)
    page.note("Noise is the change's standard error, from each run's own spread (its calls' "
              "histogram and how lumpy its slow calls and late arrivals are over the run); "
              "error bars are 2 x each run's noise; * marks a significant change "
              "(doc/compare.md).")

    sites = doc.get("sites", [])
    page.section("Call sites", "sites")
    rows = []
    for s in sites:
        where = s["location"] + (" " + s["python_call"] if s.get("python_call") else "")
        rows.append([s["function"], where, s["calls_a"], s["calls_b"]] +
                    _value_cells(s["mean_ns"]) +
                    [round(s["cov_a"], 3), round(s["cov_b"], 3),
                     Cell(fmt_ns(s["culprit_ns_a"]), s["culprit_ns_a"]),
                     Cell(fmt_ns(s["culprit_ns_b"]), s["culprit_ns_b"])])
    page.table(["function", "location", "calls A", "calls B", "per call A", "per call B",
                "change", "noise", "verdict", "cov A", "cov B", "last arriver's A",
                "last arriver's B"], rows, id="sites-table")
    judged = [s for s in sites if s["mean_ns"]["verdict"] not in ("only in A", "only in B")]
    if judged:
        shown = judged[:TOP]
        _bars(page, "sites-chart", "Time per call at each call site, A against B (error bars: "
              "2 x noise)", [f"{s['function']}\n{s['location']}" for s in shown],
              [s["mean_ns"] for s in shown], "time per call", "us per call")
    only = doc.get("only", {})
    if only.get("sites_a") or only.get("sites_b"):
        page.note(f"{only.get('sites_a', 0)} call sites only in A, {only.get('sites_b', 0)} "
                  "only in B (by function and location).")

    ranks = doc.get("ranks", [])
    page.section("Ranks", "ranks")

    def share(r, x):
        w = r[f"wall_ns_{x}"]
        return round(100.0 * r[f"mpi_ns_{x}"] / w, 2) if w else 0.0

    page.table(["rank", "lateness A", "lateness B", "change", "noise", "verdict", "late A",
                "late B", "MPI % A", "MPI % B", "cause A", "cause B"],
               [[r["rank"]] + _value_cells(r["delay_ns"]) +
                [r["late_a"], r["late_b"], share(r, "a"), share(r, "b"),
                 r["top_cause_a"] or "-", r["top_cause_b"] or "-"] for r in ranks],
               id="ranks-table")
    judged = [r for r in ranks if r["delay_ns"]["verdict"] not in ("only in A", "only in B")]
    if judged:
        shown = sorted(judged[:TOP], key=lambda r: r["rank"])
        _bars(page, "ranks-chart", "Lateness each rank imposed on the others, A against B "
              "(error bars: 2 x noise)", [f"rank {r['rank']}" for r in shown],
              [r["delay_ns"] for r in shown], "lateness imposed", "us")

    job = doc.get("job", {})
    page.section("Causes", "causes")
    fig, ax = new_figure(8.0, 2.2)
    left = {"A": 0.0, "B": 0.0}
    for cause in CAUSES:
        vals = [job.get(f"causes_{x}", {}).get(f"{cause}_ns", 0) / 1e6 for x in ("a", "b")]
        ax.barh(["A", "B"], vals, left=[left["A"], left["B"]], color=CAUSE_COLORS[cause],
                label=CAUSE_NAMES[cause])
        left["A"] += vals[0]
        left["B"] += vals[1]
    ax.invert_yaxis()
    ax.set_xlabel("delay imposed, ms")
    ax.set_title("the job's late arrivals by cause")
    ax.legend(ncol=3, fontsize=7)
    page.figure(fig, "causes-chart", "The job's delay by cause, A against B")
