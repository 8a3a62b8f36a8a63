"""Deterministic table reading from HTML: `<table>`, ARIA tables, and regular card/list results.

The observation (and a later `read_table`) must give the same rows for the same DOM, whatever the
LLM, so tables are parsed here with BeautifulSoup rather than described by a model.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, Tag

from browser.numbers import page_int
from browser.types import CellLink, TableData

_SPACE = re.compile(r"\s+")
_ACTIVE_CLASS = re.compile(r"^(active|selected|current|is-active|is-selected|on)$")
_SKIP_TAGS = {"script", "style", "template", "noscript", "select", "option", "button", "svg"}
_NOT_CARDS = {"nav", "header", "footer", "form", "aside", "select", "table"}


_NO_TEXT_TAGS = {"script", "style", "template", "noscript", "select", "datalist"}
_INLINE_TAGS = {"a", "span", "b", "i", "em", "strong", "small", "code", "label", "abbr", "sup", "sub", "font", "u",
                "s", "mark", "time", "cite", "q", "kbd", "var", "img", "data", "bdi", "bdo", "wbr", "nobr"}


def _text(node: Tag) -> str:
    """Text as laid out: inline markup joins without a space ("km<sup>2</sup>" is "km2", "(cs.CV)</span>;" keeps
    its semicolon attached); block boundaries and line breaks separate words."""
    parts: list[str] = []

    def visit(tag: Tag) -> None:
        for child in tag.children:
            if isinstance(child, Tag):
                if child.name in _NO_TEXT_TAGS:
                    continue
                block = child.name not in _INLINE_TAGS
                if block:
                    parts.append(" ")
                visit(child)
                if block:
                    parts.append(" ")
            elif isinstance(child, str) and not isinstance(child, Comment):
                parts.append(str(child))

    visit(node)
    return _SPACE.sub(" ", "".join(parts)).strip()


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _hrefs(node: Tag) -> list[str]:
    return [str(a["href"]) for a in node.find_all("a", href=True)]


def _links(node: Tag) -> list[CellLink]:
    """The links in a cell or card field (the node itself when it is one), with the refs observe-*.js gave them."""
    found = [node] if node.name == "a" and node.has_attr("href") else node.find_all("a", href=True)
    return [CellLink(text=_text(a) or str(a.get("aria-label") or a.get("title") or ""), href=str(a["href"]).strip(),
                     ref=str(a.get("data-sgr-ref") or ""))
            for a in found if not str(a["href"]).strip().lower().startswith("javascript:")]


_CONTROL_TAGS = {"button", "input", "select", "textarea"}
_CONTROL_ROLES = {"button", "checkbox", "radio", "switch", "combobox", "tab", "menuitem"}


def _control_refs(node: Tag) -> list[str]:
    """Refs (set by observe-*.js before the HTML was taken) of the controls inside a row: a button per result row
    is addressed through its row."""
    return [str(el["data-sgr-ref"]) for el in node.find_all(attrs={"data-sgr-ref": True})
            if el.name in _CONTROL_TAGS or el.get("role") in _CONTROL_ROLES]


# ---------------------------------------------------------------- <table> and role=table


@dataclass
class _Grid:
    """Rows of cells after colspan/rowspan expansion, so every row lines up with the headers."""

    rows: list[list[str]] = field(default_factory=list)
    header_rows: int = 0
    links: list[list[str]] = field(default_factory=list)
    controls: list[list[str]] = field(default_factory=list)
    cells: list[list[list[CellLink]]] = field(default_factory=list)  # per row, per column: the cell's links


def _span(cell: Tag, name: str) -> int:
    span = page_int(str(cell.get(name, 1)))  # page text: bounded, never a ValueError
    return 1 if span is None else max(1, min(span, 100))


def _html_grid(table: Tag) -> _Grid:
    grid = _Grid()
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill) from rowspans
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    for tr in rows:
        cells = tr.find_all(["td", "th"], recursive=False)
        out: list[str] = []
        out_links: list[list[CellLink]] = []
        col = 0
        queue = list(cells)
        while queue or col in carried:
            if col in carried:
                text, left = carried[col]
                out.append(text)
                out_links.append([])  # a cell spanning rows links from its first row only
                if left <= 1:
                    del carried[col]
                else:
                    carried[col] = (text, left - 1)
                col += 1
                continue
            cell = queue.pop(0)
            text = _text(cell)
            for spanned in range(_span(cell, "colspan")):
                if _span(cell, "rowspan") > 1:
                    carried[col] = (text, _span(cell, "rowspan") - 1)
                out.append(text)
                out_links.append([] if spanned else _links(cell))
                col += 1
        if not out:
            continue
        in_head = tr.find_parent("thead") is not None
        all_th = bool(cells) and all(c.name == "th" for c in cells)
        if (in_head or all_th) and len(grid.rows) == grid.header_rows:
            grid.header_rows += 1
        grid.rows.append(out)
        grid.cells.append(out_links)
        grid.links.append(_hrefs(tr))
        grid.controls.append(_control_refs(tr))
    return grid


def _rows_in_place(table: Tag) -> list[Tag]:
    """ARIA rows in the order they stand: a virtualised grid reuses row elements, so the DOM order is not the
    shown one when every row states its place (aria-rowindex)."""
    rows = list(table.find_all(attrs={"role": "row"}))
    places = [str(r.get("aria-rowindex") or "") for r in rows]
    if rows and all(p.isdigit() for p in places):
        rows = [r for _, r in sorted(zip((int(p) for p in places), rows, strict=True), key=lambda pr: pr[0])]
    return rows


def _aria_grid(table: Tag) -> _Grid:
    grid = _Grid()
    for row in _rows_in_place(table):
        cells = row.find_all(attrs={"role": ["cell", "gridcell", "columnheader", "rowheader"]})
        if not cells:
            continue
        if all(c.get("role") == "columnheader" for c in cells) and len(grid.rows) == grid.header_rows:
            grid.header_rows += 1
        grid.rows.append([_text(c) for c in cells])
        grid.cells.append([_links(c) for c in cells])
        grid.links.append(_hrefs(row))
        grid.controls.append(_control_refs(row))
    return grid


def _merge_headers(rows: list[list[str]], width: int) -> list[str]:
    """Several header rows (a grouped header) become one 'Group / Column' name per column."""
    headers: list[str] = []
    for col in range(width):
        parts: list[str] = []
        for row in rows:
            text = row[col] if col < len(row) else ""
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        headers.append(" / ".join(parts))
    return headers


def parse_table(table: Tag, *, index: int = 0, max_rows: int = 200) -> TableData | None:
    """One `<table>` or `role=table|grid` element; None when it has no data cells."""
    grid = _html_grid(table) if table.name == "table" else _aria_grid(table)
    if not grid.rows:
        return None
    width = max(len(r) for r in grid.rows)
    header_rows = grid.header_rows
    if header_rows == 0 and len(grid.rows) > 1 and _looks_like_header(table):
        header_rows = 1
    headers = _merge_headers(grid.rows[:header_rows], width) if header_rows else [""] * width
    body = [r + [""] * (width - len(r)) for r in grid.rows[header_rows:]]
    links = grid.links[header_rows:]
    cell_links = [r + [[] for _ in range(width - len(r))] for r in grid.cells[header_rows:]]
    caption_tag = table.find("caption")
    caption = _text(caption_tag) if caption_tag else (table.get("aria-label") or None)
    return TableData(
        index=index,
        caption=str(caption) if caption else None,
        headers=headers,
        rows=body[:max_rows],
        row_links=links[:max_rows],
        row_controls=grid.controls[header_rows:][:max_rows],
        cell_links=cell_links[:max_rows],
        total_rows=len(body),
        truncated=len(body) > max_rows,
        source="table",
    )


def _looks_like_header(table: Tag) -> bool:
    """A first row in bold/`<th>` cells with no thead: treat it as the header (common in old sites)."""
    first = table.find("tr")
    return bool(first) and first.find("th") is not None


# ---------------------------------------------------------------- cards


def _signature(node: Tag) -> str:
    classes = sorted(c for c in node.get("class", []) if not _ACTIVE_CLASS.match(c))
    return ".".join([node.name, *classes])


def _field_name(node: Tag, card: Tag) -> str:
    """A field's column name: its data-field / itemprop / class, else its tag path inside the card."""
    return _named_field(node, card)[0]


