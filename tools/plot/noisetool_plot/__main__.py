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
# The most a document may weigh, as for the command (NT_INFILE_DOC_MAX,
# libnoisetool/private/noisetool-private/infile.h): stdin is read no further, so that
# `< /dev/zero` ends with an error instead of filling the memory.
MAX_DOC_BYTES = 64 << 20


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m noisetool_plot",
                                 description="Draw a noisetool JSON document as an HTML page.")
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("--check", action="store_true",
                    help="only check that the plotting library imports")
    ap.add_argument("--title", help="the page's title (default: from the document)")
    args = ap.parse_args(argv)
    doc = None
    if not args.check:
        # The document first, bounded: a wrong input fails alike with or without matplotlib.
        data = sys.stdin.buffer.read(MAX_DOC_BYTES + 1)
        if len(data) > MAX_DOC_BYTES:
            print(f"the {args.kind} document is larger than {MAX_DOC_BYTES >> 20} MiB",
                  file=sys.stderr)
            return 1
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            print(f"the {args.kind} document is not JSON: {e}", file=sys.stderr)
            return 1
    try:
        import matplotlib  # noqa: F401  (the one dependency)
    except ImportError as e:
        print(f"matplotlib is missing ({e}): install it (Debian/Ubuntu: "
              "apt install python3-matplotlib; else pip install matplotlib)", file=sys.stderr)
        return MISSING
    if args.check:
        return 0
    from .page import Page
    module = importlib.import_module("." + KINDS[args.kind], __package__)
    page = Page(args.title or module.TITLE)
    module.render(doc, page)
    sys.stdout.write(page.html())
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
