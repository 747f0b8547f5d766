"""Headless Debian Chromium for the browser tests: the DOM of a page after its scripts ran, a screenshot, and the
layout of a report page at a given window size (what a reader sees). `.ci/run` installs Chromium; tests that need
it skip where it is absent (``CHROMIUM is None``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")
WIDTH, HEIGHT = 1400, 900  # the window a report must read well in


def rendered(url: str, profile: Path, size: tuple[int, int] = (WIDTH, HEIGHT), budget_ms: int = 20000) -> str:
    """The DOM of ``url`` after its scripts ran, in a fresh browser profile (nothing remembered)."""
    out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                          f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=180)
    return out.stdout


def screenshot(page: Path, png: Path, profile: Path, size: tuple[int, int] = (WIDTH, HEIGHT)) -> Path:
    """A screenshot of the first screen of ``page`` (a local HTML file) at ``size``."""
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                    f"--screenshot={png}", page.resolve().as_uri()], capture_output=True, text=True, timeout=180,
                   check=True)
    return png


# Measured in the page: horizontal overflow of the whole page, where the ids of interest sit, every table wider
# than its box and whether that box scrolls, and the word count of each paragraph before the first table.
_PROBE = """
<script>
window.addEventListener('load', () => {
  const top = el => el.getBoundingClientRect().top + window.scrollY;
  const ids = {};
  for (const el of document.querySelectorAll('[id]')) ids[el.id] = top(el);
  const tables = [...document.querySelectorAll('table')].map(t => {
    let box = t.parentElement;
    while (box && box !== document.body && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    const scrolls = !!box && box !== document.body;
    return {width: t.scrollWidth, box: scrolls ? box.clientWidth : window.innerWidth, scrolls: scrolls,
            right: t.getBoundingClientRect().right};
  });
  const first = document.querySelector('table');
  const before = [...document.querySelectorAll('p, li')].filter(
    p => !first || (p.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING));
  const words = before.map(p => p.innerText.split(/\\s+/).filter(Boolean).length);
  const out = {viewport: window.innerWidth, page_width: document.documentElement.scrollWidth, ids: ids,
               tables: tables, opening_words: words};
  const pre = document.createElement('pre'); pre.id = 'vlcomp-layout';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>
"""


@dataclass
class Layout:
    viewport: int
    page_width: int
    ids: dict[str, float]
    tables: list[dict]
    opening_words: list[int]

    @property
    def overflows(self) -> bool:
        """The page itself scrolls sideways (a table wider than the window outside a scrolling box)."""
        return self.page_width > self.viewport + 1

    @property
    def cut_tables(self) -> list[dict]:
        """Tables wider than their box whose box does not scroll (cut off or pushing the page wider)."""
        return [t for t in self.tables if t["width"] > t["box"] + 1 and not t["scrolls"]]


def layout(page: Path, work: Path, size: tuple[int, int] = (WIDTH, HEIGHT)) -> Layout:
    """The layout of ``page`` (a local HTML file) at ``size``, measured in the browser on a copy with a probe
    script added (the page itself is not changed)."""
    text = page.read_text()
    probe = work / f"{page.stem}-probe.html"
    probe.write_text(text.replace("</body>", _PROBE + "</body>", 1) if "</body>" in text else text + _PROBE)
    dom = rendered(probe.resolve().as_uri(), work / "profile-layout", size)
    found = re.search(r'<pre id="vlcomp-layout">(.*?)</pre>', dom, re.S)
    if not found:
        raise AssertionError(f"{page}: the layout probe did not run (DOM of {len(dom)} characters)")
    import html

    return Layout(**json.loads(html.unescape(found.group(1))))


#: The most words a paragraph or list item may have before the first table (a page opens with what a reader came
#: for: verdicts and tables, not a run-on paragraph).
OPENING_WORDS = 150


def check_report_page(page: Path, work: Path, first_screen: tuple[str, ...] = ()) -> Layout:
    """Assert that ``page`` reads at a glance in a 1400 x 900 window: nothing pushes the page wider than the
    window, every wide table scrolls in its own box, no long paragraph before the first table, and the elements
    ``first_screen`` names (ids) start on the first screen; a screenshot of that screen is saved beside ``work``'s
    other files (``<report folder>-<page>.png``) for a person to look at."""
    work.mkdir(parents=True, exist_ok=True)
    lay = layout(page, work)
    assert not lay.overflows, f"{page}: the page is {lay.page_width} px wide in a {lay.viewport}-px window"
    assert not lay.cut_tables, f"{page}: tables wider than their box that does not scroll: {lay.cut_tables}"
    assert max(lay.opening_words, default=0) <= OPENING_WORDS, \
        f"{page}: a paragraph of {max(lay.opening_words)} words before the first table"
    for ident in first_screen:
        assert ident in lay.ids, f"{page}: no element with id {ident!r}"
        assert lay.ids[ident] < HEIGHT, f"{page}: {ident!r} starts at {lay.ids[ident]:.0f} px, below the first screen"
    png = screenshot(page, work / f"{page.parent.name}-{page.stem}.png", work / "profile-shot")
    assert png.stat().st_size > 5000, f"{png}: an empty screenshot"
    return lay