def _named_field(node: Tag, card: Tag) -> tuple[str, bool]:
    """The column name and whether it names the field: a data-field / itemprop / data-label, or the one class of
    its element. The last of several classes ('d-inline-flex ai-center') is styling, not a name."""
    for attr in ("data-field", "itemprop", "data-label"):
        if node.get(attr):
            return str(node[attr]), True
    here: Tag | None = node
    while here is not None and here is not card:
        classes = [c for c in here.get("class", []) if not _ACTIVE_CLASS.match(c)]
        if classes:
            return classes[-1], len(classes) == 1
        here = here.parent
    path: list[str] = []
    here = node
    while here is not None and here is not card:
        path.append(here.name)
        here = here.parent
    return "/".join(reversed(path)) or node.name, True  # a tag path: shown blank (see _meaningful)


_LAYOUT_NAME = re.compile(r"\d|/|^(?:[a-z]|h[1-6]|div|span|p|li|ul|ol|dl|dt|dd|td|tr|section|article|b|i|em|strong|small|a)$")


def _meaningful(name: str) -> bool:
    """A column name a reader can use: not a tag path or a layout class with numbers in it ("col-xs-6")."""
    return not _LAYOUT_NAME.search(name)


def _card_fields(card: Tag, named: set[str] | None = None) -> list[tuple[str, str, Tag]]:
    """(column name, text, node) for each text-bearing leaf of a card, in document order; `named` collects the
    column names that name their field (see `_named_field`).

    A node mixing its own text with markup ("Depth: <i>10 m</i>") is one field, so labels stay with values.
    """
    fields: list[tuple[str, str, Tag]] = []

    def visit(node: Tag) -> None:
        for child in node.children:
            if not isinstance(child, Tag) or child.name in _SKIP_TAGS:
                continue
            text = _text(child)
            if not text:
                continue
            nested = [c for c in child.children if isinstance(c, Tag) and c.name not in _SKIP_TAGS and _text(c)]
            own = "".join(s for s in child.find_all(string=True, recursive=False)).strip()
            if not nested or own:
                name, names_it = _named_field(child, card)
                fields.append((name, text, child))
                if names_it and named is not None:
                    named.add(name)
            else:
                visit(child)

    visit(card)
    if not fields and _text(card):
        fields.append(("text", _text(card), card))
    return fields


