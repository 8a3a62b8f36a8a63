"""Labelled values of a page (definition lists, `Label: value` lines, th|td rows, control labels -> current
values, the main heading, the title) and its tables with the section each sits in.

Detail pages state their values as labels, not as a results table; this read gives the caller every pair
in page order with the headings above it, and leaves matching labels to the caller. A table counts as labelled
values too when it is one (a label column and one or two value columns: `| Population 25+ | 788,259 | ±7,410 |`
gives 'Population 25+' -> '788,259'; a header row over one data row gives each header -> its cell).
"""

from __future__ import annotations

from urllib.parse import urljoin

from browser.driver import PageHandle
from browser.navigate import navigate
from browser.readback import Outcome
from browser.tables import parse_fragment
from browser.types import PageFact, PageFacts, PageLink, ReadPageFacts, SectionTable, TableData

_FACTS_JS = r"""
(maxFacts) => {
  const clean = s => (s || '').replace(/\s+/g, ' ').trim();
  const shown = el => {
    if (el.hidden || el.closest('[hidden],[aria-hidden=true]')) return false;
    const st = getComputedStyle(el);
    return st.display !== 'none' && st.visibility !== 'hidden';
  };
  const BLOCK = /^(p|div|li|ul|ol|dl|table|section|article|h[1-6]|form|fieldset|header|footer|nav|main|aside|pre|blockquote)$/i;
  const stack = [];
  const facts = [];
  const tables = [];
  const links = [];
  let heading = '';
  const enclosing = el => {
    const parts = stack.map(h => h[1]);
    const inner = [];
    for (let a = el.parentElement; a; a = a.parentElement) {
      const t = a.tagName.toLowerCase();
      let name = '';
      if (t === 'fieldset') name = clean((a.querySelector(':scope > legend') || {}).textContent);
      else if (t === 'details') name = clean((a.querySelector(':scope > summary') || {}).textContent);
      else if (a.getAttribute('aria-label') && /^(section|article|aside|nav|form)$/.test(t) || a.getAttribute('role') === 'region')
        name = clean(a.getAttribute('aria-label'));
      if (name) inner.unshift(name);
    }
    return parts.concat(inner);
  };
  const push = (label, value, el, locator) => {
    label = clean(label).replace(/\s*:\s*$/, '');
    if (!label || facts.length >= maxFacts) return;
    facts.push({label, value: clean(value), section: enclosing(el), locator});
  };
  const labelOf = el => {
    if (el.id) {
      const l = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (l) return clean(l.innerText);
    }
    const wrap = el.closest('label');
    if (wrap) {
      const copy = wrap.cloneNode(true);
      copy.querySelectorAll('select,option,input,textarea').forEach(n => n.remove());
      if (clean(copy.textContent)) return clean(copy.textContent);
    }
    if (el.getAttribute('aria-label')) return clean(el.getAttribute('aria-label'));
    const by = el.getAttribute('aria-labelledby');
    if (by) return clean(by.split(/\s+/).map(i => (document.getElementById(i) || {}).textContent || '').join(' '));
    return '';
  };
  const doneRadios = new Set();
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'template') continue;
    if (/^h[1-6]$/.test(tag)) {
      if (!shown(el)) continue;
      const level = +tag[1];
      while (stack.length && stack[stack.length - 1][0] >= level) stack.pop();
      stack.push([level, clean(el.innerText)]);
      if (level === 1 && !heading) heading = clean(el.innerText);
      continue;
    }
    if (!shown(el)) continue;
    if (tag === 'a' && el.getAttribute('href') && links.length < maxFacts) {
      const text = clean(el.innerText) || clean(el.getAttribute('aria-label')) || clean(el.title);
      if (text) links.push({text, href: el.href, section: enclosing(el)});
    }
    if (tag === 'dt') {
      const values = [];
      for (let dd = el.nextElementSibling; dd && dd.tagName.toLowerCase() === 'dd'; dd = dd.nextElementSibling)
        values.push(clean(dd.innerText));
      push(el.innerText, values.join('; '), el, 'dl');
    } else if (tag === 'tr') {
      const cells = [...el.children].filter(c => /^t[hd]$/i.test(c.tagName));
      if (cells.length === 2 && cells[0].tagName === 'TH' && cells[1].tagName === 'TD')
        push(cells[0].innerText, cells[1].innerText, el, 'th|td');
    } else if (tag === 'table') {
      const caption = clean((el.querySelector(':scope > caption') || {}).textContent);
      tables.push({html: el.outerHTML, section: enclosing(el).concat(caption ? [caption] : [])});
    } else if (tag === 'select') {
      const chosen = [...el.selectedOptions].map(o => clean(o.textContent));
      push(labelOf(el), chosen.join(', '), el, 'control');
    } else if (tag === 'input' || tag === 'textarea') {
      const type = (el.type || '').toLowerCase();
      if (type === 'hidden' || type === 'submit' || type === 'button') continue;
      if (type === 'radio') {
        const group = el.closest('fieldset,[role=radiogroup]');
        if (!el.checked || !group || doneRadios.has(group)) continue;
        doneRadios.add(group);
        const legend = group.querySelector('legend');
        push(legend ? legend.textContent : group.getAttribute('aria-label'), labelOf(el), group, 'control');
      } else if (type === 'checkbox') {
        push(labelOf(el), el.checked ? 'on' : 'off', el, 'control');
      } else {
        push(labelOf(el), el.value, el, 'control');
      }
    } else if (!el.closest('table,dl,select,button,script,style')) {
      if ([...el.children].some(c => BLOCK.test(c.tagName))) continue;
      for (const line of (el.innerText || '').split('\n')) {
        const m = line.match(/^\s*([^:\n]{1,80}?)\s*:\s+(\S.*)$/);
        if (m && !/^https?$/i.test(m[1])) push(m[1], m[2], el, 'line');
      }
    }
  }
  const seen = new Set();
  const unique = facts.filter(f => {
    const key = JSON.stringify([f.label, f.value, f.section]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {url: location.href, title: document.title || '', heading, facts: unique, tables, links};
}
"""

