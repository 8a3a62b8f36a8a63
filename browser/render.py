"""The compact text an LLM reads for one page, kept within a token budget. The observer returns the page as
structure only; whoever shows it renders it once, within the room it has (`render` -> `Rendering`: the text, or
its delta for a page shown whole before, with what its layout left out as data), and shows it as it is: nobody
parses it back. `whole_tokens` says what the page needs before a budget is decided.

What the budget is spent on follows what gates retrieval and what a task reads: the URL state, every control
(by ref; when the control lines take more than their share, chrome panels - menus, sidebars, tool panels -
become one line each that names their refs and the read that lists them; no page's fixed part exceeds the
budget), pagination, counts and notices (capped); then the main content's tables and text (observe-*.js ranks
and orders them), then side tables, the rest of the outline and links, cut from the end. Nothing is left out
silently: every cut section, even one with no line shown, ends with a note saying how much is missing and which
read returns it (read_table, read_section, list_links, list_options).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from browser.render_controls import (
    LINK_CHARS,
    LONG_OPTION_LIST,
    clip,
    collapsed_members,
    control_line,
    entries,
    entry_line,
    fit_controls,
    lists_left_out,
    quote,
    summarised,
)
from browser.tokens import count_tokens
from browser.types import CellLink, Control, Observation, TableData

__all__ = ["LONG_OPTION_LIST", "Rendering", "control_line", "render", "render_unchanged", "row_line",
           "collapsed_controls", "possible_reads", "whole_reads", "whole_tokens"]

_SUMMARY = re.compile(r"(?i)^(totals?|sum|overall|grand total|all|mean|average|avg|max(imum)?|min(imum)?|median|"
                      r"count|std\.?|standard deviation)\b")
MAX_SUMMARY_ROWS = 6
FOOT_SHARE = 0.25
DEFAULT_BUDGET = 1500  # a caller that names no budget (the worker's default)
CELL_CHARS = 160
MIN_TABLE_ROWS = 2  # every main table shows at least its header and this many rows before any gets more
# Shares of the budget left after the fixed part (see _allocate); what one leaves unused goes to the next.
MAIN_OUTLINE_SHARE = 0.35  # the main content's text lines, before the tables' rows
LINKS_SHARE = 0.15  # links before the tables' rows
CONTROLS_SHARE = 0.6  # control lines beyond this share of the budget: chrome panels become one line each
NOTICES_SHARE = 0.15
NOTICE_CHARS = 300
CONTENT_RESERVE = 0.1  # the fixed part never takes the last tenth: the content's heads and notes fit
SHORTEN_TO = 120  # the main text's long lines may be cut to this many characters so that all of it fits
SPARE_MIN = 8  # a first layout that leaves more tokens unused than this is laid out again with them
URL_CHARS = 300
STATE_VALUE_CHARS = 120
TITLE_CHARS = 200


def _state_lines(obs: Observation) -> list[str]:
    """The query's parameters, one line; none without a query (the URL line shows there is none)."""
    pairs = [f"{k}={clip('|'.join(v), STATE_VALUE_CHARS)}" for k, v in obs.query_state.items()]
    return ["State: " + "; ".join(pairs)] if pairs else []


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
    """`TABLE 0 (caption "Results"; 12 rows)`; a list read as a table says what it is (`cards; `), an HTML
    table (the usual case) does not: every line of a long task's observations is paid for again."""
    bits = ([] if table.source == "table" else [table.source]) + (
        [f"caption {quote(table.caption)}"] if table.caption else [])
    return f"TABLE {table.index} (" + ", ".join(bits) + ("; " if bits else "") + f"{table.total_rows} rows)"


def _cell(text: str) -> str:
    return clip(text.replace("|", "/"), CELL_CHARS)


