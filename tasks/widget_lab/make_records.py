"""Regenerate the records of the lab pages this file knows (`python -m tasks.widget_lab.make_records`).

Each answer is computed from the page's own data.json, so a record cannot drift from what its page serves.
"""

from __future__ import annotations

from tasks.widget_lab.records import lab_record, write_records
from tasks.widget_lab.registry import PAGES_DIR, lab_pages


def _sites(page: str, states: list[str], type_: str | None = None) -> list[list[str]]:
    data = next(p for p in lab_pages() if p.name == page).data()
    rows = [s for s in data["sites"] if s["state"] in states and (type_ is None or s["type"] == type_)]
    return [[s["id"], s["samples"]] for s in sorted(rows, key=lambda s: s["id"])]


def multi_select(page: str, library: str, states: list[str], type_: str) -> None:
    rows = _sites(page, states, type_)
    said = " and ".join(states)
    write_records(page, [lab_record(
        page, 1, f"On the monitoring sites search, choose the states {said} (both at once) and site type {type_}, "
        f"then search. List every site's ID with its number of samples.", ["site", "samples"], rows,
        "site ID ascending", [f"states = {said}", f"type = {type_}"], library, "multi-select")])


def _complaints(page: str, keep) -> list[list[str]]:  # noqa: ANN001 - a predicate on one complaint
    data = next(p for p in lab_pages() if p.name == page).data()
    rows = sorted((c for c in data["complaints"] if keep(c)), key=lambda c: c["id"])
    return [[c["id"], c["received"]] for c in rows]


def typeahead(page: str, library: str, field: str, chosen: list[str]) -> None:
    key = "product" if field == "product" else "company"  # "companies" too
    rows = _complaints(page, lambda c: c[key] in chosen)
    said = " and ".join(chosen)
    write_records(page, [lab_record(
        page, 1, f"In the consumer complaints search, filter by {field} {said}, then search. List every "
        "complaint's ID with the date it was received.", ["complaint", "received"], rows, "complaint ID ascending",
        [f"{field} = {said}"], library, "typeahead")])


def dates(page: str, library: str, start: str, end: str, since: str | None = None) -> None:
    data = next(p for p in lab_pages() if p.name == page).data()
    rows = [[b["id"], b["date"]] for b in data["bulletins"]
            if start <= b["date"] <= end and (since is None or b["date"] >= since)]
    extra = f", updated since {since}" if since else ""
    write_records(page, [lab_record(
        page, 1, f"List the bulletins issued from {start} to {end} inclusive{extra}: each bulletin's ID and date.",
        ["bulletin", "date"], rows, "date ascending, then bulletin ID ascending",
        [f"issued {start}..{end}"] + ([f"updated since {since}"] if since else []), library, "date")])


def main() -> None:
    known = {p.name for p in lab_pages()}
    if "tom_select_multi" in known:
        multi_select("tom_select_multi", "tom-select", ["Ohio", "Indiana"], "Stream")
    if "choices_multi" in known:
        multi_select("choices_multi", "choices.js", ["Utah", "Idaho"], "Well")
    if "select2_multi" in known:
        multi_select("select2_multi", "select2", ["Texas", "Oregon"], "Well")
    if "jqueryui_autocomplete" in known:
        typeahead("jqueryui_autocomplete", "jquery-ui", "company", ["Harbor Credit"])
    if "uswds_combo_box" in known:
        typeahead("uswds_combo_box", "@uswds/uswds", "product", ["Student loan"])
    if "tom_select_remote" in known:
        typeahead("tom_select_remote", "tom-select", "companies", ["Beacon Bank", "Granite Trust"])
    if "flatpickr_dates" in known:
        dates("flatpickr_dates", "flatpickr", "2025-03-01", "2025-04-15", since="2025-02-10")
    if "jqueryui_datepicker" in known:
        dates("jqueryui_datepicker", "jquery-ui", "2025-05-03", "2025-06-20")
    if "uswds_date_range" in known:
        dates("uswds_date_range", "@uswds/uswds", "2025-08-04", "2025-09-30")
    print(f"records written under {PAGES_DIR}")


if __name__ == "__main__":
    main()