def card_items(container: Tag) -> list[Tag]:
    """The repeated children of a card-list container (the most common tag+class signature)."""
    children = [c for c in container.find_all(True, recursive=False) if c.name not in _SKIP_TAGS]
    if len(children) < 3:
        return []
    sig, count = Counter(_signature(c) for c in children).most_common(1)[0]
    if count < 3 or count < 0.6 * len(children):
        return []
    return [c for c in children if _signature(c) == sig]


def parse_cards(container: Tag, *, index: int = 0, max_rows: int = 200) -> TableData | None:
    """Rows from a regular card list: columns are fields present in at least half of the cards."""
    cards = card_items(container)
    if not cards:
        return None
    per_card: list[dict[str, str]] = []
    per_card_links: list[dict[str, list[CellLink]]] = []
    order: list[str] = []
    named: set[str] = set()
    for card in cards:
        values: dict[str, str] = {}
        links: dict[str, list[CellLink]] = {}
        for name, text, node in _card_fields(card, named):
            if name not in order:
                order.append(name)
            values[name] = f"{values[name]}; {text}" if name in values else text
            links[name] = links.get(name, []) + _links(node)
        per_card.append(values)
        per_card_links.append(links)
    present = Counter(name for values in per_card for name in values)
    headers = [name for name in order if present[name] >= max(2, len(cards) / 2)]
    if not headers:
        return None
    rows = [[values.get(h, "") for h in headers] for values in per_card]
    cell_links = [_card_links(card, [links.get(h, []) for h in headers])
                  for card, links in zip(cards, per_card_links, strict=True)]
    # a header row only when every column is named by the page: styling classes are no header
    headers = [h if _meaningful(h) else "" for h in headers] if named.issuperset(headers) else [""] * len(headers)
    return TableData(
        index=index,
        caption=None,
        headers=headers,
        rows=rows[:max_rows],
        row_links=[_hrefs(c) for c in cards][:max_rows],
        row_controls=[_control_refs(c) for c in cards][:max_rows],
        cell_links=cell_links[:max_rows],
        total_rows=len(rows),
        truncated=len(rows) > max_rows,
        source="cards",
    )