def _linked(text: str, links: list[CellLink], shown: set[str]) -> str:
    """The cell's text with `[ref] ` before each link's text (after the text when the shown text does not hold
    it: a cut cell); a link to an address the row already gave a ref is not repeated."""
    at = 0
    for link in links:
        if not link.ref or not link.text or link.href in shown:  # an icon link (no text, no label) is left out
            continue
        shown.add(link.href)
        found = text.find(link.text, at) if link.text else -1
        if found < 0:
            text = f"{text} [{link.ref}]".strip()
            continue
        text = f"{text[:found]}[{link.ref}] {text[found:]}"
        at = found + len(link.ref) + 3 + len(link.text)
    return text


def _row(cells: list[str], links: list[list[CellLink]] | None = None) -> str:
    """`| a | | c |`: an empty cell is one space (the columns still line up; a table of many blanks costs less);
    each link in a cell is marked with its ref (`| [e41] Example Item |`: a row's detail page is clicked by it)."""
    shown: set[str] = set()
    parts = []
    for i, cell in enumerate(cells):
        text = _cell(cell)
        if links and i < len(links) and links[i]:
            text = _linked(text, links[i], shown)
        parts.append(f" {text} " if text.strip() else " ")
    return "|" + "|".join(parts) + "|"


def row_line(table: TableData, i: int) -> str:
    """A table row as text, its links marked with their refs, followed by the refs of the controls in it (a
    per-row button is clicked by its ref)."""
    refs = table.row_controls[i] if i < len(table.row_controls) else []
    links = table.cell_links[i] if i < len(table.cell_links) else None
    return _row(table.rows[i], links) + (f" [{', '.join(refs)}]" if refs else "")


@dataclass
class _Section:
    """Lines that may be cut from the end, with a note saying what was left out and how to get it."""

    kind: str  # "tables" | "outline" | "links"
    head: list[str]
    lines: list[str]
    what: str  # "rows of TABLE 2", "outline lines", "links"
    tool: str  # the read that returns what is left out
    beyond: int = 0  # items the observer counted but did not send (capped lists)
    foot: list[str] = field(default_factory=list)  # a table's summary rows: shown after the note when rows are cut
    show_foot: bool = False
    main: bool = True  # main content (tables ranked 0; the outline's first `first` lines)
    first: int = 0  # outline: how many leading lines are main content
    paid: int = 0  # tokens of the head already paid for by the notes' reserve (the head line of a cut section)
    refs: list[str] = field(default_factory=list)  # outline: per line, the ref that reads a long line whole

    def note(self, kept: int) -> str:
        left = len(self.lines) - kept + self.beyond
        return f"… {left} more {self.what} not shown — {self.tool}" if left > 0 else ""


@lru_cache(maxsize=8192)
def _tokens(line: str) -> int:
    """A line's tokens with its newline; cached: the layout weighs the same lines many times over."""
    return count_tokens(line) + 1


def _fit(section: _Section, budget: int, most: int | None = None) -> int:
    """How many lines (with the head and foot) fit in `budget`; the note is paid for separately."""
    cost = sum(_tokens(h) for h in section.head + _foot(section)) - section.paid
    kept = 0
    for line in section.lines[:most]:
        cost += _tokens(line)
        if cost > budget:
            break
        kept += 1
    return kept


def _cost(section: _Section, kept: int) -> int:
    if not kept:
        return 0
    head = sum(_tokens(h) for h in section.head + _foot(section)) - section.paid
    return head + sum(_tokens(line) for line in section.lines[:kept])


def _foot(section: _Section) -> list[str]:
    return section.foot if section.show_foot else []


def _lines(section: _Section, kept: int) -> list[str]:
    note = section.note(kept)
    if not kept:  # not one line fits: the head alone says what the section is, the note where it is
        return [f"{section.head[0]} {note}"] if note else []
    foot = _foot(section) if note and kept < len(section.lines) - len(section.foot) else []
    return section.head + section.lines[:kept] + ([note] if note else []) + foot


