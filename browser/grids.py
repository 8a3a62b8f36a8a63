"""Virtualised grids (AG Grid, TanStack Virtual, MUI DataGrid ...): read every row by scrolling the grid.

Such a grid renders only the rows in its viewport (and reuses their elements as it scrolls), so the page holds
19 of 240 rows at any time; the ARIA grid pattern still states the whole count (`aria-rowcount`) and each row's
place (`aria-rowindex`). The rows are collected by their place while the grid's own scroller moves, until the
stated count is reached or the scroller ends; whatever is still missing is said, never passed over.
"""

from __future__ import annotations

from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

MAX_STEPS = 400  # scroller moves for one read: 400 viewports of ~20 rows, beyond any table cap

# Marks the grid whose stated count is `total` data rows, returns what one scroll step shows: its rows by
# place (cells in column order; a row split over pinned containers is joined), whether the scroller is at its
# end; `move` scrolls it one viewport first (or back to the top).
_STEP_JS = """
([total, move]) => {
  const grids = [...document.querySelectorAll('[role=grid][aria-rowcount],[role=treegrid][aria-rowcount],'
    + '[role=table][aria-rowcount]')].filter((g) => g.checkVisibility());
  const grid = grids.find((g) => {
    const n = parseInt(g.getAttribute('aria-rowcount'), 10);
    return n === total || n === total + 1 || n === total + 2;
  });
  if (!grid) return null;
  const scrollers = [grid, ...grid.querySelectorAll('*')].filter((el) => {
    const style = getComputedStyle(el);
    return el.scrollHeight > el.clientHeight + 4 && /(auto|scroll)/.test(style.overflowY);
  });
  const scroller = scrollers.sort((a, b) => b.scrollHeight - a.scrollHeight)[0] || null;
  if (scroller && move === 'top') scroller.scrollTop = 0;
  if (scroller && move === 'down') scroller.scrollTop += Math.max(40, scroller.clientHeight * 0.8);
  const rows = {};
  for (const row of grid.querySelectorAll('[role=row][aria-rowindex]')) {
    const cells = [...row.querySelectorAll('[role=gridcell],[role=cell],[role=rowheader]')];
    if (!cells.length) continue;
    cells.sort((a, b) => (parseInt(a.getAttribute('aria-colindex'), 10) || 0)
      - (parseInt(b.getAttribute('aria-colindex'), 10) || 0));
    const key = row.getAttribute('aria-rowindex');
    const texts = cells.map((c) => (c.innerText || c.textContent || '').replace(/\\s+/g, ' ').trim());
    rows[key] = rows[key] ? rows[key].concat(texts) : texts;
  }
  const atEnd = !scroller || scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2;
  return { rows, atEnd, scrolls: !!scroller };
}
"""


@dataclass
class GridRead:
    """The rows of a virtualised grid in their order, and how many of its stated count were never shown."""

    rows: list[list[str]]
    missing: int


async def read_virtual_grid(page: Page, total: int, width: int, *, cap: int) -> GridRead | None:
    """All data rows of the visible ARIA grid that states `total` rows, by scrolling its own scroller from the
    top; None when no such grid scrolls (the rows are not virtualised here, or the grid states no count)."""
    collected: dict[int, list[str]] = {}
    try:
        step = await page.evaluate(_STEP_JS, [total, "top"])
        if not step or not step["scrolls"]:
            return None
        await page.wait_for_timeout(120)
        idle = 0
        for _ in range(MAX_STEPS):
            step = await page.evaluate(_STEP_JS, [total, None])
            if step is None:
                break
            before = len(collected)
            for key, cells in step["rows"].items():
                if len(cells) >= width:
                    collected[int(key)] = cells[:width]
            data_rows = len(collected)
            if data_rows >= min(total, cap):
                break
            idle = idle + 1 if len(collected) == before else 0
            if step["atEnd"] and idle >= 2:
                break
            await page.evaluate(_STEP_JS, [total, "down"])
            await page.wait_for_timeout(60 if len(collected) > before else 200)  # the grid renders on a frame
    except PlaywrightError:
        if not collected:
            return None
    rows = [collected[k] for k in sorted(collected)][:cap]
    return GridRead(rows=rows, missing=max(0, total - len(rows)) if len(rows) < cap else 0)
