"""Fault-injected replays through the real graph and Chromium: each fault class is really made (the trace shows
it), and `sgr ablate` without a key writes the fault table, labelled as FAULT-INJECTED REPLAYS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.fault_plan import FaultSite
from agent.measuring.faulty import FAULTS_FILE, FaultyPolicy
from agent.measuring.scripted import load_walkthrough
from agent.solve import solve_task
from eval.score import score_answer
from graph.settings import Budgets
from tasks.loaders import load_tasks
from tests.test_runner_bench import sgr

pytestmark = [pytest.mark.slow]

FAULTY = ModelConfig(name="faulty", provider="faulty")
CASES = {  # a task whose walkthrough offers a place for the class
    "kept_default": "offline_vulns_001", "wrong_option": "offline_stats_002", "navigation_reset": "offline_stats_001",
    "first_page_only": "offline_vulns_003", "detail_skipped": "offline_scholar_003",
    "wrong_window": "offline_regulatory_002", "stale_rows": "offline_regulatory_001",
}


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("fault", sorted(CASES))
async def test_each_fault_class_is_really_injected(fault, offline_server, chromium_worker, tmp_path):
    task_id = CASES[fault]
    task = load_tasks("offline", origin=offline_server.origin, task_ids=[task_id])[0]
    chat = FaultyPolicy.for_task(task_id, origin=offline_server.origin, seed=3, only=(fault,))
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=FAULTY, variant=AgentVariant(name="full"),
                                   protocol=ProtocolConfig(budgets=Budgets(max_steps=150)), out_dir=tmp_path,
                                   policy=chat)
    record = json.loads((tmp_path / FAULTS_FILE).read_text())
    assert record["fault"] == fault and record["injected"], record
    calls = [e for e in map(json.loads, (tmp_path / "steps.jsonl").read_text().splitlines())
             if e.get("node") == "actor" and "tool" in e]
    notes = [c.get("note") or {} for c in calls]
    skipped = record["walkthrough_step"]
    if fault in ("kept_default", "detail_skipped"):  # the walkthrough's step was never issued as itself
        assert {"kind": "walkthrough", "step": skipped} not in notes
        assert record["call"] < len(calls) and notes[record["call"]]["kind"] in ("walkthrough", "repair")
    else:  # the changed or added calls carry their mark
        marked = [c for c, note in zip(calls, notes, strict=True) if note == {"kind": "fault", "step": skipped}]
        assert marked and calls.index(marked[0]) == record["call"]
    if fault == "wrong_option":
        assert marked[0]["args"]["option"] != chat.steps[skipped]["args"]["option"]
    if fault == "first_page_only":
        assert marked[0]["args"]["all_pages"] is False
    assert outcome.error is None, outcome.error


def test_sgr_ablate_without_a_key_writes_the_fault_table(tmp_path: Path) -> None:
    config = tmp_path / "ablation.yaml"
    config.write_text(
        "models: [{name: needs-a-key, provider: openai, model: gpt-4.1-mini, api_key_env: SGR_TEST_UNSET_KEY}]\n"
        "datasets: [{suite: offline, task_ids: [offline_regulatory_001, offline_vulns_003]}]\n"
        "faults: {seed: 20260521, clean_variants: [full]}\n"
        "protocol: {budgets: {max_steps: 150}}\n"
        "agent: {variants: [{name: full}, {name: no-verifier, ablate: [verifier]}], trace: false}\n"
        f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: 2}}\n")
    done = sgr("ablate", str(config), env={"SGR_TEST_UNSET_KEY": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "run"
    table = (run / "faults.md").read_text()
    assert table.startswith("# Fault table (FAULT-INJECTED REPLAYS)") and "NOT MODEL RESULTS" in table
    assert "FAULT-INJECTED REPLAYS" in done.stderr  # the console says it before the run, too
    # the console's result is one table (issue 40: it was 117 lines under four banners), each replay row labelled
    out = done.stdout.strip().splitlines()
    assert all(line.startswith("|") for line in out[:-1]) and out[-1].startswith("full tables in ")
    assert len(out) == 2 + 3 + 1  # 3 model x variant rows
    assert all(("(fault-injected replay)" if "faulty-" in line else "(scripted replay)") in line for line in out[2:-1])
    faulty_full = next(line for line in out if "faulty-walkthrough" in line and "| full |" in line)
    assert faulty_full.split("|")[9].strip().endswith("/2")  # faults flagged of those injected
    html = (run / "report.html").read_text()
    assert 'id="faults"' in html and "Per fault class" in html  # the fault table in report.html
    data = json.loads((run / "faults.json").read_text())
    assert data["label"] == "FAULT-INJECTED REPLAYS"
    # 2 task records x 2 variants of faulty replays, and the clean replays of the full agent only
    assert len(data["cells"]) == 4 and {c["variant"] for c in data["cells"]} == {"full", "no-verifier"}
    assert [(c["variant"], c["n"]) for c in data["clean"]] == [("full", 2)]
    assert all(c["injected"] for c in data["cells"])
    assert "(fault-injected replay)" in (run / "ablation.md").read_text()
    summary = json.loads((run / "summary.json").read_text())
    assert any("FAULT-INJECTED" in n for n in summary["notices"])


async def _run_with_fault(task_id: str, site: FaultSite, server, worker, out: Path):
    """One faulty replay of `task_id` with its mistake at `site`, through the graph (150 steps: repairs re-read)."""
    task = load_tasks("offline", origin=server.origin, task_ids=[task_id])[0]
    chat = FaultyPolicy(steps=load_walkthrough(task_id, origin=server.origin), task_id=task_id, seed=1, site=site)
    async with worker.task_browser(str(out), [server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=FAULTY, variant=AgentVariant(name="full"),
                                   protocol=ProtocolConfig(budgets=Budgets(max_steps=150)), out_dir=out,
                                   policy=chat)
    return task, outcome, chat


def _repair_reads(out: Path) -> list[str]:
    """The tables the policy's repair calls read into, in order."""
    calls = [e for e in map(json.loads, (out / "steps.jsonl").read_text().splitlines())
             if e.get("node") == "actor" and "tool" in e]
    return [c["args"]["into"] for c in calls if (c.get("note") or {}).get("kind") == "repair"
            and c["tool"] == "extract_rows"]


