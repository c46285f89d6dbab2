"""The page of `noisetool ftq --html` (FTQ or FWQ): the same figures as the detour page, the
detours being lossy quanta merged (doc/detour-json.md "FTQ"); drawn by detour.py."""
from . import detour

TITLE = "noisetool ftq: the node's noise"


def render(doc, page):
    """Fill page from a noisetool-noise/1 document written by ftq (method ftq or fwq)."""
    detour.render(doc, page)
