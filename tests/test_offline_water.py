"""Water monitoring site: status scope, Next pagination, Flow/Level grids, delayed client-side query, CSV."""

from __future__ import annotations

import csv
import io
import re
import time

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from tasks.offline.app import DEFAULT_SEED
from tasks.offline.sites.water import data as water_data
from tasks.offline.sites.water import oracles as water_oracles
from tasks.offline.sites.water import pages as water_pages
from tasks.offline.sites.water import scripted as water_scripted
from tasks.offline.sites.water import search as water_search


@pytest.fixture(scope="module")
def data() -> water_data.WaterData:
    return water_data.build(DEFAULT_SEED)


@pytest.fixture(scope="module")
def client(data) -> TestClient:
    return TestClient(Starlette(routes=[Mount("/water", routes=water_pages.routes(data))]))


def station_ids(html: str) -> list[str]:
    return re.findall(r"<tr><td>(\d\d[A-Z]{2}\d{3})</td>", html)


def test_same_seed_same_data_and_answers(data):
    again = water_data.build(DEFAULT_SEED)
    assert again == data
    assert water_oracles.tasks(again) == water_oracles.tasks(data)


def test_default_search_lists_nothing_and_status_defaults_to_realtime(client, data):
    assert station_ids(client.get("/water/stations").text) == []
    q = water_oracles.choose(data).river_query
    realtime = station_ids(client.get("/water/stations", params={"river": q.river, "type": "flow", "q": ""}).text)
    assert realtime and all(data.station(s).active for s in realtime)


def test_next_links_walk_every_result(client, data):
    q = water_oracles.choose(data).river_query
    url, seen = f"/water/stations?river={q.river}&type=flow&status=all", []
    for _ in range(5):
        html = client.get(url).text
        seen += station_ids(html)
        nxt = re.search(r'<a href="([^"]+)" rel="next">Next', html)
        if not nxt:
            break
        url = "/water/stations" + nxt.group(1).replace("&amp;", "&")
    expected = [s.id for s in water_search.search_stations(data, q)]
    assert seen == expected and len(expected) > water_data.STATION_PAGE_SIZE
    assert any(not data.station(s).active for s in seen)


def test_availability_grid_window_and_sections(client, data):
    chosen = water_oracles.choose(data)
    st, (first, last) = chosen.grid_station, chosen.grid_years
    default = client.get(f"/water/stations/{st.id}/availability").text
    assert f"<td>{first}</td>" not in default
    html = client.get(f"/water/stations/{st.id}/availability", params={"from": first, "to": last}).text
    flow, level = html.index("<h2>Flow</h2>"), html.index("<h2>Level</h2>")
    assert flow < level
    level_rows = re.findall(r"<tr><td>(\d{4})</td>(?:<td>[CP-]</td>){12}<td>(\d+)</td>", html[level:])
    assert sorted(level_rows) == water_oracles._level_rows(st, (first, last))


def test_query_results_arrive_late_and_match_csv(client, data):
    q = water_oracles.choose(data).sample_query
    page = client.get("/water/query").text
    assert 'fetch("/water/api/results?' in page and "<table" not in page.split("<script>")[0].split("</form>")[1]
    started = time.monotonic()
    payload = client.get("/water/api/results", params=q.params()).json()
    assert time.monotonic() - started >= water_data.FETCH_DELAY_S
    rows = list(csv.reader(io.StringIO(client.get("/water/api/" + payload["csv"]).text)))
    assert rows[0] == list(water_search.SAMPLE_COLUMNS) and rows[1:] == payload["rows"]
    assert len(payload["rows"]) > 10  # more than one client-side page


