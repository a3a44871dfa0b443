"""Open Snakemake's report in headless Chromium and screenshot every result it holds.

    snakemake --report report.html --configfile conf/local.yaml
    python tools/look_at_report.py report.html --out report-shots/

For every study (category) and every figure and table in it, the script clicks the
result's view button as a reader would and saves what the report shows
(`<category>__<subcategory>__<result>.png`), then checks that each figure was drawn
(an <img> or <iframe> with content, not an error). It exits non-zero and names the
result when one did not render.

Needs Playwright (`pip install playwright`, no browser download: it drives the system
Chromium, Debian package `chromium`, or the one named by --chromium).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def embedded(report: Path, name: str) -> dict:
    """A JSON object the report embeds (`results` or `categories`)."""
    text = report.read_text()
    start = text.index(f'<script id="{name}">')
    body = text[start:text.index("</script>", start)].split(f"var {name} = ", 1)[1]
    return json.loads(body.strip().rstrip(";"))


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:60]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--out", type=Path, default=Path("report-shots"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    categories = embedded(args.report, "categories")
    results = embedded(args.report, "results")
    args.out.mkdir(parents=True, exist_ok=True)
    problems, shots = [], 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(args.report.resolve().as_uri())
        page.wait_for_timeout(1000)
        page.screenshot(path=str(args.out / "00_overview.png"))
        for category, subcategories in categories.items():
            for subcategory, paths in subcategories.items():
                for index, path in enumerate(paths):
                    entry = results[path]
                    page.goto(args.report.resolve().as_uri())
                    page.get_by_role("link", name=category, exact=True).click()
                    # a category whose results have no subcategory ("Other") shows them at once
                    link = page.get_by_role("link", name=subcategory, exact=True)
                    if link.count():
                        link.click()
                    row = page.locator("tbody tr").nth(index)
                    row.locator("a[iconname=eye]").click()
                    page.wait_for_timeout(1200)
                    name = f"{slug(category)}__{slug(subcategory)}__{slug(entry['name'])}.png"
                    page.screenshot(path=str(args.out / name))
                    shots += 1
                    mime = entry["mime_type"]
                    if mime.startswith("image/") or mime == "text/html":
                        shown = page.locator("main img, main iframe, img, iframe")
                        if shown.count() == 0:
                            problems.append(f"{category} / {subcategory} / {entry['name']}: nothing shown")
        browser.close()
    print(f"{shots} results screenshotted into {args.out}/")
    for problem in problems:
        print(f"NOT RENDERED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
