"""python3 -m noisetool_plot KIND [--check] < DOC.json > PAGE.html

KIND is one of noisetool_plot.KINDS. With --check, only whether this Python can draw pages
(matplotlib imports): exit 0, or 3 with what to install on stderr.
"""
import argparse
import importlib
import json
import sys

from . import KINDS

MISSING = 3  # exit status: the plotting library is missing (tools/html.c reads it)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m noisetool_plot",
                                 description="Draw a noisetool JSON document as an HTML page.")
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("--check", action="store_true",
                    help="only check that the plotting library imports")
    ap.add_argument("--title", help="the page's title (default: from the document)")
    args = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401  (the one dependency)
    except ImportError as e:
        print(f"matplotlib is missing ({e}): install it (Debian/Ubuntu: "
              "apt install python3-matplotlib; else pip install matplotlib)", file=sys.stderr)
        return MISSING
    if args.check:
        return 0
    try:
        doc = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"the {args.kind} document is not JSON: {e}", file=sys.stderr)
        return 1
    from .page import Page
    module = importlib.import_module("." + KINDS[args.kind], __package__)
    page = Page(args.title or module.TITLE)
    module.render(doc, page)
    sys.stdout.write(page.html())
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