def test_default_query_window_is_last_year(client, data):
    default = client.get("/water/api/results.csv").text.splitlines()[1:]
    assert default and all(line.split(",")[3].startswith("2024") for line in default)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_still_give_tasks_with_effective_traps(seed):
    data = water_data.build(seed)
    records = water_oracles.tasks(data)
    assert len(records) == 10 and all(2 <= r["oracle_output_cardinality"] <= 20 for r in records)
    assert set(water_scripted.walkthroughs(data)) == {r["task_id"] for r in records if not r["task_id"].endswith("-g")}


@pytest.mark.slow
async def test_query_table_appears_late_and_pages_client_side(offline_server, chromium_worker, tmp_path, data):
    q = water_oracles.choose(data).sample_query
    start = f"{offline_server.origin}/water/query"
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin], start_url=start) as driver:
        for step in [
            {"kind": "select", "target": {"label": "Area"}, "option": q.area},
            {"kind": "select", "target": {"label": "Site type"}, "option": q.site_type},
            {"kind": "select", "target": {"label": "Characteristic group"}, "option": q.group},
            {"kind": "set_range", "start_target": {"label": "Start date"}, "end_target": {"label": "End date"},
             "start": q.start, "end": q.end},
        ]:
            assert (await driver.act(step)).ok, step
        assert (await driver.act({"kind": "click", "target": {"text": "Run query"}})).ok
        assert (await driver.act({"kind": "wait_for", "text": "Download CSV"})).ok
        page1 = await driver.observe()
        assert len(page1.tables[0].rows) == 10 and page1.url == start  # client-side: the URL did not change
        everything = await driver.act({"kind": "read_table", "table": 0, "all_pages": True})
        assert everything.ok and everything.table is not None
        assert [row[0] for row in everything.table.rows] == [r[0] for r in water_search.query_samples(data, q)]


# ---------------------------------------------------------------- derived tasks 004 (river reach) and 005 (basin units)


def _record(data, task_id: str) -> dict:
    return next(r for r in water_oracles.tasks(data) if r["task_id"] == task_id)


def _grid_rows(html: str, kind: str) -> dict[int, list[str]]:
    """year -> 12 codes of one section of an availability page."""
    section = html.split(f"<h2>{kind}</h2>")[1].split("</section>")[0]
    return {int(y): re.findall(r"<td>([CP-])</td>", cells)
            for y, cells in re.findall(r"<tr><td>(\d{4})</td>((?:<td>[CP-]</td>){12})", section)}


def test_reach_list_shows_river_km_and_hides_discontinued_stations_by_default(client, data):
    plan = data.reach
    realtime = client.get("/water/stations", params={"river": plan.river, "q": ""}).text
    everything = client.get("/water/stations", params={"river": plan.river, "status": "all"}).text
    candidates = water_oracles.reach_candidates(data)
    assert any(not s.active for s in candidates)
    assert not {s.id for s in candidates if not s.active} & set(station_ids(realtime))
    assert "<th>River km</th>" in everything and plan.tributary in everything  # the same-name tributary is listed
    kms = [s.river_km for s in candidates]
    assert kms == sorted(kms) and len(candidates) == 5
    assert candidates[0].name == plan.downstream_anchor and candidates[-1].name == plan.upstream_anchor


def test_reach_verdicts_recomputed_from_the_availability_pages(client, data):
    """The oracle of 004 equals the verdicts read off the served Flow/Level tables (May-Sep all C)."""
    y1, y2 = data.reach.years
    rows = []
    for rank, station in enumerate(water_oracles.reach_candidates(data), 1):
        default = client.get(f"/water/stations/{station.id}/availability").text
        assert f"<tr><td>{y2}</td>" not in default  # gate: the target years are outside the default window
        html = client.get(f"/water/stations/{station.id}/availability", params={"from": y1, "to": y2}).text
        flow, level = _grid_rows(html, "Flow"), _grid_rows(html, "Level")
        statuses = []
        for year in (y1, y2):
            if year not in flow:
                statuses.append("LEVEL_ONLY" if year in level else "NO_DATA")
            else:
                statuses.append("PASS" if flow[year][4:9] == ["C"] * 5 else "FLOW_GAP")
            assert level[year][4:9] == ["C"] * 5  # the Level section would pass every year: the trap
        rows.append("|".join([str(rank), station.id, station.name, *statuses,
                              "KEEP" if statuses == ["PASS", "PASS"] else "REJECT"]))
    record = _record(data, "offline_water_004")
    assert record["oracle_answer"].split("\n")[1:] == rows
    assert {"KEEP", "REJECT", "LEVEL_ONLY", "FLOW_GAP"} <= set("|".join(rows).split("|"))


