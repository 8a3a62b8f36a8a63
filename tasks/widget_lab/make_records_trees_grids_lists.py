"""Regenerate the records of the lab's checkbox-tree, grid and list pages
(`python -m tasks.widget_lab.make_records_trees_grids_lists`).

Each answer is computed from the page's own data.json, so a record cannot drift from what its page serves; each
task needs its widget: nodes under collapsed ones, rows a virtualised grid or a pager holds out of view, posts a
feed appends only when scrolled or asked for more.
"""

from __future__ import annotations

from typing import Any

from tasks.widget_lab.records import lab_record, write_records
from tasks.widget_lab.registry import lab_pages


def _data(page: str) -> Any:
    return next(p for p in lab_pages() if p.name == page).data()


def jstree() -> None:
    flows = _data("jstree_checkbox")["flows"]
    names = ["Red River at Emerson", "Souris River near Westhope"]
    rows = [[n, flows[n]] for n in sorted(names)]
    write_records("jstree_checkbox", [lab_record(
        "jstree_checkbox", 1, f"In the station tree, tick the stations {names[0]} and {names[1]}. List each ticked "
        "station with its mean annual flow.", ["station", "flow"], rows, "station name ascending",
        [f"stations = {names[0]} and {names[1]}"], "jstree", "tree")])


def fancytree() -> None:
    counts = _data("fancytree_checkbox")["counts"]
    subs = ["FHA mortgage", "Store credit card"]
    rows = [[s, counts[s]] for s in sorted(subs)]
    write_records("fancytree_checkbox", [lab_record(
        "fancytree_checkbox", 1, f"In the product tree, choose the sub-products {subs[0]} and {subs[1]} only. List "
        "each with its number of complaints.", ["sub_product", "complaints"], rows, "sub-product ascending",
        [f"sub-products = {subs[0]} and {subs[1]}"], "jquery.fancytree", "tree")])


def ag_grid() -> None:
    rows = [[r["station"], r["years"]] for r in _data("ag_grid_virtual")
            if r["province"] == "YT" and r["years"] > 80]
    write_records("ag_grid_virtual", [lab_record(
        "ag_grid_virtual", 1, "In the station inventory, list the ID and years of record of every station in "
        "province YT with more than 80 years of record.", ["station", "years"], sorted(rows),
        "station ID ascending", ["all rows of the inventory"], "ag-grid-community", "grid")])


def datatables() -> None:
    rows = [[r[0], r[3]] for r in _data("datatables_paged") if r[2] == "Kentucky" and float(r[4]) > 8.2]
    write_records("datatables_paged", [lab_record(
        "datatables_paged", 1, "Among the water-quality monitoring sites, list the site ID and number of samples "
        "of every Kentucky site with a median pH above 8.2.", ["site", "samples"], sorted(rows),
        "site ID ascending", ["all pages of the sites table"], "datatables.net", "grid")])


def feed(page: str, place: str, what: str, one: str) -> None:
    rows = [[p["notice"], p["households"]] for p in _data(page)["posts"] if p["place"] == place]
    write_records(page, [lab_record(
        page, 1, f"Of all the {what} listed, give the notice number of every {place} {one} and the "
        "households affected.", ["notice", "households"], sorted(rows), "notice number ascending",
        [f"every {one} of the list"], "infinite-scroll", "list")])


def main() -> None:
    jstree()
    fancytree()
    ag_grid()
    datatables()
    feed("infinite_scroll_feed", "Whitehorse", "advisories", "advisory")
    feed("load_more_button", "Regina", "notices", "notice")


if __name__ == "__main__":
    main()
