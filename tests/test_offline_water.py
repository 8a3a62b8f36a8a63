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
from tasks.offline.sites import water


@pytest.fixture(scope="module")
def data() -> water.WaterData:
    return water.build(DEFAULT_SEED)


@pytest.fixture(scope="module")
def client(data) -> TestClient:
    return TestClient(Starlette(routes=[Mount("/water", routes=water.routes(data))]))


def station_ids(html: str) -> list[str]:
    return re.findall(r"<tr><td>(\d\d[A-Z]{2}\d{3})</td>", html)


def test_same_seed_same_data_and_answers(data):
    again = water.build(DEFAULT_SEED)
    assert again == data
    assert water.tasks(again) == water.tasks(data)


def test_default_search_lists_nothing_and_status_defaults_to_realtime(client, data):
    assert station_ids(client.get("/water/stations").text) == []
    q = water.choose(data).river_query
    realtime = station_ids(client.get("/water/stations", params={"river": q.river, "type": "flow", "q": ""}).text)
    assert realtime and all(data.station(s).active for s in realtime)


def test_next_links_walk_every_result(client, data):
    q = water.choose(data).river_query
    url, seen = f"/water/stations?river={q.river}&type=flow&status=all", []
    for _ in range(5):
        html = client.get(url).text
        seen += station_ids(html)
        nxt = re.search(r'<a href="([^"]+)" rel="next">Next', html)
        if not nxt:
            break
        url = "/water/stations" + nxt.group(1).replace("&amp;", "&")
    expected = [s.id for s in water.search_stations(data, q)]
    assert seen == expected and len(expected) > water.STATION_PAGE_SIZE
    assert any(not data.station(s).active for s in seen)


def test_availability_grid_window_and_sections(client, data):
    chosen = water.choose(data)
    st, (first, last) = chosen.grid_station, chosen.grid_years
    default = client.get(f"/water/stations/{st.id}/availability").text
    assert f"<td>{first}</td>" not in default
    html = client.get(f"/water/stations/{st.id}/availability", params={"from": first, "to": last}).text
    flow, level = html.index("<h2>Flow</h2>"), html.index("<h2>Level</h2>")
    assert flow < level
    level_rows = re.findall(r"<tr><td>(\d{4})</td>(?:<td>[CP-]</td>){12}<td>(\d+)</td>", html[level:])
    assert sorted(level_rows) == water._level_rows(st, (first, last))


def test_query_results_arrive_late_and_match_csv(client, data):
    q = water.choose(data).sample_query
    page = client.get("/water/query").text
    assert 'fetch("/water/api/results?' in page and "<table" not in page.split("<script>")[0].split("</form>")[1]
    started = time.monotonic()
    payload = client.get("/water/api/results", params=q.params()).json()
    assert time.monotonic() - started >= water.FETCH_DELAY_S
    rows = list(csv.reader(io.StringIO(client.get("/water/api/" + payload["csv"]).text)))
    assert rows[0] == list(water.SAMPLE_COLUMNS) and rows[1:] == payload["rows"]
    assert len(payload["rows"]) > 10  # more than one client-side page


def test_default_query_window_is_last_year(client, data):
    default = client.get("/water/api/results.csv").text.splitlines()[1:]
    assert default and all(line.split(",")[3].startswith("2024") for line in default)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_still_give_tasks_with_effective_traps(seed):
    data = water.build(seed)
    records = water.tasks(data)
    assert len(records) == 6 and all(2 <= r["oracle_output_cardinality"] <= 20 for r in records)
    assert set(water.walkthroughs(data)) == {r["task_id"] for r in records if not r["task_id"].endswith("-g")}


@pytest.mark.slow
async def test_query_table_appears_late_and_pages_client_side(offline_server, chromium_worker, tmp_path, data):
    q = water.choose(data).sample_query
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
        assert [row[0] for row in everything.table.rows] == [r[0] for r in water.query_samples(data, q)]