def test_location_pages_show_one_group_at_a_time(client, data):
    unit = data.quality.units[0]
    listing = client.get("/water/locations", params={"huc": unit, "siteType": "Stream"}).text
    ids = re.findall(r'<td><a href="/water/locations/([\w-]+)">', listing)
    assert ids and all(data.location(i).huc == unit for i in ids)
    assert client.get("/water/locations").text.count("/water/locations/WQX") == 0  # nothing listed by default
    for lid in ids:
        starts = {}
        for group in water_data.GROUPS:
            html = client.get(f"/water/locations/{lid}", params={"group": group}).text
            starts[group] = int(re.search(r"<dt>Start year</dt><dd>(\d{4})</dd>", html).group(1))
        default = client.get(f"/water/locations/{lid}").text
        assert f"<option selected>{water_data.ALL_GROUPS}</option>" in default
        assert int(re.search(r"<dt>Start year</dt><dd>(\d{4})</dd>", default).group(1)) == min(starts.values())


def test_quality_oracle_recomputed_from_the_location_pages(client, data):
    first, last = data.quality.window
    rows = []
    for unit in sorted(data.quality.units):
        listing = client.get("/water/locations", params={"huc": unit, "siteType": "Stream"}).text
        best = None
        for lid in sorted(re.findall(r'<td><a href="/water/locations/([\w-]+)">', listing)):
            spans = {}
            for group in water_data.GROUPS:
                html = client.get(f"/water/locations/{lid}", params={"group": group}).text
                spans[group] = tuple(int(re.search(rf"<dt>{label}</dt><dd>(\d{{4}})</dd>", html).group(1))
                                     for label in ("Start year", "End year"))
            if all(s <= first and e >= last for s, e in spans.values()):
                common = max(s for s, _ in spans.values())
                if best is None or common < best[0]:
                    best = (common, lid, min(e for _, e in spans.values()), [spans[g][0] for g in water_data.GROUPS])
        assert best is not None
        rows.append("|".join([unit, best[1], str(best[0]), str(best[2]), *map(str, best[3])]))
    assert _record(data, "offline_water_005")["oracle_answer"] == "\n".join(rows)


def test_quality_traps_are_real(data):
    """Per unit: a spring with an earlier common start, and a stream whose earliest overall start loses."""
    for unit in data.quality.units:
        winner = next(r for r in water_oracles.quality_rows(data) if r[0] == unit)
        designed = [loc for loc in data.locations if loc.huc == unit]
        assert {loc.site_type for loc in designed} == {"Stream", "Spring"}
        overall = {loc.id: water_data.period_of_record(data, loc.id)[0] for loc in designed if loc.site_type == "Stream"}
        assert min(overall, key=overall.get) != winner[1]
    old = [loc for loc in data.locations if int(loc.id.rsplit("-", 1)[1]) < 5000]
    assert old and not {loc.huc for loc in old} & set(data.quality.units)  # designed units hold designed sites only


def test_old_tasks_do_not_see_the_new_data(data):
    """The designed stations and locations come from their own generators: tasks 001-003 stay on their data."""
    first = water_oracles.choose(data)
    assert water_data.REACH_RIVER not in first.river_query.river and first.sample_query.site_type == "Lake"
    assert all(loc.site_type != "Lake" for loc in data.locations if loc.huc in data.quality.units)
