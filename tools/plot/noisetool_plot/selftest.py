"""A page that shows every kind of part (facts, a sortable table, an SVG and a PNG figure):
the test of the page builder and of the browser check (tests/html)."""
TITLE = "noisetool page self-test"


def render(doc, page):
    from .page import Cell, new_figure
    page.section("Facts", "facts")
    page.facts([("ranks", int(doc.get("ranks", 2))), ("name", doc.get("name", "self-test"))])
    page.section("Table", "table")
    page.table(["rank", "delay"], [[0, Cell("1.0 ms", 1e6)], [1, Cell("2.0 ms", 2e6)]],
               id="t")
    fig, ax = new_figure()
    ax.plot([0, 1, 2], [0, 1, 4], label="square")
    ax.set_title("the line plot")
    page.figure(fig, "svgfig", "an SVG figure")
    fig, ax = new_figure()
    ax.imshow([[0, 1], [1, 0]])
    page.figure(fig, "pngfig", "a PNG figure", raster=True)
