#!/usr/bin/env python3
"""Open an HTML page in a real headless browser (Debian's chromium, through selenium and
chromium-driver) with the network cut off, and check it: no console error, no resource that
failed or came from outside the page, every image decoded, the expected elements and text
rendered, and how long it took to load. Optionally save a screenshot.

  check-page.py PAGE [--expect CSS TEXT]... [--charts N] [--max-load-s S]
                [--screenshot PNG] [--width PX] [--max-height PX] [--json OUT]

--expect CSS TEXT: the first element matching the CSS selector is rendered (displayed) and
its text contains TEXT ("" for any text). --charts N: at least N
figure.chart elements, each with a drawn SVG or a decoded image. Exit 0 when every check
holds, 1 when one fails (each failure one line), 77 when no browser can be started here.
"""
import argparse
import json
import os
import shutil
import sys
import time

SKIP = 77


def browser(width):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("SKIP: selenium is missing (apt install python3-selenium)")
        sys.exit(SKIP)
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not chromium or not os.access(driver, os.X_OK):
        print("SKIP: chromium or chromedriver is missing (apt install chromium chromium-driver)")
        sys.exit(SKIP)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--window-size={width},1000", "--hide-scrollbars",
              # No network: whatever the page would fetch from outside fails, and says so.
              "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
              "--disable-background-networking", "--no-first-run"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(driver), options=opts)
    except Exception as e:  # selenium's own errors, a browser that cannot start here
        print(f"SKIP: the browser does not start: {str(e).splitlines()[0]}")
        sys.exit(SKIP)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--expect", nargs=2, action="append", default=[], metavar=("CSS", "TEXT"))
    ap.add_argument("--charts", type=int, default=0)
    ap.add_argument("--max-load-s", type=float, default=0)
    ap.add_argument("--screenshot")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--max-height", type=int, default=16000,
                    help="the screenshot's height at most (the page's top)")
    ap.add_argument("--json", help="write what was found (load time, charts, errors) here")
    a = ap.parse_args()
    if not os.path.isfile(a.page):
        print(f"FAIL: no page {a.page}")
        return 1
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import NoSuchElementException
    d = browser(a.width)
    fails = []
    found = {"page": a.page, "bytes": os.path.getsize(a.page)}
    try:
        d.set_page_load_timeout(max(60, a.max_load_s * 4))
        t0 = time.monotonic()
        d.get("file://" + os.path.abspath(a.page))
        load_s = time.monotonic() - t0
        found["load_s"] = round(load_s, 3)
        if a.max_load_s and load_s > a.max_load_s:
            fails.append(f"the page took {load_s:.2f} s to load (limit {a.max_load_s} s)")
        # Resources: every one inline (data:) and loaded; nothing from a file or the network.
        res = d.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        outside = [r for r in res if not r.startswith("data:")]
        if outside:
            fails.append(f"resources from outside the page: {outside[:5]}")
        broken = d.execute_script(
            "return Array.from(document.images).filter(i => !i.complete || !i.naturalWidth)"
            ".map(i => (i.alt || i.src).slice(0, 80))")
        if broken:
            fails.append(f"images not decoded: {broken[:5]}")
        charts = d.execute_script(
            "return Array.from(document.querySelectorAll('figure.chart')).map(f => {"
            " const s = f.querySelector('svg'), i = f.querySelector('img');"
            " const r = (s || i) ? (s || i).getBoundingClientRect() : null;"
            " return {id: f.id, drawn: !!r && r.width > 0 && r.height > 0 &&"
            " (s ? s.querySelectorAll('path,use,rect,text').length > 0 : i.naturalWidth > 0)};"
            "})")
        found["charts"] = [c["id"] for c in charts]
        undrawn = [c["id"] for c in charts if not c["drawn"]]
        if undrawn:
            fails.append(f"charts not drawn: {undrawn}")
        if len(charts) < a.charts:
            fails.append(f"{len(charts)} charts, expected at least {a.charts}")
        for css, text in a.expect:
            try:
                el = d.find_element(By.CSS_SELECTOR, css)
            except NoSuchElementException:
                fails.append(f"nothing matches {css!r}")
                continue
            shown = el.text if el.is_displayed() else None
            if shown is None:
                fails.append(f"{css!r} is not displayed")
            elif text and text not in shown:
                fails.append(f"{css!r} shows {shown[:120]!r}, not {text!r}")
        logs = d.get_log("browser")
        found["console"] = [f"{m['level']}: {m['message']}" for m in logs]
        errors = [m for m in logs if m["level"] in ("SEVERE", "ERROR")]
        for m in errors:
            fails.append(f"console error: {m['message'][:200]}")
        if a.screenshot:
            height = d.execute_script("return document.documentElement.scrollHeight")
            d.set_window_size(a.width, min(max(height, 600), a.max_height))
            d.save_screenshot(a.screenshot)
            found["screenshot"] = a.screenshot
    finally:
        d.quit()
    found["failures"] = fails
    if a.json:
        with open(a.json, "w") as f:
            json.dump(found, f, indent=1)
    for f in fails:
        print(f"FAIL: {a.page}: {f}")
    print(f"{a.page}: {found['bytes']} bytes, loaded in {found['load_s']} s, "
          f"{len(found['charts'])} charts, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
