"""Matching what the agent asks for ('Drainage area', section 'Flow') against what the page shows
(`browser.types.PageFacts`): whole normalised labels first, then whole-word containment when it is unique;
an ambiguous or missing label is an error that lists what the page does show, never a guess."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from graph.evidence import model_regex
from graph.plan.values import norm_value


class FactError(ValueError):
    """A label or section the page does not show (the message lists the ones it does)."""


def _norm(text: str) -> str:
    return norm_value(re.sub(r"[:*]+\s*$", "", text or ""))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", _norm(text))


def in_section(section: list[str], wanted: str | None) -> bool:
    """Whole words of `wanted` appear, in order, in one of the enclosing headings / captions."""
    if not wanted:
        return True
    words = _words(wanted)
    for part in section:
        have = _words(part)
        if any(have[i:i + len(words)] == words for i in range(len(have) - len(words) + 1)):
            return True
    return False


def _named(pool: list[dict[str, Any]], key: str, text: str) -> list[dict[str, Any]]:
    """The items whose `key` is `text` (normalised), else those whose `key` holds each of its words."""
    wanted = _norm(text)
    found = [item for item in pool if _norm(item[key]) == wanted]
    if not found:
        words = set(_words(text))
        found = [item for item in pool if words and words <= set(_words(item[key]))]
    return found


def find_fact(facts: dict[str, Any], label: str, *, section: str | None = None) -> tuple[str, str]:
    """(value, locator) of `label` in a PageFacts dump; FactError when missing or ambiguous."""
    pool = [f for f in facts.get("facts") or [] if in_section(f["section"], section)]
    exact = _named(pool, "label", label)
    values = list(dict.fromkeys(f["value"] for f in exact))
    if len(values) == 1:
        fact = exact[0]
        where = " > ".join(fact["section"])
        return fact["value"], f"{fact['locator']} '{fact['label']}'" + (f" in {where}" if where else "")
    shown = list(dict.fromkeys(f["label"] for f in pool))
    scope = f" in section {section!r}" if section else ""
    if not values:
        raise FactError(f"no label {label!r}{scope}; the page shows: {shown[:40]}")
    options = [f"{f['label']!r}={f['value']!r} ({' > '.join(f['section'])})" for f in exact[:6]]
    raise FactError(f"label {label!r}{scope} is ambiguous: {'; '.join(options)}; give the full label or a section")


def path_segment(url: str, source: str) -> str:
    """'path:<n>': the n-th segment of the URL's path (1-based; -1 the last): `/vulns/detail/<ID>` path:-1."""
    number = source[5:].strip()
    if not number.lstrip("-").isdigit() or int(number) == 0:
        raise FactError(f"{source!r}: give a segment number, 1 the first, -1 the last")
    segments = [unquote(p) for p in urlsplit(url).path.split("/") if p]
    index = int(number) - 1 if int(number) > 0 else int(number)
    return segments[index] if -len(segments) <= index < len(segments) else ""


def find_link(facts: dict[str, Any], text: str, *, section: str | None = None) -> tuple[str, str]:
    """(URL, locator) of the link whose text is `text` (else the one link containing its words); FactError when
    none or several different URLs match."""
    pool = [link for link in facts.get("links") or [] if in_section(link["section"], section)]
    found = _named(pool, "text", text)
    hrefs = list(dict.fromkeys(link["href"] for link in found))
    if len(hrefs) == 1:
        return hrefs[0], f"link {found[0]['text']!r}"
    if not hrefs:
        shown = list(dict.fromkeys(link["text"] for link in pool))
        raise FactError(f"no link {text!r}; the page's links: {shown[:40]}")
    options = [f"{link['text']!r} -> {link['href']}" for link in found[:6]]
    raise FactError(f"link {text!r} is ambiguous: {'; '.join(options)}; give its full text or a section")


def source_value(source: str, facts: dict[str, Any] | None, *, url: str, page_text: str,
                 section: str | None = None) -> tuple[str, str]:
    """A read_facts field source: heading, title, url:<param>, path:<n>, link:<text> (that link's URL),
    re:<regex>, fact:<label> or a bare label."""
    facts = facts or {}
    if source in ("heading", "title"):
        return str(facts.get(source) or ""), source
    if source.startswith("url:"):
        return ",".join(parse_qs(urlsplit(url).query).get(source[4:], [])), source
    if source.startswith("path:"):
        return path_segment(url, source), source
    if source.startswith("link:"):
        return find_link(facts, source[5:], section=section)
    if source.startswith("re:"):
        try:
            match = model_regex.search(source[3:], page_text)
        except model_regex.PatternError as exc:  # does not compile, or ran past its deadline: the model rewrites it
            raise FactError(str(exc)) from exc
        if not match:
            raise FactError(f"regex {source[3:]!r} found nothing in the page text")
        return (match.group(1) if match.groups() else match.group(0)).strip(), "page text"
    label = source[5:] if source.startswith("fact:") else source
    return find_fact(facts, label, section=section)


def section_table(facts: dict[str, Any], section: str) -> tuple[dict[str, Any], int]:
    """The first table whose nearest heading/caption matches `section` (else any enclosing one)."""
    tables = facts.get("tables") or []
    nearest = [i for i, t in enumerate(tables) if in_section(t["section"][-1:], section)]
    anywhere = [i for i, t in enumerate(tables) if in_section(t["section"], section)]
    picked = (nearest or anywhere or [None])[0]
    if picked is None:
        shown = list(dict.fromkeys(" > ".join(t["section"]) or "(no heading)" for t in tables))
        raise FactError(f"no table under a heading {section!r}; tables are under: {shown}")
    return tables[picked]["table"], picked
