"""The compact text an LLM reads for one page, kept within a token budget. This budget is the only one:
the graph shows this text as it is.

Priority follows what gates retrieval: the URL state and every control (never dropped), then pagination,
counts and notices, then table rows, outline and links (main content first: observe.js orders them),
which are cut from the end when the budget is short. Nothing is left out silently: every cut section,
even one with no line shown, ends with a note saying how much is missing and which read tool returns it
(read_table, read_section, list_links, list_options).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from browser.numbers import page_int
from browser.tokens import count_tokens
from browser.types import Control, Observation, TableData

LONG_OPTION_LIST = 30  # longer option lists are summarised in the text (Control.options keeps them all)
SHOWN_OF_LONG_LIST = 10
CELL_CHARS = 160
MIN_TABLE_ROWS = 2  # every table shows at least its header and this many rows before any gets more
# Shares of the budget left after the fixed part; what one section leaves unused goes to the next.
_SHARES = {"tables": 0.6, "outline": 0.2, "links": 0.2}


def _quote(text: str | None) -> str:
    return '"' + (text or "").replace('"', "'") + '"'


def _page_numbers(control: Control) -> str | None:
    """A long pager as '1 | 2 | … | 14 | 15* | 16 | … | 31' (numbers around the current page and the ends)."""
    numbered = [(n, o.selected) for o in control.options if (n := page_int(o.label)) is not None]
    if len(numbered) < len(control.options) - 4 or not numbered:
        return None
    others = [o.label for o in control.options if page_int(o.label) is None]
    current = next((n for n, chosen in numbered if chosen), None)
    last = max(n for n, _ in numbered)
    keep = sorted({n for n, _ in numbered if n <= 2 or n >= last - 1
                   or (current is not None and abs(n - current) <= 2)})
    parts: list[str] = []
    for i, n in enumerate(keep):
        if i and n != keep[i - 1] + 1:
            parts.append("…")
        parts.append(f"{n}*" if n == current else str(n))
    return "{" + " | ".join(parts + others) + f"}} ({len(numbered)} page links; * = current)"


def _option_list(control: Control) -> str:
    labels = [o.label or o.value for o in control.options]
    if len(labels) <= LONG_OPTION_LIST:
        return "{" + " | ".join(labels) + "}"
    if control.kind == "link" and (pager := _page_numbers(control)):
        return pager
    shown = labels[:SHOWN_OF_LONG_LIST]
    chosen = [o.label or o.value for o in control.options[SHOWN_OF_LONG_LIST:] if o.selected]
    more = len(labels) - len(shown) - len(chosen)
    return (
        "{" + " | ".join(shown + chosen)
        + f" | … {more} more of {len(labels)} — list_options {control.ref} for all" + "}"
    )


def control_line(control: Control, *, with_form: bool = False) -> str:
    parts = [f"[{control.ref}] {control.kind} {_quote(control.label)}"]
    if with_form and control.form:
        parts.append(f"(form {_quote(control.form)})")
    if control.kind in {"checkbox", "toggle"}:
        parts.append("[x]" if control.checked else "[ ]")
    elif control.kind == "tab":
        if control.checked:
            parts.append("(selected)")
    elif control.kind == "chip":
        parts.append("(active filter; click to remove)")
    elif control.kind in {"button", "submit"}:
        pass
    elif control.kind == "link":
        parts.append(f"= {_quote(control.value)}" if control.value else "")
    else:
        parts.append(f"= {_quote(control.value)}")
    if control.options:
        parts.append(_option_list(control))
    if control.disabled:
        parts.append("(disabled)")
    if control.frame:
        parts.append(f"(in frame {control.frame})")
    return " ".join(p for p in parts if p)


def _state_line(obs: Observation) -> str:
    pairs = [f"{k}={'|'.join(v)}" for k, v in obs.query_state.items()]
    return "State: " + ("; ".join(pairs) if pairs else "(no query parameters)")


def _paging_lines(obs: Observation) -> list[str]:
    lines: list[str] = []
    p = obs.pagination
    if p is not None:
        bits: list[str] = []
        if p.page is not None:
            bits.append(f"page {p.page}" + (f" of {p.pages}" if p.pages else ""))
        if p.first is not None and p.last is not None:
            bits.append(f"showing {p.first}-{p.last}" + (f" of {p.total}" if p.total is not None else ""))
        if p.page_size is not None:
            bits.append(f"page size {p.page_size}")
        bits.append("next: yes" if p.has_next else "next: no")
        bits.append("prev: yes" if p.has_prev else "prev: no")
        lines.append("Pagination: " + "; ".join(bits))
    if obs.result_count is not None:
        lines.append(f"Result count: {obs.result_count}")
    return lines


def _table_header(table: TableData) -> str:
    what = f"TABLE {table.index} ({table.source}"
    what += f", caption {_quote(table.caption)}" if table.caption else ""
    return what + f"; {table.total_rows} rows)"


def _cell(text: str) -> str:
    text = text.replace("|", "/")
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def row_line(table: TableData, i: int) -> str:
    """A table row as text, followed by the refs of the controls in it (a per-row button is clicked by its ref)."""
    refs = table.row_controls[i] if i < len(table.row_controls) else []
    return _row(table.rows[i]) + (f" [{', '.join(refs)}]" if refs else "")


@dataclass
class _Section:
    """Lines that may be cut from the end, with a note saying what was left out and how to get it."""

    kind: str  # "tables" | "outline" | "links"
    head: list[str]
    lines: list[str]
    what: str  # "rows of TABLE 2", "outline lines", "links"
    tool: str  # the read that returns what is left out
    beyond: int = 0  # items the observer counted but did not send (capped lists)

    def note(self, kept: int) -> str:
        left = len(self.lines) - kept + self.beyond
        return f"… {left} more {self.what} not shown — {self.tool}" if left > 0 else ""


def _tokens(line: str) -> int:
    return count_tokens(line) + 1  # the newline


def _fit(section: _Section, budget: int) -> int:
    """How many lines (with the head) fit in `budget`; the note is paid for separately."""
    cost = sum(_tokens(h) for h in section.head)
    kept = 0
    for line in section.lines:
        cost += _tokens(line)
        if cost > budget:
            break
        kept += 1
    return kept


def _cost(section: _Section, kept: int) -> int:
    if not kept:
        return 0
    return sum(_tokens(h) for h in section.head) + sum(_tokens(line) for line in section.lines[:kept])


def _lines(section: _Section, kept: int) -> list[str]:
    note = section.note(kept)
    if not kept:  # not one line fits: the head alone says what the section is, the note where it is
        return [f"{section.head[0]} {note}"] if note else []
    return section.head + section.lines[:kept] + ([note] if note else [])


ALIKE_REFS_SHOWN = 8


def _collapse_alike(controls: list[Control]) -> list[tuple[Control, list[str]]]:
    """Buttons repeated with the same label in the same form (a 'Share' or 'Vote' per answer) as one line
    with the refs of the others: hundreds of them must not crowd out the page."""
    out: list[tuple[Control, list[str]]] = []
    first: dict[tuple[str, str, str | None], int] = {}
    for c in controls:
        key = (c.kind, c.label, c.form)
        if c.kind in {"button", "submit"} and not c.disabled and not c.frame and key in first:
            out[first[key]][1].append(c.ref)
            continue
        first.setdefault(key, len(out))
        out.append((c, []))
    return out


def _alike_note(alike: list[str], row_tables: dict[str, int]) -> str:
    """The other refs of a collapsed line; when they are all controls of table rows, the rows carry them."""
    if not alike:
        return ""
    tables = {row_tables.get(ref) for ref in alike}
    if None not in tables and len(tables) == 1:
        return f" (+{len(alike)} alike, one per row of TABLE {tables.pop()}: each row ends with its ref)"
    refs = ", ".join(alike[:ALIKE_REFS_SHOWN]) + (", …" if len(alike) > ALIKE_REFS_SHOWN else "")
    return f" (+{len(alike)} alike: {refs})"


def _duplicate_labels(controls: list[Control]) -> set[str]:
    """Labels of buttons that appear in more than one form: the line must say which form each submits."""
    forms: dict[str, set[str | None]] = {}
    for c in controls:
        if c.kind in {"button", "submit"}:
            forms.setdefault(c.label, set()).add(c.form)
    return {label for label, owners in forms.items() if len(owners) > 1}


def render(obs: Observation, *, token_budget: int = 1500) -> tuple[str, int]:
    """(text, tokens). The fixed part is always complete, even when it alone exceeds the budget."""
    fixed = [f"URL: {obs.url.split('?', 1)[0]}", _state_line(obs)]  # the query is spelled out on the State line
    if obs.title:
        fixed.append(f"Title: {obs.title}")
    if obs.frames:
        fixed.append("Frames: " + "; ".join(obs.frames))
    fixed.append(f"CONTROLS ({len(obs.controls)}):" if obs.controls else "CONTROLS: none found")
    twins = _duplicate_labels(obs.controls)
    row_tables = {ref: t.index for t in obs.tables for refs in t.row_controls for ref in refs}
    fixed += [control_line(c, with_form=c.label in twins) + _alike_note(alike, row_tables)
              for c, alike in _collapse_alike(obs.controls)]
    fixed += _paging_lines(obs)
    if obs.notices:
        fixed.append("NOTICES:")
        fixed += obs.notices
    used = count_tokens("\n".join(fixed)) + 1

    sections = [_table_section(t) for t in obs.tables]
    sections.append(_Section("outline", ["OUTLINE:"], list(obs.outline), "outline lines",
                             "read_section with a heading or ref", max(0, obs.outline_total - len(obs.outline))))
    links = [f"[{ln.ref}] {ln.text} -> {_short_href(ln.href, obs.url)}" for ln in obs.links]
    sections.append(_Section("links", ["LINKS:"], links, "links", "list_links",
                             max(0, obs.links_total - len(obs.links))))
    notes_reserve = sum(_tokens(s.head[0] + " " + (s.note(0) or "")) for s in sections if s.lines or s.beyond)
    left = max(0, token_budget - used - notes_reserve)
    kept = [0] * len(sections)
    # 1. every table its header and first rows, 2. shares per kind, 3. what is unused goes to the next in order
    tables = [i for i, s in enumerate(sections) if s.kind == "tables"]
    for i in tables:
        kept[i] = min(MIN_TABLE_ROWS, _fit(sections[i], left // max(1, len(tables))))
    spent = sum(_cost(sections[i], kept[i]) for i in tables)
    pool = {kind: int((left - spent) * share) for kind, share in _SHARES.items()}
    for i, section in enumerate(sections):
        base = _cost(section, kept[i])
        more = _fit(section, base + max(0, pool[section.kind]))
        if more > kept[i]:
            pool[section.kind] -= _cost(section, more) - base
            kept[i] = more
    free = left - sum(_cost(s, k) for s, k in zip(sections, kept, strict=True))
    for i, section in enumerate(sections):
        if free <= 0:
            break
        base = _cost(section, kept[i])
        more = _fit(section, base + free)
        if more > kept[i]:
            free -= _cost(section, more) - base
            kept[i] = more

    def assemble() -> str:
        body = [line for s, k in zip(sections, kept, strict=True) for line in _lines(s, k)]
        return "\n".join(fixed + body)

    text = assemble()
    tokens = count_tokens(text)
    while tokens > token_budget and any(kept):  # per-line estimates can be off by a few tokens
        last = max(i for i, k in enumerate(kept) if k)
        kept[last] -= 1
        text = assemble()
        tokens = count_tokens(text)
    return text, tokens


def _short_href(href: str, page_url: str) -> str:
    """Same-origin links as paths: the origin repeated on every line is most of a link's tokens."""
    page, link = urlsplit(page_url), urlsplit(href)
    if (link.scheme, link.netloc) != (page.scheme, page.netloc) or not link.scheme:
        return href
    return urlunsplit(("", "", link.path or "/", link.query, link.fragment))


def _table_section(table: TableData) -> _Section:
    head = [_table_header(table)]
    if any(table.headers):
        head.append(_row(table.headers))
    rows = [row_line(table, i) for i in range(len(table.rows))]
    if any(len(c) > CELL_CHARS for r in table.rows for c in r):
        head[0] += f" (long cells cut: read_table {table.index} reads them whole)"
    return _Section("tables", head, rows, f"rows of TABLE {table.index}", f"read_table {table.index}",
                    max(0, table.total_rows - len(table.rows)))
