"""One self-contained HTML page: sections of facts, sortable tables and matplotlib figures,
everything inline (CSS, a few lines of script for sorting, figures as SVG or PNG data), so the
file opens in any browser with no network.

Figures are SVG with their text kept as text (svg.fonttype "none": a test or a search finds
the numbers on the page) unless they hold many marks (a heat map, 10^4 points), which are PNG.
"""
import base64
import html
import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams.update({
    "svg.fonttype": "none",      # text stays text
    "svg.hashsalt": "noisetool",  # the same document gives the same page
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
})

# The causes of lateness, as the document being drawn lists them ("causes": libnoisetool's
# NT_CAUSES, noisetool/attrib.h): their keys in order, colours and words. Filled in place by
# use_causes before a page is drawn, so that a cause added to the list reaches every page.
CAUSES = []
CAUSE_COLORS = {}
CAUSE_NAMES = {}


def use_causes(causes):
    """Take the causes from a document's "causes" list ({"key", "colour", "words"}, ...)."""
    CAUSES[:] = [c["key"] for c in causes]
    CAUSE_COLORS.clear()
    CAUSE_COLORS.update({c["key"]: c["colour"] for c in causes})
    CAUSE_NAMES.clear()
    CAUSE_NAMES.update({c["key"]: c["words"] for c in causes})

_CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 14px; margin: 1.5em auto;
       max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
p.note { color: #555; } p.warning { color: #a00; font-weight: bold; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.5em; }
dl.facts dt { font-weight: bold; } dl.facts dd { margin: 0; font-family: monospace; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; }
td.num { text-align: right; font-family: monospace; }
th.sortable { cursor: pointer; background: #f4f4f4; } th.sortable:hover { background: #e4e4e4; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
figure { margin: 0.8em 0; } figure svg, figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
nav a { margin-right: 1em; }
"""

# Click a header to sort by it (numbers by their data-v value), again to reverse.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th").forEach(function (th, col) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var desc = th.getAttribute("aria-sort") !== "descending";
      t.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(r) {
        var c = r.cells[col], v = c.getAttribute("data-v");
        return v !== null ? parseFloat(v) : c.textContent;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), o = x < y ? -1 : x > y ? 1 : 0;
        return desc ? -o : o;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def esc(s):
    """Text for HTML."""
    return html.escape(str(s), quote=True)


def fmt_ns(ns):
    """A duration in ns as a short human string: 850 ns, 12.3 us, 4.56 ms, 1.23 s."""
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def fmt_num(x, digits=4):
    """A number as the tables print it: integers whole, others with `digits` significant."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}".replace(",", "\u2009")
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return f"{x:.{digits}g}"
    return str(x)


class Cell:
    """A table cell shown as `text` and sorted by `value` (a number)."""

    def __init__(self, text, value=None):
        self.text = text
        self.value = value


class Page:
    """The page being built: add sections, facts, tables and figures in order, then html()."""

    def __init__(self, title):
        self.title = title
        self.parts = []
        self.toc = []
        self.figures = 0

    def section(self, title, id):
        """A new section (h2) with an anchor id, listed in the page's contents."""
        self.toc.append((id, title))
        self.parts.append(f'<h2 id="{esc(id)}">{esc(title)}</h2>')

    def note(self, text, warning=False):
        """A paragraph of text; warning=True for what the reader must not miss (partial)."""
        cls = "warning" if warning else "note"
        self.parts.append(f'<p class="{cls}">{esc(text)}</p>')

    def raw(self, markup):
        """Markup as it is (the caller escaped it)."""
        self.parts.append(markup)

    def facts(self, items, id=None):
        """A list of (name, value[, key]): a definition list; key (default: name) becomes the
        value's data-key, for tests and scripts that read the page."""
        out = [f'<dl class="facts"{f" id={chr(34)}{esc(id)}{chr(34)}" if id else ""}>']
        for item in items:
            name, value = item[0], item[1]
            key = item[2] if len(item) > 2 else name
            text = fmt_num(value) if not isinstance(value, str) else value
            out.append(f'<dt>{esc(name)}</dt><dd data-key="{esc(key)}">{esc(text)}</dd>')
        out.append("</dl>")
        self.parts.append("".join(out))

    def table(self, columns, rows, id, sortable=True, caption=None):
        """A table: columns are header strings; each row a list of cells, each a str, a number
        (right-aligned, sorted as a number) or a Cell."""
        cls = ' class="sortable"' if sortable else ""
        out = [f'<table id="{esc(id)}"{cls}>']
        if caption:
            out.append(f"<caption>{esc(caption)}</caption>")
        out.append("<thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in columns) +
                   "</tr></thead><tbody>")
        for row in rows:
            cells = []
            for c in row:
                if isinstance(c, Cell):
                    v = "" if c.value is None else f' data-v="{c.value!r}"'
                    num = ' class="num"' if c.value is not None else ""
                    cells.append(f"<td{num}{v}>{esc(c.text)}</td>")
                elif isinstance(c, (int, float)) and not isinstance(c, bool):
                    cells.append(f'<td class="num" data-v="{c!r}">{esc(fmt_num(c))}</td>')
                else:
                    cells.append(f"<td>{esc(c)}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
        self.parts.append("".join(out))

    def figure(self, fig, id, caption, raster=False):
        """A matplotlib figure, inline: SVG (text kept as text) or, with raster=True, PNG (for
        figures with many marks). The figure is closed."""
        buf = io.BytesIO()
        if raster:
            fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
            data = base64.b64encode(buf.getvalue()).decode("ascii")
            body = f'<img alt="{esc(caption)}" src="data:image/png;base64,{data}">'
        else:
            fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
            svg = buf.getvalue().decode("utf-8")
            body = svg[svg.index("<svg"):]  # without the XML declaration and doctype
        plt.close(fig)
        self.figures += 1
        self.parts.append(f'<figure id="{esc(id)}" class="chart">{body}'
                          f"<figcaption>{esc(caption)}</figcaption></figure>")

    def html(self):
        """The whole page."""
        nav = "".join(f'<a href="#{esc(i)}">{esc(t)}</a>' for i, t in self.toc)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{esc(self.title)}</title>"
                '<meta name="generator" content="noisetool (matplotlib ' +
                esc(matplotlib.__version__) + ')">'
                f"<style>{_CSS}</style></head><body><h1>{esc(self.title)}</h1>"
                f"<nav>{nav}</nav>" + "\n".join(self.parts) +
                f"<script>{_SCRIPT}</script></body></html>\n")


def new_figure(width_in=8.0, height_in=3.2):
    """A figure of the page's usual size."""
    return plt.subplots(figsize=(width_in, height_in))
