"""noisetool's plotting helper: turns the JSON documents of the noisetool commands into
self-contained HTML pages with matplotlib figures (doc/html.md).

Each kind of page is a module with ``render(doc, page)``, ``doc`` the JSON the command wrote
and ``page`` a :class:`noisetool_plot.page.Page` to fill. ``python3 -m noisetool_plot KIND``
reads the JSON on stdin and writes the page on stdout; the noisetool command runs it for
``--html`` (tools/html.c).
"""

# The kinds of page, and the module that draws each.
KINDS = {
    "selftest": "selftest",
    "report": "report",
    "compare": "compare",
    "detour": "detour",
    "ftq": "ftq",
    "simulate": "simulate",
    "coll-noise": "collnoise",
    "udp-pingpong": "pingpong",
    "hosts": "hosts",
}
