"""The page of `coll-noise --json` (examples/coll-noise, `noisetool plot coll-noise`): the
magnification of each collective by detour length and interval, synchronized and not (Beckman
et al. 2006, section 4 and Fig 6), and the injector's own account of what it did.
"""
from .page import Cell, new_figure

TITLE = "coll-noise: collectives under injected noise"

COLL_COLORS = {"barrier": "#1f77b4", "allreduce": "#2ca02c", "alltoall": "#9467bd"}


def x_text(x):
    """A magnification as the example's table prints it (2 decimals; tests compare)."""
    return f"{float(x):.2f}"


def render(doc, page):
    """Fill page from a noisetool-coll-noise/1 document."""
    if doc.get("schema") != "noisetool-coll-noise/1":
        page.note(f"not a noisetool-coll-noise/1 document (schema {doc.get('schema')!r})",
                  warning=True)
        return
    cells = doc.get("cells") or []
    ratio = doc.get("ratio_pct")
    page.section("Run", "run")
    facts = [
        ("ranks", int(doc.get("ranks") or 0), "ranks"),
        ("noise", f"ratio {ratio:g} % (interval = detour / ratio)" if ratio is not None
         else "every detour length at every interval", "noise"),
        ("seconds per measurement", f"{float(doc.get('seconds') or 0):g}", "seconds"),
        ("rounds", int(doc.get("rounds") or 0), "rounds"),
        ("seed", str(doc.get("seed")), "seed"),
    ]
    if cells:
        worst = max(cells, key=lambda c: float(c["unsync_x"]))
        facts.append(("worst unsync magnification",
                      f"{x_text(worst['unsync_x'])} ({worst['collective']}, "
                      f"{worst['detour_us']:g} us every {worst['interval_ms']:g} ms)",
                      "worst_unsync"))
    page.facts(facts, id="run-facts")
    if not cells:
        page.note("No cell was measured (every one outside the injector's bounds).",
                  warning=True)
        return

    page.section("Magnification", "magnification")
    colls = [c for c in COLL_COLORS if any(x["collective"] == c for x in cells)]
    grid = ratio is None
    fig, axes = new_figure(8.0, 3.2)
    fig.clf()
    axs = fig.subplots(1, 2, sharey=True)
    for ax, mode in zip(axs, ("sync", "unsync")):
        for coll in colls:
            mine = [x for x in cells if x["collective"] == coll]
            if grid:  # one curve per collective and detour, against the interval
                for d in sorted({x["detour_us"] for x in mine}):
                    pts = sorted((x["interval_ms"], x[mode + "_x"]) for x in mine
                                 if x["detour_us"] == d)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                            color=COLL_COLORS[coll], label=f"{coll} {d:g} us")
                ax.set_xlabel("interval between detours (ms)")
            else:
                pts = sorted((x["detour_us"], x[mode + "_x"]) for x in mine)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                        color=COLL_COLORS[coll], label=coll)
                ax.set_xlabel("detour length (\u00b5s), same noise ratio")
        ax.set_xscale("log")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_title("synchronized" if mode == "sync" else "unsynchronized")
    axs[0].set_ylabel("magnification (noisy / quiet)")
    axs[1].legend(fontsize=7)
    page.figure(fig, "magnification-chart",
                "The mean time per call with noise over the quiet time, by detour length "
                "(and interval), synchronized and not (Beckman et al. section 4, Fig 6).")

    fig, ax = new_figure(8.0, 3.0)
    labels = [f"{x['collective']}\n{x['detour_us']:g}us/{x['interval_ms']:g}ms" for x in cells]
    pos = list(range(len(cells)))
    ax.bar([p - 0.2 for p in pos], [x["sync_x"] for x in cells], width=0.4, color="#1f77b4",
           label="sync")
    ax.bar([p + 0.2 for p in pos], [x["unsync_x"] for x in cells], width=0.4,
           color="#d62728", label="unsync")
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_xticks(pos)
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("magnification")
    ax.legend(fontsize=8)
    page.figure(fig, "cells-chart", "Every cell of the table, sync beside unsync.")

    page.section("Table", "table")
    rows = []
    for x in cells:
        rows.append([x["collective"], Cell(f"{x['detour_us']:g} us", x["detour_us"]),
                     Cell(f"{x['interval_ms']:.2f} ms", x["interval_ms"]),
                     Cell(f"{x['quiet_us']:.2f}", x["quiet_us"]),
                     Cell(f"{x['sync_us']:.2f}", x["sync_us"]),
                     Cell(f"{x['unsync_us']:.2f}", x["unsync_us"]),
                     Cell(x_text(x["sync_x"]), x["sync_x"]),
                     Cell(x_text(x["unsync_x"]), x["unsync_x"])])
    page.table(["collective", "detour", "interval", "quiet \u00b5s", "sync \u00b5s",
                "unsync \u00b5s", "sync \u00d7", "unsync \u00d7"], rows, id="cells-table")
    rows = []
    for x in cells:
        for mode in ("sync", "unsync"):
            j = x.get("injected_" + mode) or {}
            asked = float(j.get("detours") or 0) * float(x["detour_us"]) / 1e3
            rows.append([mode, x["collective"], Cell(f"{x['detour_us']:g} us", x["detour_us"]),
                         Cell(f"{x['interval_ms']:.2f} ms", x["interval_ms"]),
                         Cell(f"{float(j.get('periods') or 0):.1f}",
                              float(j.get("periods") or 0)),
                         int(j.get("detours") or 0),
                         Cell(f"{float(j.get('length_ms') or 0):.3f}",
                              float(j.get("length_ms") or 0)),
                         Cell(f"{asked:.3f}", asked),
                         Cell(f"{float(j.get('off_cpu_ms') or 0):.3f}",
                              float(j.get("off_cpu_ms") or 0))])
    page.table(["mode", "collective", "detour", "interval", "periods", "detours", "length ms",
                "asked ms", "off-CPU ms"], rows, id="injector-table",
               caption="What the injector did, all ranks and rounds")
