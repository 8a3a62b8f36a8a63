"""Blind plans grounded on the site, and flags that are true when shown, through the whole graph (real Chromium on
the offline sites, the scripted walkthrough policy with a plan written as a real planner writes it: from the task's
words, before seeing the site).

- a blind plan's targets are grounded leniently (`ticked` for a box holding `on`, `cs.CL` for the option
  `cs.CL (Computation and Language)`), a target that names no value is unresolved (a note, never a flag), and the
  turn shows each gate's control, the value it needs and whether it is held;
- flags and the repair goal are judged again right after `revise_plan` and `discard_rows`;
- `read_facts(url=...)` is judged on the page it opened, not on the page before;
- each read is judged against its own phase's window, not the other phase's.
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

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]
PLAN_FLAGS = ("gate_mismatch", "window_narrower")


async def _solve(task_id: str, steps: list[dict], plan: dict, out: Path, server, worker):
    task = load_tasks("offline", origin=server.origin, task_ids=[task_id])[0]
    model = ScriptedPolicy(steps=steps, plan_args=plan)  # the planner is answered with the blind plan
    async with worker.task_browser(str(out), [server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                   variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=out,
                                   policy=model)
    return task, outcome, model


def _turns(model: ScriptedPolicy) -> list[str]:
    return [t for t in model.transcript if t.startswith(("TODAY:", "TASK:"))]


def _plan_flags(outcome) -> list[dict]:
    return [f for f in outcome.drift_flags if f["rule"] in PLAN_FLAGS]


def _saved(out: Path) -> dict:
    return json.loads((out / "retrieval_state.json").read_text())


SCHOLAR_BLIND = {"source": "preprint search", "gates": [
    {"kind": "search", "name": "Search terms", "target": {"value": "calibration"}},
    {"kind": "filter", "name": "Category", "target": {"value": "cs.CL"}},
    {"kind": "scope", "name": "Include cross-listed papers", "target": {"checked": True}},
    {"kind": "scope", "name": "Search field", "target": {"value": "abstract or title"}},
    {"kind": "window", "name": "date", "target": {"from": "2021-01-01", "to": "2021-12-31"}}]}


async def test_a_blind_plan_is_grounded_leniently_and_an_unknown_target_is_unresolved(offline_server,
                                                                                     chromium_worker, tmp_path):
    """`cs.CL` is the option `cs.CL (Computation and Language)`, `ticked` the box's `on`; `abstract or title`
    names two options of Search field, so it holds while either does. No flag, no refusal, the exact answer; the
    turn shows the grounding. A target naming no value of its control is unresolved: said, and revise_plan offered."""
    steps = load_walkthrough("offline_scholar_002", origin=offline_server.origin)
    task, outcome, model = await _solve("offline_scholar_002", steps, SCHOLAR_BLIND, tmp_path, offline_server,
                                        chromium_worker)
    assert _plan_flags(outcome) == [], outcome.drift_flags
    assert [r["ok"] for r in outcome.verifier_reports] == [True], outcome.verifier_reports
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    read_turn = next(t for t in reversed(_turns(model)) if "PLAN ON THIS PAGE" in t)
    grounding = read_turn.split("PLAN ON THIS PAGE", 1)[1].split("\n\n", 1)[0]
    # a held line says the option the plan's word stands for, and the control where its label is not the gate's name
    assert "filter Category = cs.CL: held as 'cs.CL (Computation and Language)'\n" in grounding, grounding
    assert "scope Include cross-listed papers = checked: held\n" in grounding, grounding  # a box's 'on' says nothing more
    assert "NOT HELD" not in grounding and "AMBIGUOUS" not in read_turn, grounding
    assert "window date = 2021-01-01..2021-12-31: held by 'Date basis: From date / To date'" in grounding

    unknown = {**SCHOLAR_BLIND, "gates": [*SCHOLAR_BLIND["gates"][:2],
                                          {"kind": "scope", "name": "Include cross-listed papers",
                                           "target": {"value": "primary or cross-listed"}}]}
    task, outcome, model = await _solve("offline_scholar_002", steps, unknown, tmp_path / "unknown", offline_server,
                                        chromium_worker)
    assert _plan_flags(outcome) == [], outcome.drift_flags
    assert outcome.verifier_reports[0]["ok"], outcome.verifier_reports
    turns = [t for t in _turns(model) if "PLAN ON THIS PAGE" in t]
    assert any("Include cross-listed papers = primary or cross-listed -> 'Subject: Include cross-listed papers': "
               "UNRESOLVED" in t for t in turns), turns[-1]
    events = [json.loads(line) for line in (tmp_path / "unknown" / "steps.jsonl").read_text().splitlines()]
    notes = [e for e in events if e.get("node") == "extractor"]
    assert notes and all("but the plan needs" not in json.dumps(e) for e in notes)


async def test_flags_are_judged_again_after_revise_plan(offline_server, chromium_worker, tmp_path):
    """A blind plan naming the wrong category flags the category the agent sets; `revise_plan` to the right one
    clears the flag at once (no page action between), so the rows read next carry no drift and pass."""
    steps = load_walkthrough("offline_scholar_002", origin=offline_server.origin)
    wrong = {**SCHOLAR_BLIND, "gates": [*SCHOLAR_BLIND["gates"][:1],
                                        {"kind": "filter", "name": "Category", "target": {"value": "cs.LG"}}]}
    right = {**SCHOLAR_BLIND, "gates": SCHOLAR_BLIND["gates"][:2]}
    read = next(i for i, s in enumerate(steps) if s["tool"] == "read_table")
    steps[read:read] = [{"tool": "revise_plan", "args": {"reason": "the category is cs.CL", "plan": right}}]
    task, outcome, model = await _solve("offline_scholar_002", steps, wrong, tmp_path, offline_server,
                                        chromium_worker)
    assert [f["gate"] for f in _plan_flags(outcome)] == ["category"], outcome.drift_flags
    # the turns before and after the revision, by the revision's tool reply (a turn's NOT APPLIED line may name the
    # category's value too: "Subject: Category = cs.CL (...)" is no sign of the revised plan)
    revised = next(i for i, t in enumerate(model.transcript) if t.startswith("plan revised:"))
    before = [t for t in _turns(model) if "Category = cs.LG" in t]
    after = [t for t in model.transcript[revised:] if t.startswith(("TODAY:", "TASK:"))]
    assert after and "filter Category = cs.CL" in after[0], after[:1]
    assert any("DRIFT FLAGS" in t for t in before), before[-1]
    assert after and "DRIFT FLAGS" not in after[0], after[0]
    assert [r["ok"] for r in outcome.verifier_reports] == [True], outcome.verifier_reports
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match


async def test_the_repair_goal_is_said_again_after_discard_rows(offline_server, chromium_worker, tmp_path):
    """Rows read before a planned gate was set are refused; the repair goal names the rows and the refusals left;
    right after `discard_rows` it is judged again on what is left (nothing read now), not the stale drift."""
    steps = load_walkthrough("offline_scholar_001", origin=offline_server.origin)
    basis = next(i for i, s in enumerate(steps) if s["args"].get("target", {}).get("label") == "Date basis")
    late, apply = steps.pop(basis), next(s for s in steps if s["tool"] == "click")
    after = next(i for i, s in enumerate(steps) if s["tool"] == "extract_rows") + 1
    steps[after:after] = [late, apply]
    task = load_tasks("offline", origin=offline_server.origin, task_ids=["offline_scholar_001"])[0]
    model = ScriptedPolicy(steps=steps)
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                   variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=tmp_path,
                                   policy=model)
    first = outcome.verifier_reports[0]
    assert not first["ok"] and "read at step(s) [" in first["repair_goal"], first
    assert "(refusal 1 of 2: 1 more refusal(s) at most, then finish composes the answer" in first["repair_goal"]
    discarded = next(i for i, t in enumerate(model.transcript) if t.startswith("discarded"))
    after_discard = next(t for t in model.transcript[discarded:] if t.startswith(("TODAY:", "TASK:")))
    assert "[drift]" not in after_discard.split("REPAIR GOAL:", 1)[1].split("\n", 1)[0], after_discard
    assert outcome.verifier_reports[-1]["ok"]
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match


async def test_read_facts_with_a_url_is_judged_on_the_page_it_read(offline_server, chromium_worker, tmp_path):
    """A county profile opened at its defaults, then read with `read_facts(url=...?product=acs5&vintage=2022)`:
    the read is judged on the page it opened (the plan's product and vintage), so the row carries no drift."""
    origin = offline_server.origin
    plan = {"source": "profiles", "phases": [
        {"read": "county profile", "into": "county_stats", "detail_pages": False,
         "gates": [{"kind": "filter", "name": "Survey product", "target": {"value": "5-year estimates"}}, {"kind": "filter", "name": "Vintage", "target": {"value": "2022"}}]}]}
    steps = [{"tool": "goto", "args": {"url": f"{origin}/stats/profile/EM-01"}},
             {"tool": "read_facts", "args": {"into": "county_stats", "url": f"{origin}/stats/profile/EM-01?product=acs5"
                                                                         "&vintage=2022",
                                             "fields": {"geography": "Geography", "product": "Survey product"}}},
             {"tool": "finish", "args": {}}]
    _, outcome, _ = await _solve("offline_stats_004", steps, plan, tmp_path, offline_server, chromium_worker)
    assert _plan_flags(outcome) == [], outcome.drift_flags
    rows = _saved(tmp_path)["tables"]["county_stats"]["rows"]
    assert len(rows) == 1 and not rows[0]["provenance"]["drift"] and "5-year" in rows[0]["values"]["product"], rows


async def test_each_read_is_judged_against_its_own_phases_window(offline_server, chromium_worker, tmp_path):
    """Two phases over one From/To pair (a first and a second quarter): each read under its own window is held,
    neither is `window_narrower` against the other phase's."""
    steps = load_walkthrough("offline_vulns_003", origin=offline_server.origin)
    search = next(i for i, s in enumerate(steps) if s["tool"] == "set_range")
    head, tail = steps[:search], [s for s in steps[search:] if s["tool"] in ("click", "read_table", "extract_rows")]
    quarters = [("2021-01-01", "2021-03-31", "q1"), ("2021-04-01", "2021-06-30", "q2")]
    steps = list(head)
    for start, end, into in quarters:
        steps.append({"tool": "set_range", "args": {**next(s for s in load_walkthrough(
            "offline_vulns_003", origin=offline_server.origin) if s["tool"] == "set_range")["args"],
            "start": start, "end": end}})
        steps += [({**s, "args": {**s["args"], "into": into}} if s["tool"] == "extract_rows" else s) for s in tail]
    steps.append({"tool": "finish", "args": {}})
    plan = {"source": "vulnerability search", "gates": [{"kind": "filter", "name": "Severity", "target": {"value": "Medium"}}],
            "phases": [{"read": f"records of {into}", "into": into, "gates": {"From date": f"{start}..{end}"}}
                       for start, end, into in quarters]}
    _, outcome, _ = await _solve("offline_vulns_003", steps, plan, tmp_path, offline_server, chromium_worker)
    assert _plan_flags(outcome) == [], outcome.drift_flags
    tables = _saved(tmp_path)["tables"]
    assert all(not r["provenance"]["drift"] for name in ("q1", "q2") for r in tables[name]["rows"]), tables
    assert tables["q1"]["rows"] and tables["q2"]["rows"]
