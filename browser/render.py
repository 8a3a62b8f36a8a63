"""The compact text an LLM reads for one page, kept within a token budget.

Priority follows what gates retrieval: the URL state and every control (never dropped), then pagination,
counts and notices, then table rows, outline and links, which are cut from the end when the budget is
short, with a note saying how to get the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from browser.tokens import count_tokens
from browser.types import Control, Observation, TableData

LONG_OPTION_LIST = 30  # longer option lists are summarised in the text (Control.options keeps them all)
SHOWN_OF_LONG_LIST = 10
CELL_CHARS = 80
# Shares of the budget left after the fixed part; what one section leaves unused goes to the next.
_SHARES = {"tables": 0.6, "outline": 0.2, "links": 0.2}


def _quote(text: str | None) -> str:
    return '"' + (text or "").replace('"', "'") + '"'


def _page_numbers(control: Control) -> str | None:
    """A long pager as '1 | 2 | … | 14 | 15* | 16 | … | 31' (numbers around the current page and the ends)."""
    numbered = [(int(o.label), o.selected) for o in control.options if o.label.strip().isdigit()]
    if len(numbered) < len(control.options) - 4 or not numbered:
        return None
    others = [o.label for o in control.options if not o.label.strip().isdigit()]
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
        + f" | … {more} more of {len(labels)} — use select with the label or search them" + "}"
    )


def control_line(control: Control) -> str:
    parts = [f"[{control.ref}] {control.kind} {_quote(control.label)}"]
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


def _table_header(table: TableData, shown: int) -> str:
    what = f"TABLE {table.index} ({table.source}"
    what += f", caption {_quote(table.caption)}" if table.caption else ""
    more = table.total_rows - shown
    tail = f"; {shown} of {table.total_rows} rows shown, read_table {table.index} for all" if more > 0 else (
        f"; {table.total_rows} rows"
    )
    return what + tail + ")"


def _cell(text: str) -> str:
    text = text.replace("|", "/")
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


@dataclass
class _Section:
    """Lines that may be cut from the end, with a note saying what was left out and how to get it."""

    kind: str  # "tables" | "outline" | "links"
    head: list[str]
    lines: list[str]
    hint: str = ""

    def note(self, kept: int) -> str:
        left = len(self.lines) - kept
        return f"… {left} more {self.hint}" if left > 0 else ""


def _tokens(line: str) -> int:
    return count_tokens(line) + 1  # the newline


def _fit(section: _Section, budget: int) -> tuple[list[str], int]:
    """The head and as many lines as fit with the note (nothing when not even one line fits)."""
    cost = sum(_tokens(h) for h in section.head)
    kept: list[str] = []
    for i, line in enumerate(section.lines):
        note = section.note(i + 1)
        extra = _tokens(line) + (_tokens(note) if note else 0)
        if cost + extra > budget:
            break
        kept.append(line)
        cost += _tokens(line)
    if not kept:
        return [], 0
    note = section.note(len(kept))
    return section.head + kept + ([note] if note else []), cost + (_tokens(note) if note else 0)


def render(obs: Observation, *, token_budget: int = 1500) -> tuple[str, int]:
    """(text, tokens). The fixed part is always complete, even when it alone exceeds the budget."""
    fixed = [f"URL: {obs.url.split('?', 1)[0]}", _state_line(obs)]  # the query is spelled out on the State line
    if obs.title:
        fixed.append(f"Title: {obs.title}")
    if obs.frames:
        fixed.append("Frames: " + "; ".join(obs.frames))
    fixed.append(f"CONTROLS ({len(obs.controls)}):" if obs.controls else "CONTROLS: none found")
    fixed += [control_line(c) for c in obs.controls]
    fixed += _paging_lines(obs)
    if obs.notices:
        fixed.append("NOTICES:")
        fixed += obs.notices
    used = count_tokens("\n".join(fixed)) + 1

    sections = [_table_section(t) for t in obs.tables]
    sections.append(_Section("outline", ["OUTLINE:"], list(obs.outline), "outline lines"))
    links = [f"[{ln.ref}] {ln.text} -> {_short_href(ln.href, obs.url)}" for ln in obs.links]
    sections.append(_Section("links", ["LINKS:"], links, "links"))
    left = max(0, token_budget - used)
    kinds = [s.kind for s in sections]
    shares = [int(left * _SHARES[s.kind] / kinds.count(s.kind)) for s in sections]
    chosen: list[tuple[list[str], int]] = [_fit(s, share) for s, share in zip(sections, shares, strict=True)]
    left -= sum(cost for _, cost in chosen)
    for i, section in enumerate(sections):  # what a section left unused goes to the next, in order
        lines, cost = chosen[i]
        if left > 0 and len(lines) < len(section.head) + len(section.lines):
            more, more_cost = _fit(section, cost + left)
            if more_cost >= cost:
                chosen[i] = (more, more_cost)
                left -= more_cost - cost
    body = [line for lines, _ in chosen for line in lines]
    text = "\n".join(fixed + body)
    tokens = count_tokens(text)
    while tokens > token_budget and body:  # per-line estimates can be off by a few tokens
        body.pop()
        text = "\n".join(fixed + body)
        tokens = count_tokens(text)
    return text, tokens


def _short_href(href: str, page_url: str) -> str:
    """Same-origin links as paths: the origin repeated on every line is most of a link's tokens."""
    page, link = urlsplit(page_url), urlsplit(href)
    if (link.scheme, link.netloc) != (page.scheme, page.netloc) or not link.scheme:
        return href
    return urlunsplit(("", "", link.path or "/", link.query, link.fragment))


def _table_section(table: TableData) -> _Section:
    head = [_table_header(table, len(table.rows))]
    if any(table.headers):
        head.append(_row(table.headers))
    return _Section("tables", head, [_row(r) for r in table.rows], f"rows (read_table {table.index} for all)")