def _card_links(card: Tag, cells: list[list[CellLink]]) -> list[list[CellLink]]:
    """A card's links by column; one in no column (the card is a link, an image link, a field left out) goes to
    the first cell with text, so every link of a card is on its row."""
    placed = {(link.href, link.ref) for cell in cells for link in cell}
    rest = [link for link in _links(card) if (link.href, link.ref) not in placed]
    if rest and cells:
        cells[0] = cells[0] + rest
    return cells


def _is_card_container(node: Tag) -> bool:
    if node.name in _NOT_CARDS or any(p.name in _NOT_CARDS for p in node.parents):
        return False
    if node.get("role") in {"listbox", "navigation", "tablist"}:
        return False
    cards = card_items(node)
    if not cards:
        return False
    rich = [c for c in cards if len(_card_fields(c)) >= 2 and len(c.get_text(" ", strip=True)) >= 25]
    return len(rich) >= 0.6 * len(cards)


# ---------------------------------------------------------------- entry points


def parse_fragment(html: str, kind: str, *, index: int, max_rows: int = 200, base_url: str | None = None
                   ) -> TableData | None:
    """Parse one fragment sent by observe-*.js: `kind` is 'table' or 'cards'; cell links are made absolute
    against `base_url` (the address of the frame the fragment came from)."""
    soup = _soup(html)
    body = soup.body or soup
    root = next((c for c in body.children if isinstance(c, Tag)), None)
    if root is None:
        return None
    table = parse_cards(root, index=index, max_rows=max_rows) if kind == "cards" else parse_table(
        root, index=index, max_rows=max_rows
    )
    if table is not None and base_url:
        for row in table.cell_links:
            for cell in row:
                for link in cell:
                    link.href = urljoin(base_url, link.href)
    return table


def fragment_links(html: str, base_url: str) -> list[CellLink]:
    """The links of a fragment that gave no table (a card list observe-*.js saw that does not parse as one): the
    observer leaves what it takes as a table out of the page's plain links, so these are listed instead."""
    links = _links(_soup(html))
    for link in links:
        link.href = urljoin(base_url, link.href)
    return links


def extract_tables(html: str, *, max_rows: int = 200) -> list[TableData]:
    """Every data table and regular card list of a whole document, in document order."""
    soup = _soup(html)
    found: list[TableData] = []
    inside_taken: set[int] = set()
    for node in soup.find_all(True):
        if id(node) in inside_taken:
            continue
        if node.name == "table" or node.get("role") in {"table", "grid"}:
            if node.find_parent("table") is not None:
                continue
            table = parse_table(node, index=len(found), max_rows=max_rows)
        elif len(node.find_all(True, recursive=False)) >= 3 and _is_card_container(node):
            table = parse_cards(node, index=len(found), max_rows=max_rows)
        else:
            continue
        if table is not None and table.rows:
            found.append(table)
            inside_taken.update(id(d) for d in node.find_all(True))
    return found
