"""Checkbox trees (ARIA treeitem: jsTree, Fancytree, react-checkbox-tree ...): tick a node, and reach a node
whose ancestors are collapsed.

Tree libraries render the children of a collapsed node only once it opens, so a node the model names may not
be in the page at all; and ticking a node is a click on its own checkbox (the title often only activates it).
Both are found by the ARIA roles and the row's own elements, never by a library's name.
"""

from __future__ import annotations

import contextlib

from playwright.async_api import ElementHandle, Page
from playwright.async_api import Error as PlaywrightError

# The node's own row (its elements outside its child group), its container (what holds the child group) and
# its state. Shared by the finder, the toggler and the checker.
_TREE_JS = """
(() => {
  const norm = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const row = (item) => {
    const out = [];
    const visit = (node) => {
      for (const child of node.children) {
        if (child.getAttribute('role') === 'group' || ['UL', 'OL'].includes(child.tagName)) continue;
        out.push(child);
        visit(child);
      }
    };
    visit(item);
    return out;
  };
  const container = (item) => (item.querySelector(':scope > [role=group], :scope > ul, :scope > ol') ? item
    : item.closest('li') || item.parentElement);
  const text = (item) => norm(item.getAttribute('aria-label')) ||
    norm(row(item).filter((m) => !m.children.length).map((m) => m.textContent).join(' ')) || norm(item.textContent);
  const toggler = (item) => {
    const box = container(item);
    const own = [...row(box), ...(box === item ? [] : row(item))];
    return own.find((m) => m !== item && (/expander|toggle|\\bocl\\b|caret|twist|collapse/i.test(
      typeof m.className === 'string' ? m.className : '') || /expand|toggle|collapse/i.test(
      m.getAttribute('aria-label') || '')));
  };
  const checkbox = (item) => row(item).find((m) => m.getAttribute('role') === 'checkbox' ||
    (m.tagName === 'INPUT' && m.type === 'checkbox') ||
    /checkbox/i.test(typeof m.className === 'string' ? m.className : ''));
  const checked = (item) => {
    const v = item.getAttribute('aria-checked');
    if (v !== null) return v === 'true';
    const box = checkbox(item);
    if (box && box.tagName === 'INPUT') return box.checked;
    if (box && box.getAttribute('aria-checked') !== null) return box.getAttribute('aria-checked') === 'true';
    return item.getAttribute('aria-selected') === 'true';
  };
  return { norm, row, container, text, toggler, checkbox, checked };
})()
"""

_MARK_COLLAPSED_JS = f"""
wanted => {{
  const T = {_TREE_JS};
  const items = [...document.querySelectorAll('[role=treeitem]')].filter((i) => i.checkVisibility());
  const hit = items.find((i) => T.text(i).toLowerCase() === wanted.toLowerCase());
  if (hit) return 'found';
  const closed = items.filter((i) => i.getAttribute('aria-expanded') === 'false');
  closed.forEach((i, n) => i.setAttribute('data-sgr-closed', String(n)));
  return closed.length;
}}
"""

_OPEN_JS = f"""
item => {{
  const T = {_TREE_JS};
  const t = T.toggler(item);
  if (!t) return false;
  t.click();
  return true;
}}
"""

_CLOSE_UNLESS_HOLDS_JS = f"""
(item, wanted) => {{
  const T = {_TREE_JS};
  const box = T.container(item);
  const holds = [...box.querySelectorAll('[role=treeitem]')].some((i) => T.text(i).toLowerCase() === wanted.toLowerCase());
  if (holds || item.getAttribute('aria-expanded') !== 'true') return;
  const t = T.toggler(item);
  if (t) t.click();
}}
"""

TICK_JS = f"""
(item, want) => {{
  const T = {_TREE_JS};
  if (T.checked(item) === want) return 'already';
  const box = T.checkbox(item);
  (box || item).click();
  return 'clicked';
}}
"""

STATE_JS = f"""
item => {{
  const T = {_TREE_JS};
  return {{ checked: T.checked(item), label: T.text(item) }};
}}
"""

MAX_OPENED = 60  # nodes opened while looking for one: a portal's product or region tree is far smaller


async def open_to(page: Page, label: str) -> bool:
    """Open collapsed tree nodes, level by level, until a node named `label` is shown; close again the nodes
    opened on the way that do not hold it. False when no tree node has that name (or there is no tree)."""
    opened: list[ElementHandle] = []
    try:
        while len(opened) < MAX_OPENED:
            state = await page.evaluate(_MARK_COLLAPSED_JS, label)
            if state == "found":
                return True
            if not state:
                return False
            closed = await page.query_selector_all("[data-sgr-closed]")
            await page.evaluate("() => document.querySelectorAll('[data-sgr-closed]')"
                                ".forEach((e) => e.removeAttribute('data-sgr-closed'))")
            for item in closed[:MAX_OPENED - len(opened)]:
                if not await item.evaluate(_OPEN_JS):  # no toggler in its row: the ARIA tree pattern's key
                    await item.focus()
                    await item.press("ArrowRight")
                opened.append(item)
            await page.wait_for_timeout(150)  # libraries open with a short animation
        return False
    except PlaywrightError:
        return False
    finally:
        if opened:
            await page.wait_for_timeout(400)  # a node still opening ignores a second click
        for item in reversed(opened):
            with contextlib.suppress(PlaywrightError):
                await item.evaluate(_CLOSE_UNLESS_HOLDS_JS, label)
        if opened:
            await page.wait_for_timeout(250)  # let the closing animations end before the page is read
