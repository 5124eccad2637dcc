"""Capture every page of a running Roofline Explorer server: 1440 and 390 px, light and dark.

Usage (a server must already be running; see README for how to start one):

    .venv/bin/python ci/screenshots.py http://127.0.0.1:8501 docs/screenshots/after

Writes ``<page>-<width>-<scheme>.png`` per page into the output folder. Screenshots are the
whole page (up to 5000 CSS px tall, device scale 1) so the PNGs stay small; the
browser's colour-scheme preference is set with Playwright's ``color_scheme`` so the app's
"follow the system" theme is what is pictured. Uses Debian's Chromium (/usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root
from tools.server import CHROMIUM, CHROMIUM_ARGS

PAGES = {
    "overview": "/",
    "solve": "/solve",
    "sweep": "/sweep",
    "compare": "/compare",
    "decode": "/decode",
    "catalogue": "/catalogue",
    "plan": "/plan",
    "accuracy": "/accuracy",
}
# The README's three questions, one link each (--pages q1-serve,q2-plan,q3-operators).
QUESTIONS = {
    "q1-serve": "/decode?model=Llama-3.1-70B&hardware=H100&tp=2&input_tokens=8192"
    "&output_tokens=256",
    "q2-plan": "/plan?model=Llama-3.1-70B&hardware=H100,A100,MI300X&input_tokens=1024"
    "&output_tokens=256&ttft_ms=2000&tpot_ms=50",
    "q3-operators": "/solve?model=Llama-3.1-8B&hardware=A100&batch=1",
}
LINKS = PAGES | QUESTIONS
# expanders opened before the picture (what the question's answer waits behind a click)
OPEN = {
    "q2-plan": ("Configurations that meet the SLOs, cheapest first",),
    "q3-operators": ("Operators (serving model, one device)",),
}
VIEWPORTS = {1440: 1000, 390: 900}
MAX_HEIGHT = 5000  # CSS px: keeps each PNG small; taller pages are cut at the bottom
SCHEMES = ("light", "dark")


def wait_drawn(page, settle_ms: int) -> None:
    """Wait for the script to finish (no status widget) and the charts to draw."""
    page.wait_for_selector("[data-testid='stMainBlockContainer']", timeout=90_000)
    for _ in range(2):
        page.wait_for_function(
            "() => !document.querySelector(\"[data-testid='stStatusWidget']\")", timeout=90_000
        )
        page.wait_for_timeout(500)
    # Streamlit draws grey skeletons until each element's first paint (charts last).
    page.wait_for_function(
        "() => !document.querySelector(\"[data-testid='stSkeleton']\")", timeout=90_000
    )
    page.wait_for_timeout(settle_ms)


def shoot_whole_page(page, width: int, height: int, target: Path) -> None:
    """Grow the viewport to the page's height (Streamlit scrolls stMain, not the document)."""
    tall = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
    page.set_viewport_size({"width": width, "height": max(height, min(tall, MAX_HEIGHT))})
    page.wait_for_timeout(1500)  # Plotly redraws charts at the new size
    page.screenshot(path=str(target))
    page.set_viewport_size({"width": width, "height": height})
    shrink(target)


def shrink(target: Path) -> None:
    """Re-save as a 256-colour PNG (a third of the size; UI screenshots have few colours)."""
    with Image.open(target) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(target, optimize=True)


def capture(
    base: str,
    out: Path,
    pages: dict[str, str],
    settle_ms: int,
    schemes: tuple[str, ...] = SCHEMES,
    widths: tuple[int, ...] = tuple(VIEWPORTS),
) -> list[Path]:
    """Screenshot each page at each width and colour scheme; returns the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for scheme in schemes:
            for width in widths:
                height = VIEWPORTS[width]
                context = browser.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                page = context.new_page()
                for name, path in pages.items():
                    page.goto(base.rstrip("/") + path)
                    wait_drawn(page, settle_ms)
                    for title in OPEN.get(name, ()):  # drawn only while open: opened
                        summary = page.locator("[data-testid='stMain'] summary", has_text=title)
                        summary.first.click()
                        wait_drawn(page, settle_ms)
                    target = out / f"{name}-{width}-{scheme}.png"
                    shoot_whole_page(page=page, width=width, height=height, target=target)
                    written.append(target)
                    failed = page.locator("[data-testid='stException']").count()
                    print(target, "(SHOWS AN EXCEPTION)" if failed else "", flush=True)
                    problems += [target] if failed else []
                context.close()
        browser.close()
    if problems:
        raise SystemExit(f"{len(problems)} page(s) showed an exception: {problems}")
    return written


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and capture the set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url", help="e.g. http://127.0.0.1:8501")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page names")
    parser.add_argument("--settle-ms", type=int, default=3000, help="extra wait for charts")
    parser.add_argument("--schemes", default=",".join(SCHEMES), help="light,dark")
    parser.add_argument("--widths", default="1440,390", help="1440,390")
    args = parser.parse_args(argv)
    chosen = [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in LINKS]
    if unknown:
        parser.error(f"unknown page(s) {unknown}; choose from {', '.join(LINKS)}")
    schemes = tuple(x for x in args.schemes.split(",") if x in SCHEMES) or SCHEMES
    try:
        widths = tuple(int(x) for x in args.widths.split(",") if int(x) in VIEWPORTS)
    except ValueError:
        parser.error("--widths: comma-separated 1440 and/or 390")
    links = {p: LINKS[p] for p in chosen}
    capture(
        base=args.base_url,
        out=args.out_dir,
        pages=links,
        settle_ms=args.settle_ms,
        schemes=schemes,
        widths=widths or (1440, 390),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
