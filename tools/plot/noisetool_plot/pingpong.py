"""The page of `udp-pingpong matrix --json` (examples/udp-pingpong, `noisetool plot
udp-pingpong`): the round trip by competing load and wait policy, one panel per size and
request shape (Thitikamol & Keleher Fig 1, extended), and adaptive against the fixed policies.
"""
from .page import Cell, new_figure

TITLE = "udp-pingpong: round trips under competing load"

POLICY_COLORS = {"busy": "#d62728", "timed": "#ff7f0e", "blocking": "#1f77b4",
                 "adaptive": "#2ca02c"}


def us_text(x):
    """A time in us as the example's table prints it (1 decimal; tests compare)."""
    return f"{float(x):.1f}"


def _panels(doc):
    """(size, work_us) of every panel, in the table's order."""
    out = []
    for r in doc.get("rows") or []:
        k = (int(r["size"]), int(r["work_us"]))
        if k not in out:
            out.append(k)
    return out


def _shape(size, work):
    return f"{size} B, " + (f"server computes {work} us" if work else "echo")


def render(doc, page):
    """Fill page from a noisetool-udp-pingpong/1 document."""
    if doc.get("schema") != "noisetool-udp-pingpong/1":
        page.note(f"not a noisetool-udp-pingpong/1 document (schema {doc.get('schema')!r})",
                  warning=True)
        return
    rows = doc.get("rows") or []
    page.section("Run", "run")
    facts = [
        ("server CPU (with the load)", str(doc.get("server_cpu")), "server_cpu"),
        ("client CPU", str(doc.get("client_cpu")), "client_cpu"),
        ("backend", str(doc.get("backend")), "backend"),
        ("per cell", f"{doc.get('repeat')} rounds of {float(doc.get('seconds') or 0):g} s "
                     f"after {float(doc.get('warmup_s') or 0):g} s warm-up", "per_cell"),
    ]
    for i, a in enumerate(doc.get("adaptive") or []):
        load = f"{a['load_pct']} %" if a["load_pct"] else "no load"
        facts.append((f"adaptive / best fixed, {_shape(a['size'], a['work_us'])}, {load}",
                      f"mean \u00d7{float(a['mean_vs_best']):.3f}, "
                      f"p99 \u00d7{float(a['p99_vs_best']):.3f}", f"adaptive{i}"))
    page.facts(facts, id="run-facts")
    if not rows:
        page.note("No cell ran.", warning=True)
        return

    panels = _panels(doc)
    for stat, label in (("mean_us", "mean"), ("p99_us", "p99")):
        page.section(f"{label} round trip", f"{label}-rtt")
        fig, _ = new_figure(8.0, 2.8 * ((len(panels) + 1) // 2))
        fig.clf()
        ncol = 2 if len(panels) > 1 else 1
        nrow = (len(panels) + ncol - 1) // ncol
        axs = fig.subplots(nrow, ncol, squeeze=False)
        for k, (size, work) in enumerate(panels):
            ax = axs[k // ncol][k % ncol]
            mine = [r for r in rows if int(r["size"]) == size and int(r["work_us"]) == work]
            loads = sorted({int(r["load_pct"]) for r in mine})
            pols = [p for p in POLICY_COLORS if any(r["policy"] == p for r in mine)]
            pols += sorted({r["policy"] for r in mine} - set(pols))
            width = 0.8 / max(len(pols), 1)
            for j, pol in enumerate(pols):
                ys = []
                for ld in loads:
                    v = [r[stat] for r in mine if r["policy"] == pol and int(r["load_pct"]) == ld]
                    ys.append(float(v[0]) if v else 0.0)
                ax.bar([i - 0.4 + width * (j + 0.5) for i in range(len(loads))], ys,
                       width=width, color=POLICY_COLORS.get(pol), label=pol)
            ax.set_xticks(range(len(loads)))
            ax.set_xticklabels([f"{ld} %" if ld else "none" for ld in loads])
            ax.set_yscale("log")
            ax.set_title(_shape(size, work), fontsize=9)
            ax.set_xlabel("competing load on the server's CPU")
            ax.set_ylabel(f"{label} RTT (\u00b5s)")
        for k in range(len(panels), nrow * ncol):
            axs[k // ncol][k % ncol].set_visible(False)
        axs[0][0].legend(fontsize=7)
        fig.tight_layout()
        page.figure(fig, f"{label}-chart",
                    f"The {label} round trip (median over the rounds) by competing load and "
                    "wait policy (Thitikamol & Keleher Fig 1, extended).")

    page.section("Table", "table")
    trows = [[Cell(str(r["size"]), int(r["size"])), Cell(str(r["work_us"]), int(r["work_us"])),
              Cell(f"{r['load_pct']} %" if r["load_pct"] else "none", int(r["load_pct"])),
              r["policy"],
              Cell(us_text(r["mean_us"]), float(r["mean_us"])),
              Cell(us_text(r["p99_us"]), float(r["p99_us"])),
              Cell(us_text(r["p999_us"]), float(r["p999_us"])),
              int(r["trips"]),
              Cell(f"{float(r['competitor_share']):.2f}", float(r["competitor_share"]))]
             for r in rows]
    page.table(["size B", "work \u00b5s", "load", "policy", "mean \u00b5s", "p99 \u00b5s",
                "p99.9 \u00b5s", "trips", "competitor share"], trows, id="rtt-table")
