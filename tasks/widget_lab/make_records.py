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


def main() -> None:
    known = {p.name for p in lab_pages()}
    if "tom_select_multi" in known:
        multi_select("tom_select_multi", "tom-select", ["Ohio", "Indiana"], "Stream")
    print(f"records written under {PAGES_DIR}")


if __name__ == "__main__":
    main()
