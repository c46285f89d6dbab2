"""The fleet view's page, `noisetool hosts LOG|DIR... --html FILE`: which hosts made jobs late
across many jobs' logs -- the hosts by the delay they imposed, stacked by cause, that delay per
hour of their ranks' time, the table of every host (sortable), the jobs each hurt most and the
logs left out (doc/hosts.md, doc/html.md). The document is nt_hosts_write_json's (schema
noisetool-hosts/1)."""
import datetime

from .page import CAUSE_NAMES, CAUSES, Cell, fmt_ns, new_figure, use_causes
from .report import _stacked

TITLE = "noisetool: which hosts make jobs late"

BARS = 20  # hosts per chart: the most delay first


def _when(ns):
    if not ns:
        return "not recorded"
    t = datetime.datetime.fromtimestamp(ns / 1e9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


def _job_name(w):
    """A worst job as the text view names it: its batch job and user where the log says."""
    parts = []
    if w.get("batch_job"):
        parts.append(f"{w.get('batch_system') or '?'} {w['batch_job']}")
    if w.get("user"):
        parts.append(w["user"])
    return ", ".join(parts) or "-"


def render(doc, page):
    use_causes(doc["causes"])
    hosts = doc.get("hosts", [])
    bad = doc.get("unreadable", [])
    page.section("Summary", "summary")
    page.facts([
        ("jobs", str(doc.get("jobs", 0)), "jobs"),
        ("ranks", str(doc.get("ranks", 0)), "ranks"),
        ("hosts", str(len(hosts)), "hosts"),
        ("from", _when(doc.get("first_job_unix_ns", 0)), "first-job"),
        ("to", _when(doc.get("last_job_unix_ns", 0)), "last-job"),
        ("delay imposed", fmt_ns(doc.get("delay_ns", 0)), "delay"),
        ("held up inside calls", fmt_ns(doc.get("held_ns", 0)), "held"),
        ("logs left out", str(len(bad)), "unreadable"),
    ], id="fleet")
    page.note("Each host's delay is what its ranks imposed on the jobs they were in by arriving "
              "last at collectives (each job report's culprits by node), split by what the OS "
              "did to them; per rank-hour it is set against the time its ranks ran, so that a "
              "host that ran more jobs does not come first for that alone (doc/hosts.md).")
    if bad:
        page.note(f"{len(bad)} log(s) could not be read and are left out (listed at the end).",
                  warning=True)

    page.section("Hosts", "hosts")
    delayed = [x for x in hosts if x.get("delay_ns", 0) > 0]
    if not delayed:
        page.note("No host made a job late: no collective instance was late in these logs.")
    else:
        top = delayed[:BARS]
        more = f" (the {len(top)} with most of {len(delayed)})" if len(delayed) > len(top) else ""
        fig, ax = new_figure(8, 0.8 + 0.25 * len(top))
        _stacked(ax, [x["host"] for x in top], top)
        ax.set_title("Delay imposed per host" + more)
        page.figure(fig, "hosts-delay", "Delay each host's ranks imposed on their jobs, by cause")
        fig, ax = new_figure(8, 0.8 + 0.25 * len(top))
        y = list(range(len(top)))
        ax.barh(y, [x.get("delay_ms_per_rank_hour", 0) for x in top], color="#555555",
                height=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels([x["host"] for x in top], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("delay imposed per hour of its ranks' wall time (ms)")
        ax.set_title("Delay per rank-hour" + more)
        page.figure(fig, "hosts-rate", "The same hosts, their delay per hour of their ranks' "
                    "time")
    rows = []
    for x in hosts:
        d = x.get("delay_ns", 0)
        causes = x.get("causes", {})
        rows.append([x["host"], Cell(fmt_ns(d), d),
                     Cell(f"{100 * x.get('share', 0):.1f}", x.get("share", 0)),
                     Cell(f"{x.get('delay_ms_per_rank_hour', 0):.1f}",
                          x.get("delay_ms_per_rank_hour", 0)),
                     Cell(f"{x.get('jobs_hurt', 0)}/{x.get('jobs', 0)}", x.get("jobs_hurt", 0)),
                     Cell(f"{x.get('rank_ns', 0) / 3.6e12:.3f}", x.get("rank_ns", 0)),
                     Cell(fmt_ns(x.get("held_ns", 0)), x.get("held_ns", 0))] +
                    [Cell(f"{100 * causes.get(k + '_ns', 0) / d:.1f}" if d else "0.0",
                          causes.get(k + "_ns", 0)) for k in CAUSES])
    page.table(["host", "delay", "share %", "ms per rank-hour", "jobs hurt", "rank-hours",
                "held up"] + [CAUSE_NAMES[k] + " %" for k in CAUSES], rows, "hosts-table",
               caption="Every host, most delay first (click a column to sort)")

    page.section("The jobs and call sites each host hurt most", "worst-jobs")
    rows = [[x["host"], Cell(fmt_ns(w.get("delay_ns", 0)), w.get("delay_ns", 0)), _job_name(w),
             w.get("log", ""), w.get("command", "") or "?"]
            for x in hosts for w in x.get("worst_jobs", [])]
    if rows:
        page.table(["host", "delay", "batch job, user", "log", "command"], rows, "worst-jobs-table",
                   caption="At most 3 jobs a host, most delay first")
    else:
        page.note("No job was hurt.")
    rows = [[x["host"], Cell(fmt_ns(s.get("delay_ns", 0)), s.get("delay_ns", 0)),
             s.get("function", "?"),
             f"{s.get('module', '?').rsplit('/', 1)[-1]}+0x{s.get('offset', 0):x}",
             s.get("module", ""), s.get("jobs", 0)]
            for x in hosts for s in x.get("worst_sites", [])]
    if rows:
        page.table(["host", "delay", "function", "site", "module", "jobs"], rows,
                   "worst-sites-table", caption="The call sites each host's ranks arrived last "
                   "at, at most 3 a host, most delay first (one binary's site is one across jobs)")

    if bad:
        page.section("Logs left out", "unreadable")
        page.table(["log", "why"], [[u.get("log", ""), u.get("why", "")] for u in bad],
                   "unreadable-table")