@dataclass
class _Layout:
    """What the text of an observation shows at a budget: the fixed lines, the sections and their kept counts."""

    head: list[str]  # URL, State, Title, Frames, the CONTROLS heading
    notices: list[str]  # pagination, counts and notices (after the control lines)
    sections: list[_Section]
    kept: list[int]
    controls_soft: int
    controls_hard: int
    row_tables: dict[str, int]
    content_cut: bool  # the main content does not fit whole beside every control line
    control_lines: list[str]
    notices_cut: bool = False  # the notices' last line says how many more there are


def _notices_shown(obs: Observation, limit: int) -> int:
    """How many notices fit in `limit` tokens (with their heading)."""
    used = _tokens("NOTICES:")
    for i, notice in enumerate(obs.notices):
        used += _tokens(clip(notice, NOTICE_CHARS))
        if used > limit:
            return i
    return len(obs.notices)


def _notice_lines(obs: Observation, limit: int) -> list[str]:
    if not obs.notices:
        return []
    shown = _notices_shown(obs, limit)
    lines = ["NOTICES:", *(clip(notice, NOTICE_CHARS) for notice in obs.notices[:shown])]
    if shown < len(obs.notices):
        lines.append(f"… {len(obs.notices) - shown} more notice(s) not shown (page banners and panels; "
                     "read_section reads them)")
    return lines


def _head_lines(obs: Observation) -> list[str]:
    """URL (its query: the State line), State, Title, Frames, the CONTROLS heading."""
    head = [f"URL: {clip(obs.url.split('?', 1)[0], URL_CHARS)}", *_state_lines(obs)]
    if obs.title:
        head.append(f"Title: {clip(obs.title, TITLE_CHARS)}")
    if obs.frames:
        head.append(clip("Frames: " + "; ".join(obs.frames), 4 * URL_CHARS))
    head.append(f"CONTROLS ({len(obs.controls)}):" if obs.controls else "CONTROLS: none found")
    return head


def _row_tables(obs: Observation) -> dict[str, int]:
    return {ref: t.index for t in obs.tables for refs in t.row_controls for ref in refs}


def _sections(obs: Observation) -> list[_Section]:
    """The tables, the outline and the links, every line of each, before any is cut."""
    sections = [_table_section(t) for t in obs.tables]
    first = len(obs.outline) if obs.outline_main is None else min(obs.outline_main, len(obs.outline))
    sections.append(_Section("outline", ["OUTLINE:"], list(obs.outline), "outline lines",
                             "read_section with a heading or ref", max(0, obs.outline_total - len(obs.outline)),
                             first=first, refs=list(obs.outline_refs)))
    links = [f"[{ln.ref}] {clip(ln.text, LINK_CHARS)} -> {clip(_short_href(ln.href, obs.url), URL_CHARS)}"
             for ln in obs.links]
    sections.append(_Section("links", ["LINKS:"], links, "links", "list_links",
                             max(0, obs.links_total - len(obs.links))))
    return sections


def _layout(obs: Observation, token_budget: int, spare: int = 0) -> _Layout:
    """The layout at `token_budget`; `spare`: tokens a first layout left unused (its per-line estimates run
    high), given to the sections on top of their budget."""
    head = _head_lines(obs)
    notices = _paging_lines(obs) + _notice_lines(obs, int(token_budget * NOTICES_SHARE))
    row_tables = _row_tables(obs)
    sections = _sections(obs)
    notes_reserve = 0  # each section's head line and note, as shown when not one line fits
    for s in sections:
        if s.lines or s.beyond:
            notes_reserve += _tokens(s.head[0] + " " + (s.note(0) or ""))
            s.paid = max(0, _tokens(s.head[0]) - 1)  # a shown section's head is then paid for already
    fixed_other = sum(_tokens(line) for line in head + notices)
    hard = max(0, int(token_budget * (1 - CONTENT_RESERVE)) - notes_reserve - fixed_other)
    soft = min(hard, int(token_budget * CONTROLS_SHARE))
    every = fit_controls(obs.controls, row_tables, soft_limit=soft, hard_limit=hard)
    main_need = sum(_cost(s, s.first if s.kind == "outline" else len(s.lines)) for s in sections if s.main)
    content_cut = fixed_other + sum(_tokens(line) for line in every) + notes_reserve + main_need > token_budget
    control_lines = fit_controls(obs.controls, row_tables, soft_limit=soft, hard_limit=hard,
                                 content_cut=content_cut) if content_cut else every
    used = fixed_other + sum(_tokens(line) for line in control_lines)
    left = max(0, token_budget - used - notes_reserve) + spare
    kept = _allocate(sections, left)
    return _Layout(head, notices, sections, kept, soft, hard, row_tables, content_cut, control_lines,
                   notices_cut=_notices_shown(obs, int(token_budget * NOTICES_SHARE)) < len(obs.notices))


