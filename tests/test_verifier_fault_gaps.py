"""The faults the full agent used to miss (issue 18, the last fault-injected run's "Why the misses"), through the
real graph and Chromium on the offline pages: each is now flagged before submit and repaired, and the clean
replay of the same record raises no alarm. FAULT-INJECTED REPLAYS: the faulty policy stands in for a model that
makes the mistake and follows the graph's feedback; nothing here measures an LLM.

The pure rules they rest on (which tables a derived answer stands on, which list the detail check walks) are
tested first, without a browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.fault_plan import FaultSite
from agent.measuring.faulty import FAULTS_FILE, FaultyPolicy
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from graph.checks.details import Opened, detail_list
from graph.checks.finish_checks import evidence_tables, verify
from graph.evidence.evidence_tables import append_rows
from graph.evidence.workspace_tools import derive
from graph.plan.targets import Value
from graph.settings import Budgets
from graph.state import EvidenceRow, Gate, Listing, Phase, Plan, Provenance, ReadRecord
from graph.tools.agent_tools import Derive
from tasks.loaders import load_tasks
from tests.fixtures.opened import shown

SEED = 20260521  # the seed of the suite's fault run (configs/ablation.yaml)


# ---------------------------------------------------------------- the rules, without a browser


def _table(tables: dict, name: str, values: list[dict[str, str]], *, pages: int | None, covered: list[int],
           url: str = "http://s/list?q=a", step: int = 3) -> None:
    rows = [EvidenceRow(values=v, provenance=Provenance(
        url=url.format(**v), state={"q": {"label": "Query", "value": "a"}}, drift=[], locator="t",
        result_set="/list?q=a", page=1, pages=pages, step=step)) for v in values]
    read = ReadRecord(step=step, result_set="/list?q=a", pages_covered=covered, pages=pages, site_total=None,
                      rows=len(values), filtered=False, complete=False)
    tables[name] = append_rows(tables.get(name), name, list(values[0]), rows, read, step)


def _candidates_then_records(candidate_pages: list[int]) -> dict:
    """A list read into `candidates`, each record's page read into `records`; the answer's SQL reads only
    `records` (the records were opened by their addresses)."""
    tables: dict = {}
    _table(tables, "candidates", [{"id": "a"}, {"id": "b"}], pages=2, covered=candidate_pages)
    _table(tables, "records", [{"id": "a", "kind": "x"}, {"id": "b", "kind": "y"}], pages=None, covered=[1],
           url="http://s/rec/{id}", step=5)
    tables.update(derive(Derive(sql="SELECT id, kind FROM records ORDER BY id"), tables=tables,
                         schema=("id", "kind"), step=7).tables)
    return tables


PHASED = Plan(phases=[Phase(read="the list", into="candidates", gates=[Gate(kind="filter", name="Query", target=Value(value="a"))]),
                      Phase(read="each record", into="records")])


def test_a_phase_table_the_sql_never_reads_is_checked_too():
    tables = _candidates_then_records([1])
    assert evidence_tables(PHASED, tables) == ["records", "candidates"]
    report = verify(plan=PHASED, tables=tables, columns=("id", "kind"), step=8)
    assert [f["check"] for f in report["failures"]] == ["pages"]
    assert report["repair_goal"].startswith("[pages] table candidates:") and "page(s) [2]" in report["repair_goal"]
    assert verify(plan=PHASED, tables=_candidates_then_records([1, 2]), columns=("id", "kind"), step=8)["ok"]
    # a table no phase names and the SQL does not read is no evidence: not checked
    unphased = Plan(phases=[Phase(read="each record", into="records")])
    assert evidence_tables(unphased, tables) == ["records"]
    assert verify(plan=unphased, tables=tables, columns=("id", "kind"), step=8)["ok"]


def _links(step: int, url: str, links: list[str], kind: str = "links") -> Listing:
    return Listing(step=step, url=url, result_set=url.removeprefix("http://s"), row_links=links, kind=kind)


def test_a_table_of_item_links_is_the_detail_list_once_the_agent_goes_through_it():
    plan = Plan(detail_pages=True)
    genus = _links(2, "http://s/genus/g", ["http://s/sp/1", "http://s/sp/2", "http://s/sp/3"])
    related = _links(4, "http://s/sp/1", ["http://s/other/9", "http://s/other/8"])  # a table on an item's page
    visited = ["http://s/genus/g", "http://s/sp/1", "http://s/sp/3"]
    report = verify(plan=plan, columns=("id",), tables=_answer(), step=9,
                    listings=[genus, related], opened=shown(visited, [genus, related]))
    assert [f["check"] for f in report["failures"]] == ["details"]
    assert "1 of 3 listed result(s) were not opened: http://s/sp/2;" in report["repair_goal"]
    assert verify(plan=plan, columns=("id",), tables=_answer(), step=9, listings=[genus, related],
                  opened=shown([*visited, "http://s/sp/2"], [genus, related]))["ok"]
    # one item opened from such a table is a navigation, not a list gone through
    assert verify(plan=plan, columns=("id",), tables=_answer(), step=9, listings=[genus],
                  opened=shown(["http://s/genus/g", "http://s/sp/1"], [genus]))["ok"]


def test_a_result_list_stays_the_detail_list_unless_a_table_of_links_had_more_items_opened():
    results = _links(2, "http://s/r?q=a", ["http://s/d/1", "http://s/d/2", "http://s/d/3"], kind="results")
    versions = _links(5, "http://s/d/1", ["http://s/v/1", "http://s/v/2", "http://s/v/3"])
    opened = ["http://s/d/1", "http://s/d/2", "http://s/v/1", "http://s/v/2"]
    assert detail_list([results, versions], Opened(opened)) == results["row_links"]  # 2 of each: the result list
    assert detail_list([results, versions], Opened([*opened, "http://s/v/3"])) == versions["row_links"]
    assert detail_list([results], Opened([])) == results["row_links"]  # none opened: every item is missing


def _row() -> EvidenceRow:
    return EvidenceRow(values={"id": "1"}, provenance=Provenance(url="http://s/sp/1", state={}, drift=[], locator="t",
                                                                 result_set="/sp/1", page=None, pages=None, step=3))


def _answer() -> dict:
    table = append_rows(None, "answer", ["id"], [_row()], _read(), 3)
    return {"answer": table}


def _read() -> ReadRecord:
    return ReadRecord(step=3, result_set="/sp/1", pages_covered=[1], pages=None, site_total=None, rows=1,
                      filtered=False, complete=True)


# ---------------------------------------------------------------- the records, through the graph


def _steps(out_dir: Path) -> list[dict]:
    return [e for e in map(json.loads, (out_dir / "steps.jsonl").read_text().splitlines())
            if e.get("node") == "actor" and "tool" in e]


async def _run(task_id: str, chat, out_dir: Path, offline_server, chromium_worker):
    task = load_tasks("offline", origin=offline_server.origin, task_ids=[task_id])[0]
    kind = "faulty" if isinstance(chat, FaultyPolicy) else "scripted"
    model = ModelConfig(name=kind, provider=kind)
    async with chromium_worker.task_browser(str(out_dir), [offline_server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=model, variant=AgentVariant(name="full"),
                                   protocol=ProtocolConfig(budgets=Budgets(max_steps=150)), out_dir=out_dir,
                                   policy=chat)
    assert outcome.error is None, outcome.error
    return task, outcome


def _faulty(task_id: str, site: FaultSite, origin: str) -> FaultyPolicy:
    return FaultyPolicy(steps=load_walkthrough(task_id, origin=origin), task_id=task_id, seed=SEED, site=site)


def _exact(task, outcome) -> bool:
    return score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match


async def _clean(task_id: str, tmp_path: Path, offline_server, chromium_worker):
    chat = ScriptedPolicy(steps=load_walkthrough(task_id, origin=offline_server.origin))
    task, outcome = await _run(task_id, chat, tmp_path / "clean", offline_server, chromium_worker)
    assert _exact(task, outcome) and not outcome.drift_flags  # no false alarm
    assert [r["ok"] for r in outcome.verifier_reports] == [True], outcome.verifier_reports
    return outcome


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize(("task_id", "read_step", "table"), [
    ("offline_scholar_004", 7, "candidates"),  # the list whose records are opened one by one
    ("offline_vulns_005", 12, "records"),  # the records whose pages give the affected milestones
])
async def test_first_page_only_of_a_phase_table_the_answer_sql_never_reads(task_id, read_step, table, offline_server,
                                                                             chromium_worker, tmp_path):
    chat = _faulty(task_id, FaultSite("first_page_only", (read_step,)), offline_server.origin)
    task, outcome = await _run(task_id, chat, tmp_path / "faulty", offline_server, chromium_worker)
    record = json.loads((tmp_path / "faulty" / FAULTS_FILE).read_text())
    assert record["injected"] and record["detail"] == "read page 1 of 2 only", record
    first = outcome.verifier_reports[0]
    assert not first["ok"] and first["repair_goal"].startswith(f"[pages] table {table}:"), first
    assert "page(s) [2] were not read" in first["repair_goal"]
    reread = [c for c in _steps(tmp_path / "faulty")
              if (c.get("note") or {}).get("kind") == "repair" and c["tool"] == "extract_rows"]
    assert [c["args"]["into"] for c in reread] == [table]
    assert outcome.verifier_reports[-1]["ok"] and _exact(task, outcome)
    await _clean(task_id, tmp_path, offline_server, chromium_worker)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_a_species_page_skipped_from_a_genus_table_of_links(offline_server, chromium_worker, tmp_path):
    """The genus page lists its species in a table of links with no result count: never read with read_table,
    it is still the list the plan's "each listed item's own page" is checked on."""
    task_id = "offline_lifesci_003"
    site = FaultSite("detail_skipped", (38,), skip_to={38: 42})  # the visit to one species (steps 38-41)
    chat = _faulty(task_id, site, offline_server.origin)
    task, outcome = await _run(task_id, chat, tmp_path / "faulty", offline_server, chromium_worker)
    record = json.loads((tmp_path / "faulty" / FAULTS_FILE).read_text())
    assert record["injected"] and "robustus" in record["detail"], record
    first = outcome.verifier_reports[0]
    assert not first["ok"] and [f["check"] for f in first["failures"]] == ["details"], first
    assert "1 of 12 listed result(s) were not opened" in first["repair_goal"]
    assert "/lifesci/species/achmeller-robustus" in first["repair_goal"]
    assert outcome.verifier_reports[-1]["ok"] and _exact(task, outcome)
    clean = await _clean(task_id, tmp_path, offline_server, chromium_worker)
    assert clean.answer == outcome.answer
    listings = json.loads((tmp_path / "clean" / "retrieval_state.json").read_text())["listings"]
    genus = [item for item in listings if item.get("kind") == "links" and len(item["row_links"]) == 12]
    assert len(genus) == 1 and genus[0]["url"].endswith("/lifesci/node/g-achmeller"), listings


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_a_wrong_from_year_is_refused_not_taken_for_a_clamp(offline_server, chromium_worker, tmp_path):
    """'From year' set to another year than the plan's: the page then states the range in force ("Showing
    2015–2015"), which is no evidence of a site limit; the flag holds, the verifier refuses, the repair is exact."""
    task_id = "offline_water_002"
    chat = _faulty(task_id, FaultSite("wrong_option", (6,)), offline_server.origin)
    task, outcome = await _run(task_id, chat, tmp_path / "faulty", offline_server, chromium_worker)
    record = json.loads((tmp_path / "faulty" / FAULTS_FILE).read_text())
    assert record["injected"] and "'From year'" in record["detail"], record
    assert any(f["rule"] == "gate_mismatch" and f["label"] == "From year" for f in outcome.drift_flags)
    first = outcome.verifier_reports[0]
    assert not first["ok"] and {f["check"] for f in first["failures"]} == {"drift", "gate"}, first
    assert not any("clamped" in note for r in outcome.verifier_reports for note in r.get("notes") or [])
    assert outcome.verifier_reports[-1]["ok"] and _exact(task, outcome)
    await _clean(task_id, tmp_path, offline_server, chromium_worker)


def test_a_phase_of_the_plan_never_read_is_named_a_detail_phase_refused():
    """Refuse only on evidence (issue 37 stage 5): a phase never read that reads each listed result's page is
    listed results never opened (refused, naming it); one that reads a list is a note naming it."""
    tables = _candidates_then_records([1, 2])
    three = Plan(phases=[*PHASED.phases, Phase(read="each record's history", into="history", detail_pages=True)])
    report = verify(plan=three, tables=tables, columns=("id", "kind"), step=8)
    assert [f["check"] for f in report["failures"]] == ["schema"]
    assert "each record's history\" reads into 'history', but nothing was read into 'history'" in \
        report["failures"][0]["message"]
    listed = Plan(phases=[*PHASED.phases, Phase(read="the history list", into="history")])
    report = verify(plan=listed, tables=tables, columns=("id", "kind"), step=8)
    assert report["ok"] and any("'the history list' reads into 'history', which was never read" in n
                                for n in report["notes"])
    assert verify(plan=PHASED, tables=tables, columns=("id", "kind"), step=8)["ok"]
