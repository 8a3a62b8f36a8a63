"""Writes rewritten/<task>.json: each clean real-model path of ../shared/real_model_runs (commit 6669184) as it would
be done with the tools of issue 27 (reads that open their URL(s), link:<header> sources, table label/value facts,
PDF text in read_pdf's reply, values as printed). The model's own decisions (gates, tables, SQL) are kept; only the
steps the old tools forced are replaced. Run: python tests/data/real_model_paths/rewrite.py /work/shared/real_model_runs
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def step(tool: str, **args) -> dict:
    return {"tool": tool, "args": args}


def chunks(items: list[str], size: int = 12) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def stats(clean: dict) -> tuple[list[dict], str]:
    s = clean["steps"]
    labels = {"pop25": "Population 25 years and over", "bachelor_plus": "Bachelor's degree or higher",
              "pop16": "Population 16 years and over", "in_labor_force": "In labor force", "unemployed": "Unemployed"}
    counties = [f"{{origin}}/stats/profile/EM-{i:02d}?product=acs5&vintage=2022" for i in range(1, 11)]
    steps = [*[{k: v for k, v in x.items() if k != "n"} for x in s[:5]],
             step("read_facts", into="state", fields={"geography": "heading", **labels}),
             step("extract_rows", table=2, into="counties", columns={"county": "County", "url": "link:County"}),
             step("read_facts", into="county_stats", url=counties,
                  fields={"geography": "Geography", "state": "State", "product": "Survey product",
                          "vintage": "Vintage", **labels}),
             {k: v for k, v in s[18].items() if k != "n"},  # the model's derive
             step("finish", order_by=["conditions_met desc", "county"])]
    note = ("read_facts reads the 3-column Label|Estimate|Margin rows by label (no re: workaround, no failed first "
            "read); the county list is read with link:County (no click to learn a county URL); the 10 county pages "
            "in one read_facts (url list, each page's gates judged on it); the counties table is read before the "
            "derive instead of after a refused finish (no read_table + failed extract_rows on the wrong table).")
    return steps, note


def lifesci(clean: dict) -> tuple[list[dict], str]:
    s = [{k: v for k, v in x.items() if k != "n"} for x in clean["steps"]]
    slugs = ["achptygon-gracilis", "zonpelcal-striatus", "rhinpelten-viridis", "sausaudax-sylvaticus",
             "saugonach-sylvaticus", "dryophzon-longicauda", "calptyrhin-similis", "pelophler-major"]
    species = [f"{{origin}}/lifesci/species/{slug}" for slug in slugs]
    searches = ["{origin}/lifesci/search?name=Astcalphis+gracilis&synonyms=on&family=&created_from=&created_to=&size=10",
                *[x["args"]["url"] for x in s if x["tool"] == "goto" and "/lifesci/search?" in x["args"]["url"]]]
    catalogue = dict(s[2]["args"])
    catalogue["columns"] = {**catalogue["columns"], "species_url": "link:Current name"}
    sql = s[-2]["args"]["sql"].replace("FROM types", "FROM species_pages")
    steps = [s[0], s[1], step("extract_rows", **catalogue),
             step("extract_rows", url=species, table=0, into="species_pages",
                  columns={"accepted": "fact:Accepted name", "type_status": "Type status",
                           "type_catalogue_no": "Catalogue no."}),
             step("extract_rows", url=species, table=1, into="synonyms",
                  columns={"accepted": "fact:Accepted name", "synonym": "Synonym", "author": "Author", "year": "Year"}),
             *s[28:32],  # the advanced search form once (fill, tick synonyms, submit): its URL shape
             step("extract_rows", url=searches, table=0, into="back_search",
                  columns={"query": "url:name", "species": "Species", "matched_on": "Matched on"}),
             step("derive", sql=sql), s[-1]]
    note = ("the catalogue's Current name links give the species URLs (link:Current name: no click, no guessed "
            "slugs); each of the two species tables is read from the 8 species pages in one extract_rows (url list) "
            "instead of goto + 2 extract_rows per page; the 8 back-searches in one extract_rows over their URLs "
            "after the form was used once; the types table is named species_pages as the plan's phase names it.")
    return steps, note


def water(clean: dict) -> tuple[list[dict], str]:
    s = [{k: v for k, v in x.items() if k != "n"} for x in clean["steps"]]
    ids = list(dict.fromkeys(x["args"]["url"].split("/locations/")[1].split("?")[0]
                             for x in s if x["tool"] == "read_facts" and x["args"].get("url")))
    groups = ["Inorganics", "Microbiological", "Nutrient", "Physical"]
    urls = [f"{{origin}}/water/locations/{i}?group={g}" for i in ids for g in groups]
    fields = s[9]["args"]["fields"]
    listing = dict(s[5]["args"])
    listing["columns"] = {**listing["columns"], "location_url": "link:Location ID"}
    steps = [*s[:5], step("extract_rows", **listing), step("goto", url=f"{{origin}}/water/locations/{ids[0]}"),
             s[7], s[8],  # the group control once: the URL shape of a group's period
             *[step("read_facts", url=part, into="periods", allow_missing=True, fields=fields) for part in chunks(urls)],
             s[-2], s[-1]]
    note = (f"the location list's Location ID links give the pages (link:Location ID); the group control is used "
            f"once to learn its URL shape; the {len(urls)} location x group pages are read in "
            f"{len(chunks(urls))} read_facts calls (url lists of at most 12) instead of one call each.")
    return steps, note


def regulatory(clean: dict) -> tuple[list[dict], str]:
    s = [{k: v for k, v in x.items() if k != "n"} for x in clean["steps"]]
    actions = dict(s[8]["args"])
    actions["columns"] = {**actions["columns"], "detail_url": "link:Respondent"}
    slugs = ["sterling-015", "bayview-018", "imperial-067", "bayview-069", "crescent-047", "frontier-046"]
    details = [f"{{origin}}/regulatory/enforcement/{slug}" for slug in slugs]
    pdfs = [f"{u}/consent-order.pdf" for u in details]
    pattern = s[15]["args"]["pattern"]
    sql = s[-2]["args"]["sql"].replace(
        "CAST(regexp_extract(_locator, '([0-9]+)', 1) AS INTEGER) AS page", "_page AS page")
    steps = [*s[:8], step("extract_rows", **actions),
             step("read_facts", url=details, into="orders",
                  fields={"docket": "Docket number", "consent_order": "link:Consent Order (PDF)"}),
             step("read_pdf", url=pdfs[0]),
             step("extract_rows", source="pdf", url=pdfs, into="pdf_text", pattern=pattern, columns={"text": "text"}),
             step("derive", sql=sql), s[-1]]
    note = ("the actions list's Respondent links give the detail pages (link:Respondent: no wrong turn to the "
            "document library); one read_facts over the 6 detail pages reads each docket and its Consent Order's "
            "link (link:<text>), the phase table `orders`; read_pdf shows the first order's text (no peek "
            "derives); one extract_rows(source=pdf) over the 6 orders' URLs (as the orders table lists them) reads "
            "the amount lines, each row with its _page (the SQL uses _page instead of parsing _locator).")
    return steps, note


def unchanged(clean: dict) -> tuple[list[dict], str]:
    return [{k: v for k, v in x.items() if k != "n"} for x in clean["steps"]], "no step the new tools save"


REWRITES = {"offline_stats_004": stats, "offline_lifesci_005": lifesci, "offline_water_005-g": water,
            "offline_regulatory_004-g": regulatory, "offline_vulns_003": unchanged, "offline_scholar_002-g": unchanged}


def main(runs: Path) -> None:
    out = HERE / "rewritten"
    out.mkdir(exist_ok=True)
    for task, rewrite in REWRITES.items():
        clean = json.loads((runs / task / "clean_path.json").read_text())
        steps, note = rewrite(clean)
        path = {"task": task, "source": f"{task}/clean_path.json ({len(clean['steps'])} steps)",
                "note": f"Rewritten with the tools of issue 27: {len(clean['steps'])} -> {len(steps)} steps; {note}",
                "plan": clean["plan"], "steps": steps}
        (out / f"{task}.json").write_text(json.dumps(path, indent=1) + "\n")
        print(task, len(clean["steps"]), "->", len(steps))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