def _allocate(sections: list[_Section], left: int) -> list[int]:
    """Main content first: 1. every main table its header and first rows, 2. the main content's text lines
    (up to a share), 3. links (up to a share: how the model moves on; not when the main content fits whole),
    4. the main tables' rows, shared so that short tables show whole, 5. what is left: the rest of the main
    text, side tables, the rest of the outline, more links; then what is still left, in the same order, to
    whatever the first round stopped at a line too long for its turn; last, when the main text is still cut,
    its longest lines are shortened if that shows it whole."""
    kept = [0] * len(sections)
    tables = [i for i, s in enumerate(sections) if s.kind == "tables"]
    main_tables = [i for i in tables if sections[i].main]
    side_tables = [i for i in tables if not sections[i].main]
    outline = next(i for i, s in enumerate(sections) if s.kind == "outline")
    links = next(i for i, s in enumerate(sections) if s.kind == "links")

    def spent() -> int:
        return sum(_cost(s, k) for s, k in zip(sections, kept, strict=True))

    for i in main_tables:
        kept[i] = min(MIN_TABLE_ROWS, _fit(sections[i], left // max(1, len(main_tables))))
    first = sections[outline].first
    if first:
        kept[outline] = _fit(sections[outline], int((left - spent()) * MAIN_OUTLINE_SHARE), most=first)
    rest = sum(_cost(sections[i], len(sections[i].lines)) - _cost(sections[i], kept[i]) for i in main_tables)
    rest += _cost(sections[outline], first) - _cost(sections[outline], kept[outline])
    if rest > left - spent():  # the main content does not fit whole anyway: links first get their share
        kept[links] = _fit(sections[links], int((left - spent()) * LINKS_SHARE))
    for i in main_tables:  # a main table's summary rows (totals, means), the last ones first, within a share
        section = sections[i]
        while section.foot and sum(_tokens(f) for f in section.foot) > min(left - spent(), left * FOOT_SHARE):
            section.foot.pop(0)
        section.show_foot = bool(section.foot)
    _share_fairly(sections, kept, main_tables, left - spent())

    def grow(i: int, most: int | None = None) -> None:
        more = _fit(sections[i], _cost(sections[i], kept[i]) + left - spent(), most=most)
        kept[i] = max(kept[i], more)

    grow(outline, most=first)
    _share_fairly(sections, kept, side_tables, left - spent())
    grow(outline)
    grow(links)
    shortened = False
    while True:  # a long line that did not fit stops its section, not the rest: what is left goes round again
        before = list(kept)
        _share_fairly(sections, kept, main_tables, left - spent())
        grow(outline, most=first)
        _share_fairly(sections, kept, side_tables, left - spent())
        grow(outline)
        grow(links)
        if kept != before:
            continue
        if shortened or kept[outline] >= first or not _shorten(sections[outline], first, _cost(
                sections[outline], kept[outline]) + left - spent()):
            return kept
        shortened = True  # once: the main text's long lines cut so that all of it fits
        grow(outline, most=first)


def _shortened(line: str, ref: str, chars: int) -> str:
    suffix = f" [read_section {ref}]"
    whole = line.removesuffix(suffix)  # observe-*.js cuts a very long paragraph itself, with the same ref
    return line if len(whole) <= chars else clip(whole, chars) + suffix


def _shorten(section: _Section, first: int, budget: int) -> bool:
    """The main text whole, its longest lines cut: when the main content's lines do not all fit in `budget`
    but would with every long line cut to the same length (at least SHORTEN_TO characters, each ending with the
    read that returns it), cut them to the longest such length. False when that does not fit either."""
    long = [i for i in range(min(first, len(section.refs))) if section.refs[i] and len(section.lines[i]) > SHORTEN_TO]
    if not long:
        return False
    lines = list(section.lines)

    def fits(chars: int) -> bool:
        for i in long:
            lines[i] = _shortened(section.lines[i], section.refs[i], chars)
        return _cost(_Section("outline", section.head, lines[:first], "", "", paid=section.paid), first) <= budget

    low, high = SHORTEN_TO, max(len(section.lines[i]) for i in long)
    if not fits(low):
        return False
    while low < high:  # the longest length that fits
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    fits(low)
    section.lines = lines
    return True


def _share_fairly(sections: list[_Section], kept: list[int], order: list[int], budget: int) -> int:
    """Spread `budget` over the tables so that short tables show whole and the long ones share the rest (a
    station's details and its history before the 90th row of its data); returns what is left."""
    need = {i: _cost(sections[i], len(sections[i].lines)) - _cost(sections[i], kept[i]) for i in order}
    waiting = sorted(order, key=lambda i: (need[i], order.index(i)))
    for n, i in enumerate(waiting):
        share = max(0, budget) // (len(waiting) - n)
        base = _cost(sections[i], kept[i])
        more = _fit(sections[i], base + share)
        if more > kept[i]:
            budget -= _cost(sections[i], more) - base
            kept[i] = more
    return budget


def _assemble(layout: _Layout, control_lines: list[str], body: list[str]) -> str:
    return "\n".join(layout.head + control_lines + layout.notices + body)


def _rendered(obs: Observation, token_budget: int) -> tuple[_Layout, list[str], str, int]:
    """The layout with its final kept counts, the control lines, the text and its tokens. Per-line estimates
    run a little high (notes not needed, tokens merged across lines), so what the first layout leaves unused
    goes to the main content by a second one (links, side tables and the rest of the outline keep what the
    first gave them); either is cut from the end if the text is over the budget."""
    layout, text, tokens = _fitted(_layout(obs, token_budget), token_budget)
    if tokens < token_budget - SPARE_MIN:
        again = _layout(obs, token_budget, token_budget - tokens)
        again.kept = [min(k, max(k0, _main_lines(s, k)))
                      for s, k, k0 in zip(again.sections, again.kept, layout.kept, strict=True)]
        if _main_total(again) > _main_total(layout):
            layout, text, tokens = _fitted(again, token_budget)
    return layout, layout.control_lines, text, tokens


def _main_lines(section: _Section, kept: int) -> int:
    """How many of a section's first `kept` lines are main content."""
    if section.kind == "outline":
        return min(kept, section.first)
    return kept if section.kind == "tables" and section.main else 0


def _main_total(layout: _Layout) -> int:
    return sum(_main_lines(s, k) for s, k in zip(layout.sections, layout.kept, strict=True))


def _fitted(layout: _Layout, token_budget: int) -> tuple[_Layout, str, int]:
    """The layout's text and tokens, its last lines cut while it is over the budget."""
    kept = layout.kept

    def assemble() -> str:
        return _assemble(layout, layout.control_lines,
                         [line for s, k in zip(layout.sections, kept, strict=True) for line in _lines(s, k)])

    text = assemble()
    tokens = count_tokens(text)
    while tokens > token_budget and any(kept):  # per-line estimates can be off by a few tokens
        last = max(i for i, k in enumerate(kept) if k)
        kept[last] -= 1
        text = assemble()
        tokens = count_tokens(text)
    return layout, text, tokens


@dataclass(frozen=True)
class Rendering:
    """One rendering of an observation within a budget: the text a prompt shows, its tokens, and what the
    layout recorded with it, so callers decide on typed data, never by searching the text: `reads`, the reads its
    notes name for what it left out (list_options, list_links, read_section); `complete`, nothing was left out
    for lack of room (a larger budget would show the same text); `unchanged_since`, the step whose whole text
    this shortens (`render(..., since_step=)`), else None."""

    text: str
    tokens: int
    budget: int
    reads: frozenset[str]
    complete: bool
    unchanged_since: int | None = None


DELTA_MIN_SAVING = 40  # tokens; a smaller saving is not worth a second form of the page


def render(obs: Observation, token_budget: int = DEFAULT_BUDGET, *, since_step: int | None = None) -> Rendering:
    """The observation's text within `token_budget`, laid out once. With `since_step` (the model was shown this
    same page whole at that step) the page as `render_unchanged` shortens it, when that saves DELTA_MIN_SAVING
    tokens or more; its `reads` are the whole text's (its first line names them)."""
    layout, control_lines, text, tokens = _rendered(obs, token_budget)
    reads, complete = _left_out(obs, layout), _complete(obs, layout)
    if since_step is not None:
        delta = _unchanged(obs, layout, control_lines, since_step)
        delta_tokens = count_tokens(delta)
        if tokens - delta_tokens >= DELTA_MIN_SAVING:
            return Rendering(delta, delta_tokens, token_budget, reads, complete, since_step)
    return Rendering(text, tokens, token_budget, reads, complete)


def whole_tokens(obs: Observation) -> int:
    """What the observation's text takes with nothing left out: the tokens of a `complete` rendering at any
    budget that holds it. No layout: a caller deciding a budget learns what the page needs before it renders."""
    notices = [*_paging_lines(obs), *(["NOTICES:"] if obs.notices else []),
               *(clip(notice, NOTICE_CHARS) for notice in obs.notices)]
    controls = fit_controls(obs.controls, _row_tables(obs), soft_limit=_UNLIMITED, hard_limit=_UNLIMITED)
    body = [line for section in _sections(obs) for line in _lines(section, len(section.lines))]
    return count_tokens("\n".join([*_head_lines(obs), *controls, *notices, *body]))


_UNLIMITED = 1 << 30


def whole_reads(obs: Observation) -> frozenset[str]:
    """The reads a rendering that shows the page whole names (`Rendering.reads` when `complete`): long option
    lists summarised, and what the observer itself capped or cut (links, outline lines)."""
    return frozenset({"list_options"} if any(summarised(c) for c in obs.controls) else set()) | (
        {"list_links"} if obs.links_total > len(obs.links) else set()) | (
        {"read_section"} if obs.outline_total > len(obs.outline) or obs.outline_cut else set())


def possible_reads(obs: Observation) -> frozenset[str]:
    """The reads a rendering of the observation may name at some budget (a superset of every `Rendering.reads`):
    for a caller that must decide before the budget is known."""
    return frozenset({"list_options"} if obs.controls else set()) | (
        {"list_links"} if obs.links or obs.links_total else set()) | (
        {"read_section"} if obs.outline or obs.outline_total or obs.notices else set())


def _left_out(obs: Observation, layout: _Layout) -> frozenset[str]:
    """From the layout, not the text: a collapsed panel or a summarised option list (list_options), links cut
    (list_links), outline lines cut or shortened, by the renderer or the observer, or notices cut (read_section)."""
    reads: set[str] = set()
    if lists_left_out(obs.controls, layout.row_tables, soft_limit=layout.controls_soft,
                      hard_limit=layout.controls_hard, content_cut=layout.content_cut):
        reads.add("list_options")
    if layout.notices_cut:
        reads.add("read_section")
    for section, kept in zip(layout.sections, layout.kept, strict=True):
        if section.kind == "links" and section.note(kept):
            reads.add("list_links")
        elif section.kind == "outline" and (section.note(kept) or any(
                i in obs.outline_cut or line != obs.outline[i] for i, line in enumerate(section.lines[:kept]))):
            reads.add("read_section")
    return frozenset(reads)


def _complete(obs: Observation, layout: _Layout) -> bool:
    """Nothing left out for lack of room: every control on its own line, every notice, every line of every
    section as the observer sent it (what the observer capped is noted at any budget)."""
    return (not layout.notices_cut
            and layout.control_lines == [entry_line(e, layout.row_tables) for e in entries(obs.controls)]
            and all(kept == len(s.lines) for s, kept in zip(layout.sections, layout.kept, strict=True))
            and all(s.kind != "outline" or s.lines == obs.outline for s in layout.sections))


def collapsed_controls(obs: Observation, token_budget: int = DEFAULT_BUDGET) -> dict[str, list[Control]]:
    """The controls each collapsed line of the observation's text at `token_budget` stands for, by the line's
    first ref (what `list_options <ref>` lists)."""
    layout = _layout(obs, token_budget)
    return collapsed_members(obs.controls, layout.row_tables, soft_limit=layout.controls_soft,
                             hard_limit=layout.controls_hard, content_cut=layout.content_cut)


def render_unchanged(obs: Observation, *, since_step: int, token_budget: int = DEFAULT_BUDGET) -> str:
    """The page as a model that was shown it whole at `since_step` needs it again (the same URL, page id and
    text): every line of the whole text but the bulk content it read then - option lists as `{…}` (each
    control's line stays, with its value), table body rows (each table's heading and header row stay) and
    outline text - with a first line saying so and which reads return them. Every control, link, the state,
    pagination, counts and notices stay, laid out as in the whole text at `token_budget`. (`render` with
    `since_step` gives this or the whole text, from one layout.)"""
    layout, whole, _, _ = _rendered(obs, token_budget)
    return _unchanged(obs, layout, whole, since_step)


def _unchanged(obs: Observation, layout: _Layout, whole: list[str], since_step: int) -> str:
    control_lines = fit_controls(obs.controls, layout.row_tables, soft_limit=layout.controls_soft,
                                 hard_limit=layout.controls_hard, content_cut=layout.content_cut, options=False)
    options = sum(1 for a, b in zip(control_lines, whole, strict=True) if a != b)
    rows = outline = 0
    body: list[str] = []
    for section, kept in zip(layout.sections, layout.kept, strict=True):
        if section.kind == "links":
            body += _lines(section, kept)
        elif section.kind == "outline":
            outline += kept
            if kept or section.note(0):
                body.append(section.head[0])
        else:
            rows += kept
            if kept:
                body += section.head
            elif note := section.note(0):
                body.append(f"{section.head[0]} {note}")
    note = (f"(page unchanged since step {since_step}: every control and link below; not repeated: "
            f"{options} option list(s) {{…}}, {rows} table row(s), {outline} outline line(s): "
            "list_options / read_table / read_section return them)")
    return "\n".join([note, *layout.head, *control_lines, *layout.notices, *body])


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
    foot: list[str] = []
    if len(rows) >= table.total_rows:  # the observer sent the table's end: its summary rows are shown after a cut
        while (len(foot) < MAX_SUMMARY_ROWS and len(rows) - len(foot) > MIN_TABLE_ROWS + 1
               and (cells := table.rows[len(rows) - len(foot) - 1]) and _SUMMARY.match(cells[0].strip())):
            foot.insert(0, rows[len(rows) - len(foot) - 1])
    foot = [f"(end) {line}" for line in foot]
    return _Section("tables", head, rows, f"rows of TABLE {table.index}", f"read_table {table.index}",
                    max(0, table.total_rows - len(table.rows)), main=table.rank == 0, foot=foot)
