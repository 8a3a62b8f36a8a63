"""A derived answer end to end in real Chromium on the offline water site: a list read into one evidence table,
each station's page read with read_facts, each availability page's Flow section extracted, then one SQL
query (join, window rank, CASE verdict, fraction string, helper functions) writes the answer.

The expected answer is computed here in Python from the site's own data model, independently of the SQL.
Replayed through the walkthrough fixture (the suite's oracle check) and run through the whole graph with
the scripted model (planner, workspace node, verifier, composer, lineage in retrieval_state.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from tasks.loaders import load_tasks
from tasks.models import Task
from tasks.offline.app import DEFAULT_SEED, site_data
from tasks.offline.sites.water.search import StationQuery, grid_window, search_stations
from tests.fixtures.walkthroughs import replay, validate_steps

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

RIVER = "Alder River"
COLUMNS = ["rank", "station_id", "flow_since", "complete_share", "verdict"]
DERIVE_SQL = r"""
WITH flow_sum AS (
  SELECT station_id, sum(num(complete)) AS c, count(*) AS n FROM flow GROUP BY station_id),
rec AS (
  SELECT regexp_extract(heading, '\(([0-9A-Z]+)\)', 1) AS station_id, year_of(flow_record) AS first_year
  FROM records)
SELECT row_number() OVER (ORDER BY rec.first_year, s.station_id) AS rank, s.station_id,
       rec.first_year AS flow_since,
       CAST(f.c AS INTEGER) || '/' || (f.n * 12) AS complete_share,
       CASE WHEN s.status = 'Historical' THEN 'HISTORICAL' WHEN f.c >= 0.8 * f.n * 12 THEN 'KEEP' ELSE 'GAP' END
         AS verdict
