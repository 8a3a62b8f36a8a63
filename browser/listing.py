"""Reads of what an observation shortened: every option of a control, the controls of a line that stands for a
panel of them, every link, a section's whole text.

The rendered observation stays within its token budget by summarising long option lists, capping links
and cutting long text; its notes name these reads, so nothing it leaves out is out of reach.
"""

from __future__ import annotations

from browser.driver import PageHandle
from browser.interface import BrowserError
from browser.readback import Outcome
from browser.render import collapsed_controls, control_line
from browser.targets import resolve_target
from browser.types import Control, ListLinks, ListOptions, ReadSection, Target

MAX_OPTIONS_LISTED = 2000

# The text of a section: the heading's enclosing section/article when it leads one, else the heading and what
# follows it up to the next heading of the same or a higher level. A heading alone in a wrapper (a title next to an
# "Ask" button) does not end its section there: when the wrapper runs out, the section goes on after it, up to the
# enclosing body, main, article or section.
SECTION_TEXT_JS = """
(args) => {
  const norm = (s) => (s || '').replace(/[ \\t]+/g, ' ').replace(/\\n\\s*\\n+/g, '\\n').trim();
  const want = args.heading.toLowerCase();
  const heads = [...document.querySelectorAll('h1,h2,h3,h4,h5,h6,[role=heading],summary,legend,caption,dt')]
    .filter((h) => norm(h.innerText || h.textContent).toLowerCase().includes(want));
  if (!heads.length) return null;
  const h = heads.find((x) => norm(x.innerText || x.textContent).toLowerCase() === want) || heads[0];
  const box = h.closest('section,article,fieldset,details,dl');
  if (box && box.querySelector('h1,h2,h3,h4,h5,h6,[role=heading],summary,legend,dt') === h) return norm(box.innerText);
  const level = /^h[1-6]$/i.test(h.tagName) ? +h.tagName[1] : 7;
  const ends = [1, 2, 3, 4, 5, 6].filter((n) => n <= level).map((n) => 'h' + n).join(',');
  const parts = [norm(h.innerText)];
  const depth = (x, root) => {
    let d = 0;
    for (; x && x !== root; x = x.parentElement) d++;
    return d;
  };
  for (let at = h; at && at !== document.body; at = at.parentElement) {
    // a heading ends the section when it is no deeper in the page than this one (seen from where the walk is): a
    // heading deep inside a post's own text is that post's, it does not end the page heading's section
    const root = at.parentElement;
    const limit = depth(h, root);
    const isEnd = (x) => x.matches(ends) && depth(x, root) <= limit;
    // a node's text, or its children's up to a heading that ends the section; true once the section has ended
    const collect = (node) => {
      if (ends && isEnd(node)) return true;
      if (!ends || ![...node.querySelectorAll(ends)].some(isEnd)) {
        const t = norm(node.innerText);
        if (t) parts.push(t);
        return false;
      }
      for (const child of node.children) if (collect(child)) return true;
      return true;
    };
    for (let node = at.nextElementSibling; node; node = node.nextElementSibling) if (collect(node)) return parts.join('\\n');
    if (at !== h && at.matches('main,article,section,[role=main]')) break;
  }
  return parts.join('\\n');
}
"""


def _find_control(controls: list[Control], target: Target) -> Control:
    if target.ref:
        for c in controls:
            if c.ref == target.ref:
                return c
        raise BrowserError("not_found", f"no control with ref {target.ref} on the page; observe again for refs")
    wanted = (target.label or target.text or "").strip().lower()
    if not wanted:
        raise BrowserError("invalid_action", "list_options needs the control's ref or label")
    exact = [c for c in controls if c.label.lower() == wanted]
    partial = [c for c in controls if wanted in c.label.lower()]
    if not (exact or partial):
        raise BrowserError("not_found", f"no control labelled {wanted!r} on the page")
    return (exact or partial)[0]


def _list_panel(head: str, members: list[Control], contains: str | None) -> Outcome:
    """The controls a collapsed line of the observation stands for, one line each as the observation shows them."""
    needle = (contains or "").lower()
    chosen = [c for c in members if needle in c.label.lower() or any(needle in o.label.lower() for o in c.options)]
    what = f" matching {contains!r}" if contains else ""
    head_line = f"{len(chosen)} of {len(members)} controls{what} of the line [{head}] (each usable by its ref):"
    return Outcome("\n".join([head_line, *(control_line(c, with_form=True) for c in chosen[:MAX_OPTIONS_LISTED])]))


async def list_options(driver: PageHandle, action: ListOptions) -> Outcome:
    observation = await driver.observe()
    if action.target.ref and (members := collapsed_controls(observation, driver.worker.token_budget).get(action.target.ref)):
        return _list_panel(action.target.ref, members, action.contains)
    control = _find_control(observation.controls, action.target)
    if not control.options:
        raise BrowserError("invalid_action", f"[{control.ref}] {control.kind} {control.label!r} has no options")
    needle = (action.contains or "").lower()
    chosen = [o for o in control.options if needle in o.label.lower() or needle in o.value.lower()]
    lines = [f"{o.label}" + (f" (value {o.value})" if o.value and o.value != o.label else "")
             + (" *selected" if o.selected else "") for o in chosen[:MAX_OPTIONS_LISTED]]
    what = f" matching {action.contains!r}" if action.contains else ""
    more = f" (first {MAX_OPTIONS_LISTED})" if len(chosen) > MAX_OPTIONS_LISTED else ""
    head = f"[{control.ref}] {control.kind} {control.label!r}: {len(chosen)} of {len(control.options)} options{what}{more}"
    return Outcome("\n".join([head, *lines]))


async def list_links(driver: PageHandle, action: ListLinks) -> Outcome:
    from browser.observe import ALL_LINKS, observe_page

    page_id = await driver.sync_page_id()
    observation = await observe_page(driver.page, page_id=page_id, max_links=ALL_LINKS)
    needle = (action.contains or "").lower()
    found = [ln for ln in observation.links if needle in ln.text.lower() or needle in ln.href.lower()]
    window = found[action.offset:action.offset + action.limit]
    what = f" matching {action.contains!r}" if action.contains else ""
    head = f"{len(found)} links{what}; {action.offset + 1}-{action.offset + len(window)} listed"
    if action.offset + len(window) < len(found):
        head += f" (offset {action.offset + len(window)} for the next)"
    return Outcome("\n".join([head, *(f"[{ln.ref}] {ln.text} -> {ln.href}" for ln in window)]))


async def read_section(driver: PageHandle, action: ReadSection) -> Outcome:
    cap = min(action.max_chars, driver.limits.text_chars)
    if action.target is not None:
        locator = await resolve_target(driver.page, action.target, ref_is_stale=driver.ref_is_stale,
                                        shown=driver.last_observation)
        text = await locator.evaluate("el => (el.innerText || el.textContent || '').trim()")
        where = action.target.describe()
    elif action.heading:
        text = await driver.page.evaluate(SECTION_TEXT_JS, {"heading": action.heading})
        if text is None:
            raise BrowserError("not_found", f"no heading containing {action.heading!r} on the page")
        where = f"section {action.heading!r}"
    else:
        raise BrowserError("invalid_action", "read_section needs a heading or a target")
    cut = f"\n[… {len(text) - cap} more characters; raise max_chars]" if len(text) > cap else ""
    return Outcome(f"{where} ({len(text)} characters):\n{text[:cap]}{cut}")
