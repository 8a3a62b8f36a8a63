"""The CONTROLS part of an observation's text: one line per control, within a token limit.

Every control keeps a ref the model can use. When the lines do not fit, whole panels (a tool panel, a menu,
a sidebar: `Control.box`) become one line each, naming the refs of their controls and the read that lists
them (`list_options <first ref>`): chrome menus and per-item widgets (buttons and toggles repeated in every post
of a thread) as soon as the main content does not fit, other chrome panels when the controls take more than their
share of the budget, then any panel, largest first, when the observation would not fit at all, then the tail of
the list. Boxes joined by alike controls (one entry's refs sit in several) are one panel, so its refs run on.
`collapsed_members` gives the same grouping back to the read, so what a line promises is what it lists.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from browser.numbers import page_int
from browser.tokens import count_tokens
from browser.types import Control

LONG_OPTION_LIST = 30  # longer option lists are summarised in the text (Control.options keeps them all)
SHOWN_OF_LONG_LIST = 10
LABEL_CHARS = 120  # a label, value or option longer than this is cut in the text (the structure keeps it whole)
VALUE_CHARS = 160
LINK_CHARS = 100  # a link's text longer than this is cut in the text
OPTION_CHARS = 80
ALIKE_REFS_SHOWN = 24  # ref items (refs or runs 'e5-e9') an alike note names
ALIKE_KINDS = {"button", "submit", "tab", "toggle"}
REPEATED_ALIKE = 2  # a panel with a control repeated this many more times holds per-item widgets
GROUP_REFS_SHOWN = 40  # ref items (single refs or ranges) a collapsed line names
# Chrome panels of only these kinds (site menus, tool toggles) become one line as soon as the page's main content
# does not fit whole; panels with form fields, link lists (facets, pagers) wait until the controls exceed their
# share of the budget.
NAV_KINDS = {"button", "submit", "tab", "toggle"}
_REF = re.compile(r"^(.*?)(\d+)$")


def clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(text: str | None, limit: int = LABEL_CHARS) -> str:
    return '"' + clip(text, limit).replace('"', "'") + '"'


def _page_numbers(control: Control) -> str | None:
    """A long pager as '1 | 2 | … | 14 | 15* | 16 | … | 31' (numbers around the current page and the ends)."""
    numbered = [(n, o.selected) for o in control.options if (n := page_int(o.label)) is not None]
    if len(numbered) < len(control.options) - 4 or not numbered:
        return None
    others = [clip(o.label, OPTION_CHARS) for o in control.options if page_int(o.label) is None]
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


def summarised(control: Control) -> bool:
    """Its line shows a part of its options and names the read that lists them all (a long list that is not a
    pager's page numbers)."""
    return len(control.options) > LONG_OPTION_LIST and not (control.kind == "link" and _page_numbers(control))


def option_list(control: Control) -> str:
    labels = [clip(o.label or o.value, OPTION_CHARS) for o in control.options]
    if len(labels) <= LONG_OPTION_LIST:
        return "{" + " | ".join(labels) + "}"
    if not summarised(control):
        return _page_numbers(control) or ""
    shown = labels[:SHOWN_OF_LONG_LIST]
    chosen = [clip(o.label or o.value, OPTION_CHARS) for o in control.options[SHOWN_OF_LONG_LIST:] if o.selected]
    more = len(labels) - len(shown) - len(chosen)
    return (
        "{" + " | ".join(shown + chosen)
        + f" | … {more} more of {len(labels)} — list_options {control.ref} for all" + "}"
    )


def control_line(control: Control, *, with_form: bool = False, options: bool = True) -> str:
    """One control as a line; with `options=False` its option list is `{…}` (a page the model has seen)."""
    parts = [f"[{control.ref}] {control.kind} {quote(control.label)}"]
    if with_form and control.form:
        parts.append(f"(form {quote(control.form)})")
    if control.kind in {"checkbox", "toggle"}:
        parts.append("[x]" if control.checked else "[-] (partly checked)" if control.value == "mixed" else "[ ]")
        if control.expanded is not None:
            parts.append("(open)" if control.expanded else "(collapsed: check a child by its name, it opens)")
    elif control.kind == "tab":
        if control.checked:
            parts.append("(selected)")
    elif control.kind == "chip":
        parts.append("(active filter; click to remove)")
    elif control.kind in {"button", "submit"}:
        pass
    elif control.kind == "link":
        parts.append(f"= {quote(control.value, VALUE_CHARS)}" if control.value else "")
    else:
        parts.append(f"= {quote(control.value, VALUE_CHARS)}")
    if control.options:
        parts.append(option_list(control) if options or control.kind == "link" else "{…}")
    if control.multiple:
        parts.append("(several: select adds one; mode replace/remove/clear)")
    if control.readonly and control.kind == "date":
        parts.append("(readonly picker: fill sets it by value)")
    if control.disabled:
        parts.append("(disabled)")
    if control.frame:
        parts.append(f"(in frame {control.frame})")
    return " ".join(p for p in parts if p)


@dataclass
class Entry:
    """A control line: the control and the alike controls the line stands for."""

    control: Control
    alike: list[Control] = field(default_factory=list)
    with_form: bool = False

    @property
    def controls(self) -> list[Control]:
        return [self.control, *self.alike]


def entries(controls: list[Control]) -> list[Entry]:
    """Controls repeated with the same label and state in the same form (a 'Share' or 'Up vote' per answer)
    as one entry with the refs of the others: hundreds of them must not crowd out the page."""
    out: list[Entry] = []
    first: dict[tuple[str, str, str | None, bool | None], int] = {}
    for c in controls:
        key = (c.kind, c.label, c.form, c.checked)
        alike = c.kind in ALIKE_KINDS and not c.disabled and not c.frame
        if alike and key in first:
            out[first[key]].alike.append(c)
            continue
        if alike:
            first[key] = len(out)
        out.append(Entry(c))
    twins = _duplicate_labels(controls)
    for entry in out:
        entry.with_form = entry.control.label in twins
    return out


def _duplicate_labels(controls: list[Control]) -> set[str]:
    """Labels of buttons that appear in more than one form: the line must say which form each submits."""
    forms: dict[str, set[str | None]] = {}
    for c in controls:
        if c.kind in {"button", "submit"}:
            forms.setdefault(c.label, set()).add(c.form)
    return {label for label, owners in forms.items() if len(owners) > 1}


def _alike_note(alike: list[Control], row_tables: dict[str, int]) -> str:
    """The other refs of a collapsed line; when they are all controls of table rows, the rows carry them."""
    if not alike:
        return ""
    tables = {row_tables.get(c.ref) for c in alike}
    if None not in tables and len(tables) == 1:
        return f" (+{len(alike)} alike, one per row of TABLE {tables.pop()}: each row ends with its ref)"
    items = ref_ranges([c.ref for c in alike])
    refs = ", ".join(items[:ALIKE_REFS_SHOWN]) + (", …" if len(items) > ALIKE_REFS_SHOWN else "")
    return f" (+{len(alike)} alike: {refs})"


def entry_line(entry: Entry, row_tables: dict[str, int], *, options: bool = True) -> str:
    """The control's line, with the refs of the alike controls it stands for (consecutive refs as 'e5-e9')."""
    return (control_line(entry.control, with_form=entry.with_form, options=options)
            + _alike_note(entry.alike, row_tables))


def ref_ranges(refs: list[str]) -> list[str]:
    """Refs as items, a run of consecutive refs written 'e10-e45' (every ref of a run is one of `refs`)."""
    numbered: dict[str, list[int]] = {}
    plain: list[str] = []
    for ref in refs:
        if m := _REF.match(ref):
            numbered.setdefault(m[1], []).append(int(m[2]))
        else:
            plain.append(ref)
    items: list[str] = []
    for prefix, numbers in numbered.items():
        numbers = sorted(set(numbers))
        run = [numbers[0]]
        for n in numbers[1:]:
            if n == run[-1] + 1:
                run.append(n)
            else:
                items.append(_run(prefix, run))
                run = [n]
        items.append(_run(prefix, run))
    return items + plain


def _run(prefix: str, run: list[int]) -> str:
    if len(run) >= 3:
        return f"{prefix}{run[0]}-{prefix}{run[-1]}"
    return ", ".join(f"{prefix}{n}" for n in run)


def _group_line(label: str, members: list[Control], *, tail: bool) -> str:
    kinds = Counter(c.kind for c in members)
    what = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    items = ref_ranges([c.ref for c in members])
    refs = ", ".join(items[:GROUP_REFS_SHOWN]) + (", …" if len(items) > GROUP_REFS_SHOWN else "")
    head = members[0].ref
    lead = f"… {len(members)} more controls" if tail else f"[{head}] panel {quote(label, 60)}: {len(members)} controls"
    return f"{lead} ({what}), refs {refs} — list_options {head} lists them"


def _panels(items: list[Entry]) -> dict[str, list[Entry]]:
    """Entries by panel: the box of their first control, boxes joined when one entry's alike controls sit in
    several (the vote button of every post joins the posts' boxes: one line, and its refs run on)."""
    parent: dict[str, str] = {}

    def find(box: str) -> str:
        while parent.setdefault(box, box) != box:
            parent[box] = parent[parent[box]]
            box = parent[box]
        return box

    for entry in items:  # of controls ranked alike: a "Close" in the site header does not join the posts
        keys = [c.box for c in entry.controls if c.box and c.rank == entry.control.rank]
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    boxes: dict[str, list[Entry]] = {}
    for entry in items:
        if entry.control.box:
            boxes.setdefault(find(entry.control.box), []).append(entry)
    return boxes


def _panel_label(panel: list[Entry]) -> str:
    """The label of the panel's largest box, and that of the next when it joins several."""
    sizes = Counter(c.box_label or "controls" for e in panel for c in e.controls)
    labels = [label for label, _ in sizes.most_common(3)]
    return " / ".join(labels[:2]) + (" / …" if len(labels) > 2 else "")


@dataclass
class _Slot:
    """One line of the CONTROLS part: an entry, or a collapsed panel (or the tail) standing for several."""

    members: list[Entry]
    label: str = ""
    collapsed: bool = False
    tail: bool = False
    tokens: int = -1

    @property
    def controls(self) -> list[Control]:
        return [c for e in self.members for c in e.controls]


def _layout(items: list[Entry], soft_limit: int, hard_limit: int, row_tables: dict[str, int],
            content_cut: bool = False) -> list[_Slot]:

    def line(slot: _Slot) -> str:
        if slot.collapsed:
            return _group_line(slot.label, slot.controls, tail=slot.tail)
        return entry_line(slot.members[0], row_tables)

    def total(slots: list[_Slot]) -> int:
        for slot in slots:
            if slot.tokens < 0:
                slot.tokens = count_tokens(line(slot)) + 1
        return sum(slot.tokens for slot in slots)

    slots = [_Slot([e]) for e in items]
    used = total(slots)
    if used <= soft_limit and not content_cut:
        return slots
    boxes = _panels(items)
    weight = {id(s.members[0]): s.tokens for s in slots}
    panels = sorted((es for es in boxes.values() if len(es) >= 2), key=lambda es: -sum(weight[id(e)] for e in es))
    chrome = [es for es in panels if all(e.control.rank >= 2 and e.control.kind != "link" for e in es)]
    menus = [es for es in chrome if all(e.control.kind in NAV_KINDS for e in es)] if content_cut else []
    # per-item widgets (a vote, share and flag button on every post) give way to the content they repeat in
    repeated = [es for es in panels if es not in menus and all(e.control.kind in NAV_KINDS for e in es)
                and any(len(e.alike) >= REPEATED_ALIKE for e in es)] if content_cut else []
    rest = [es for es in panels if es not in chrome and es not in repeated]
    plan = [*((es, -1) for es in menus + repeated), *((es, soft_limit) for es in chrome if es not in menus + repeated),
            *((es, hard_limit) for es in rest)]
    for panel, limit in plan:
        if used <= limit:
            continue
        inside = {id(e) for e in panel}
        label = _panel_label(panel)
        kept: list[_Slot] = []
        for slot in slots:
            if not slot.collapsed and id(slot.members[0]) in inside:
                if slot.members[0] is panel[0]:
                    kept.append(_Slot(list(panel), label=label, collapsed=True))
                continue
            kept.append(slot)
        slots = kept
        used = total(slots)
    while used > hard_limit and len(slots) > 1:  # the tail of the list as one line
        if slots[-1].tail:
            before = slots.pop(-2)
            slots[-1] = _Slot(before.members + slots[-1].members, collapsed=True, tail=True)
        else:
            last = slots.pop()
            slots.append(_Slot(list(last.members), collapsed=True, tail=True))
        used = total(slots)
    return slots


def fit_controls(controls: list[Control], row_tables: dict[str, int], *, soft_limit: int, hard_limit: int,
                 content_cut: bool = False, options: bool = True) -> list[str]:
    """The control lines within the limits (tokens, newlines included); `content_cut` when the main content
    does not fit whole (chrome menus give way to it); `options=False` shows option lists as `{…}` (the layout is
    the one with the lists, so the same lines stand for the same controls)."""
    items = entries(controls)
    slots = _layout(items, soft_limit, hard_limit, row_tables, content_cut)
    return [_group_line(s.label, s.controls, tail=s.tail) if s.collapsed
            else entry_line(s.members[0], row_tables, options=options) for s in slots]


def lists_left_out(controls: list[Control], row_tables: dict[str, int], *, soft_limit: int, hard_limit: int,
                   content_cut: bool = False) -> bool:
    """Whether the control lines within these limits name `list_options` (a collapsed panel or a summarised
    option list), from the layout, not from the lines."""
    slots = _layout(entries(controls), soft_limit, hard_limit, row_tables, content_cut)
    return any(s.collapsed or summarised(s.members[0].control) for s in slots)


def collapsed_members(controls: list[Control], row_tables: dict[str, int], *, soft_limit: int,
                      hard_limit: int, content_cut: bool = False) -> dict[str, list[Control]]:
    """First ref of each collapsed line -> the controls the line stands for (what list_options lists)."""
    slots = _layout(entries(controls), soft_limit, hard_limit, row_tables, content_cut)
    return {s.controls[0].ref: s.controls for s in slots if s.collapsed}