FROM stations s JOIN rec USING (station_id) JOIN flow_sum f USING (station_id)
ORDER BY rank
"""


def _stations():
    data = site_data("water", DEFAULT_SEED)
    return search_stations(data, StationQuery(river=RIVER, data_type="flow", status="all"))


def expected_answer() -> str:
    rows = []
    for s in _stations():
        first, last = grid_window(s, {})
        years = [y for y in range(first, last + 1) if y in s.grid["Flow"]]
        complete = sum(code == "C" for y in years for code in s.grid["Flow"][y])
        verdict = "HISTORICAL" if not s.active else "KEEP" if complete >= 0.8 * len(years) * 12 else "GAP"
        rows.append((s.records["Flow"][0], s.id, f"{complete}/{len(years) * 12}", verdict))
    rows.sort()
    return "\n".join(f"{i}|{sid}|{since}|{share}|{verdict}"
                    for i, (since, sid, share, verdict) in enumerate(rows, start=1))


def derived_steps(origin: str) -> list[dict]:
    steps: list[dict] = [
        {"tool": "goto", "args": {"url": f"{origin}/water/stations"}},
        {"tool": "fill", "args": {"target": {"label": "River"}, "value": RIVER}},
        {"tool": "select", "args": {"target": {"label": "Data type"}, "option": "Flow"}},
        {"tool": "select", "args": {"target": {"label": "Station status"}, "option": "All stations"}},
        {"tool": "click", "args": {"target": {"text": "Search"}}},
        {"tool": "read_table", "args": {"table": 0, "all_pages": True}},
        {"tool": "extract_rows", "args": {"into": "stations", "columns": {"station_id": "Station",
                                                                           "status": "Status"}}},
    ]
    for s in _stations():
        steps += [
            {"tool": "read_facts", "args": {"url": f"{origin}/water/stations/{s.id}", "into": "records",
                                            "fields": {"heading": "heading", "flow_record": "Flow record",
                                                       "region": "Region"}}},
            {"tool": "goto", "args": {"url": f"{origin}/water/stations/{s.id}/availability"}},
            {"tool": "extract_rows", "args": {"into": "flow", "section": "Flow", "columns": {
                "station_id": r"re:Data availability: .*\(([0-9A-Z]+)\)", "year": "Year",
                "complete": "Complete months"}}},
        ]
    steps += [{"tool": "derive", "args": {"sql": DERIVE_SQL}}, {"tool": "finish", "args": {}}]
    return steps


def derived_task(origin: str) -> Task:
    path = Path(__file__).resolve().parent.parent / "tasks" / "offline" / "data" / "goal.jsonl"
    base = next(json.loads(line) for line in path.read_text().splitlines()
                if json.loads(line)["task_id"] == "offline_water_001-g")
    rubric = json.loads(base["rubric"]) if isinstance(base["rubric"], str) else dict(base["rubric"])
    rubric["normalization"] = {**rubric["normalization"], "schema": COLUMNS, "dedup_key": "(station_id)",
                               "sorting_or_selection": "rank ascending"}
    record = {**base, "task_id": "offline_water_901-g", "rubric": rubric,
              "instruction": f"Rank the flow stations on the {RIVER} (any status) by the first year of their flow "
                             "record; give each one's complete-month share over its default availability window "
                             "and a verdict (HISTORICAL if discontinued, KEEP if at least 80% complete, else GAP).",
              "output_format": f"Output records, one per line, as `{'|'.join(COLUMNS)}` (fields separated by `|`), "
                               "no header row; order: rank ascending.",
              "oracle_answer": expected_answer(), "oracle_output_cardinality": len(_stations()),
              "start_url": f"{origin}/water/stations"}
    return Task.model_validate(record)


@pytest.mark.asyncio(loop_scope="session")
async def test_the_test_walkthrough_is_valid_and_not_trivial():
    steps = derived_steps("http://x")
    validate_steps(steps)
    assert len(_stations()) >= 3
    verdicts = {line.split("|")[-1] for line in expected_answer().splitlines()}
    assert len(verdicts) >= 2, verdicts  # the CASE really decides something


async def test_replay_computes_the_derived_answer(offline_server, chromium_worker, tmp_path):
    task = derived_task(offline_server.origin)
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        answer = await replay(driver, derived_steps(offline_server.origin), task, offline_server.origin)
    assert answer == expected_answer()


async def test_graph_run_answers_with_derive_and_records_lineage(offline_server, chromium_worker, tmp_path):
    task = derived_task(offline_server.origin)
    chat = ScriptedPolicy(steps=derived_steps(offline_server.origin))
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                   variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=tmp_path,
                                   policy=chat)
    assert outcome.error is None and outcome.stop_reason == "finished", outcome.error
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    assert "workspace" in outcome.nodes_run and outcome.verifier_reports[-1]["ok"]
    saved = json.loads((tmp_path / "retrieval_state.json").read_text())
    answer = saved["tables"]["answer"]
    assert answer["derived"] and answer["sql"].strip().startswith("WITH")
    assert sorted(answer["inputs"]) == ["flow", "records", "stations"]
    records = saved["tables"]["records"]["rows"]
    assert len(records) == len(_stations())
    assert all(r["provenance"]["url"].startswith(f"{offline_server.origin}/water/stations/") for r in records)
    # each station's page recorded as opened from its row of the list (its availability sub-page is not)
    row_links = {item["url"]: item["row_links"] for item in saved["listings"]}
    assert {o["link"] for o in saved["opened"]} == {f"{offline_server.origin}/water/stations/{s.id}"
                                                   for s in _stations()}
    assert all(row_links[o["listing"]][o["row"]] == o["link"] and o["url"] == o["link"] for o in saved["opened"])
    lin = saved["lineage"]
    assert lin["sql"] == answer["sql"] and {i["table"] for i in lin["inputs"]} == {"flow", "records", "stations"}
    listed = next(i for i in lin["inputs"] if i["table"] == "stations")
    assert listed["pages_read"][0]["complete"] and listed["drifted_rows"] == 0
    stations = saved["tables"]["stations"]["rows"]
    assert all(r["provenance"]["state"]["status"]["value"].startswith("All stations") for r in stations), (
        stations[0]["provenance"])
    assert all(r["provenance"]["state"]["status"]["label"] == "Station status" for r in stations)


def _drifted_derived_steps(origin: str) -> list[dict]:
    """The regulatory task read into a table after a detour that resets the filters ("Back to results"), then
    derived; a careless policy reads through the drift flag."""
    steps = load_walkthrough("offline_regulatory_002", origin=origin)
    apply_at = next(i for i, s in enumerate(steps) if s["args"].get("target", {}).get("text") == "Apply filters")
    extract_at = next(i for i, s in enumerate(steps) if s["tool"] == "extract_rows")
    first_id = offline_task("offline_regulatory_002", origin).oracle_answer.split(",")[1].split("|")[0]
    detour = [{"tool": "click", "args": {"target": {"text": first_id}}},
              {"tool": "click", "args": {"target": {"text": "Back to results"}}}]
    extract = {"tool": "extract_rows", "args": {**steps[extract_at]["args"], "into": "complaints"}}
    derive = {"tool": "derive", "args": {"sql": "SELECT complaint_id, iso_date(date_received) AS date_received, "
                                                "product, issue FROM complaints ORDER BY complaint_id"}}
    return [*steps[: apply_at + 1], *detour, *steps[apply_at + 1: extract_at], extract, derive,
            {"tool": "finish", "args": {}}]


def offline_task(task_id: str, origin: str) -> Task:
    return load_tasks("offline", origin=origin, task_ids=[task_id])[0]


async def _solve(task: Task, chat, out: Path, server, worker, variant=None):
    async with worker.task_browser(str(out), [server.origin]) as browser:
        return await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                variant=variant or AgentVariant(name="full"), protocol=ProtocolConfig(),
                                out_dir=out, policy=chat)


async def test_a_derived_answer_read_in_a_drifted_state_is_caught_and_repaired(offline_server, chromium_worker,
                                                                               tmp_path):
    task = offline_task("offline_regulatory_002", offline_server.origin)
    chat = ScriptedPolicy(steps=_drifted_derived_steps(offline_server.origin), ignore_drift=True)
    outcome = await _solve(task, chat, tmp_path, offline_server, chromium_worker)
    first, last = outcome.verifier_reports[0], outcome.verifier_reports[-1]
    assert not first["ok"] and first["failures"][0]["check"] == "drift", first
    assert "table complaints" in first["failures"][0]["message"]
    assert last["ok"] and len(outcome.verifier_reports) == 2
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    events = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    tools = [e["tool"] for e in events if e.get("node") == "actor" and "tool" in e]
    assert tools.count("derive") == 2 and "discard_rows" in tools
    saved = json.loads((tmp_path / "retrieval_state.json").read_text())
    rows = saved["tables"]["complaints"]["rows"]
    assert rows and not any(r["provenance"]["drift"] for r in rows)  # only rows read in the restored state remain


@pytest.mark.parametrize("ablate", [["verifier"], ["provenance"]])
async def test_derived_answers_survive_ablations(ablate, offline_server, chromium_worker, tmp_path):
    task = derived_task(offline_server.origin)
    chat = ScriptedPolicy(steps=derived_steps(offline_server.origin))
    outcome = await _solve(task, chat, tmp_path, offline_server, chromium_worker,
                           AgentVariant(name="no-" + ablate[0], ablate=ablate))
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    rows = json.loads((tmp_path / "retrieval_state.json").read_text())["tables"]["stations"]["rows"]
    assert all((r["provenance"]["state"] is None) == ("provenance" in ablate) for r in rows)


async def test_a_skipped_detail_page_of_a_phase_is_read_on_the_verifiers_request(offline_server, chromium_worker,
                                                                                 tmp_path):
    task = derived_task(offline_server.origin)
    steps = derived_steps(offline_server.origin)
    facts = [i for i, s in enumerate(steps) if s["tool"] == "read_facts"]
    for i in facts:
        steps[i]["phase_details"] = True  # the plan: each listed station's page is read into `records`
    skipped = steps[facts[-1]]["args"]["url"]
    del steps[facts[-1]]
    outcome = await _solve(task, ScriptedPolicy(steps=steps), tmp_path, offline_server, chromium_worker)
    first = outcome.verifier_reports[0]
    assert [f["check"] for f in first["failures"]] == ["details"] and skipped in first["repair_goal"]
    assert "table records" in first["repair_goal"] and outcome.verifier_reports[-1]["ok"]
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