MAX_FACTS = 2000


async def page_facts(driver: PageHandle, max_rows: int) -> PageFacts:
    raw = await driver.page.evaluate(_FACTS_JS, MAX_FACTS)
    tables: list[SectionTable] = []
    for fragment in raw["tables"]:
        table = parse_fragment(fragment["html"], "table", index=len(tables), max_rows=max_rows)
        if table is not None and (table.rows or any(table.headers)):  # header-only: a section read as 0 rows
            tables.append(SectionTable(section=fragment["section"], table=table))
    facts = [PageFact(**f) for f in raw["facts"]]
    seen = {(f.label, f.value, tuple(f.section)) for f in facts}
    for entry in tables:
        for fact in table_facts(entry.table, entry.section):
            if (fact.label, fact.value, tuple(fact.section)) not in seen:
                seen.add((fact.label, fact.value, tuple(fact.section)))
                facts.append(fact)
    return PageFacts(url=raw["url"], title=raw["title"], heading=raw["heading"], facts=facts, tables=tables,
                     links=[PageLink(**link) for link in raw["links"]])


def _is_label(text: str) -> bool:
    """A row label: words, not a bare number, amount or date."""
    return any(c.isalpha() for c in text)


def table_facts(table: TableData, section: list[str]) -> list[PageFact]:
    """The labelled values a table states: each header over the cell below it when the table has one data row;
    each row's first cell over its second when the table is 2 or 3 columns wide and its first column holds
    labels (a third column is a margin or a note, readable as a table)."""
    if len(table.rows) == 1 and any(table.headers):
        return [PageFact(label=h, value=v, section=section, locator=f"table {table.index} header")
                for h, v in zip(table.headers, table.rows[0], strict=False) if h and v]
    if len(table.headers) not in (2, 3) or not table.rows or not all(_is_label(r[0]) for r in table.rows):
        return []
    return [PageFact(label=r[0], value=r[1], section=section, locator=f"table {table.index} row")
            for r in table.rows if len(r) > 1 and r[1]]


async def read_page_facts(driver: PageHandle, action: ReadPageFacts) -> Outcome:
    from browser.settle import settle

    navigated = False
    if action.url:
        await navigate(driver, urljoin(driver.page.url, action.url))
        await settle(driver.page, driver.network, quiet_ms=driver.timeouts.settle_quiet_ms,
                     timeout_ms=driver.timeouts.settle_max_ms)
        navigated = True
    facts = await page_facts(driver, driver.limits.table_rows)
    return Outcome(f"read {len(facts.facts)} labelled value(s) and {len(facts.tables)} table(s) of {facts.url}",
                   facts=facts, navigated=navigated)