@pytest.mark.asyncio(loop_scope="session")
async def test_repair_rereads_every_page_of_a_table_read_over_many_pages(offline_server, chromium_worker, tmp_path):
    """Issue 18, item 5, through the graph: the first of eleven profile pages is read under a wrong product; the
    verifier sends the table back, and the policy re-reads all eleven pages (it used to re-read the last one)."""
    task, outcome, chat = await _run_with_fault(  # the product select before the first profile
        "offline_stats_004", FaultSite("wrong_option", (2,)), offline_server, chromium_worker, tmp_path)
    record = json.loads((tmp_path / FAULTS_FILE).read_text())
    assert record["injected"] and "Survey product" in record["detail"], record
    reports = outcome.verifier_reports
    assert not reports[0]["ok"] and "table edu" in reports[0]["repair_goal"] and reports[-1]["ok"]
    reread = _repair_reads(tmp_path)
    read = [s["args"]["into"] for s in chat.steps if s["tool"] == "extract_rows"]
    assert reread.count("edu") == read.count("edu") == 11  # every page of the table, not the last one only
    assert sorted(reread) == sorted(read)  # the tables read on those pages too (sent back with it), in one pass
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match


@pytest.mark.asyncio(loop_scope="session")
async def test_a_reset_before_a_phased_read_is_repaired_by_rebuilding_every_table(offline_server, chromium_worker,
                                                                                  tmp_path):
    """Issue 18: after the search is reset, the phase reads find nothing, so there is no derived answer and the
    verifier says `[schema] no extract_rows`; the repair replays what built both tables, and the run ends exact."""
    task, outcome, _ = await _run_with_fault(  # the Search click before the result list
        "offline_scholar_005-g", FaultSite("navigation_reset", (4,)), offline_server, chromium_worker, tmp_path)
    assert json.loads((tmp_path / FAULTS_FILE).read_text())["injected"]
    reports = outcome.verifier_reports
    assert not reports[0]["ok"] and "[schema] no extract_rows" in reports[0]["repair_goal"] and reports[-1]["ok"]
    assert _repair_reads(tmp_path) == ["edition_2022", "edition_2023"]
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
