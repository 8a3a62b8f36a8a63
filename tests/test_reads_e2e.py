"""Issue 27 through the whole graph on the offline sites (real Chromium, the scripted model): the real-model paths of
`tests/data/real_model_paths/rewritten/` (a capable model's decisions, redone with the new reads) answer exactly,
and the replies show what was read:

- a table's links as a column (`link:<header>`), a page's link by its text (`read_facts` `link:<text>`);
- one call over many detail pages (`read_facts` / `extract_rows` with a `url` list), each page's rows said;
- label/value rows of a 3-column table and a header over one row read by label;
- `read_pdf` shows its text page by page; PDF rows carry `_page` and the PDF's URL;
- `derive` shows its whole result.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.config import AgentVariant, ModelConfig, ProtocolConfig
from agent.measuring.scripted import ScriptedPolicy
from agent.solve import solve_task
from eval.score import score_answer
from graph.evidence.evidence_tables import engine_rows
from tasks.loaders import load_tasks

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

PATHS = Path(__file__).resolve().parent / "data" / "real_model_paths" / "rewritten"


def path_steps(task_id: str, origin: str) -> list[dict[str, Any]]:
    """The path's steps for the scripted model: `{origin}` filled in, a target shown to the model as a control's
    label (`Group: Label` when the control sits in a group; a button's label is its text) or a link's text given
    by that label or text."""
    path = json.loads((PATHS / f"{task_id}.json").read_text().replace("{origin}", origin))
    for step in path["steps"]:
        for key in ("target", "start_target", "end_target"):
            target = step["args"].get(key)
            if isinstance(target, dict) and "shown_label" in target:
                label = target["shown_label"].split(": ")[-1]
                step["args"][key] = {"text": label} if step["tool"] in ("submit", "click") else {"label": label}
            elif isinstance(target, dict) and "shown_link" in target:
                step["args"][key] = {"text": target["shown_link"]}
    return path["steps"]


async def _solve(task_id: str, server, worker, out: Path):
    task = load_tasks("offline", origin=server.origin, task_ids=[task_id])[0]
    chat = ScriptedPolicy(steps=path_steps(task_id, server.origin))
    async with worker.task_browser(str(out), [server.origin]) as browser:
        outcome = await solve_task(task, browser=browser, model=ModelConfig(name="scripted", provider="scripted"),
                                   variant=AgentVariant(name="full"), protocol=ProtocolConfig(), out_dir=out,
                                   policy=chat)
    assert outcome.error is None and outcome.stop_reason == "finished", (outcome.error, outcome.stop_reason)
    assert score_answer(outcome.answer, task.oracle_answer, task.output_spec).exact_match, outcome.answer
    saved = json.loads((out / "retrieval_state.json").read_text())
    # the rows as the query engine sees them (cells and provenance columns side by side)
    return outcome, chat.transcript, {name: {**t, "rows": engine_rows(t)} for name, t in saved["tables"].items()}


def _reply(transcript: list[str], starts: str) -> str:
    return next(t for t in transcript if t.startswith(starts))


async def test_stats_profiles_in_ten_steps(offline_server, chromium_worker, tmp_path):
    """24 steps of the real model become 10: the label rows of the state's Label|Estimate|Margin tables are read
    by label, the county list with each county's link, the 10 county pages in one read_facts."""
    outcome, transcript, tables = await _solve("offline_stats_004", offline_server, chromium_worker, tmp_path)
    assert outcome.steps == 10 and outcome.verifier_reports[0]["ok"], outcome.verifier_reports
    state = tables["state"]["rows"][0]
    assert re.fullmatch(r"[\d,]+", state["pop25"]) and re.fullmatch(r"[\d,]+", state["unemployed"])
    counties = tables["counties"]["rows"]
    assert all(re.search(r"/stats/profile/EM-\d\d$", r["url"]) for r in counties), counties
    listed = _reply(transcript, "extracted 10 row(s) into counties")
    assert all(r["url"] in listed for r in counties)  # the rows just added, links included, in the reply
    read = _reply(transcript, "/stats/profile/EM-01?")
    assert read.count("read 1 row into county_stats") == 10 and "(10 now)" in read
    stats = tables["county_stats"]["rows"]
    assert len({r["_url"] for r in stats}) == 10 and {r["vintage"] for r in stats} == {"2022"}
    derived = _reply(transcript, "derived answer:")
    assert all(line.split("|")[0] in derived for line in outcome.answer.splitlines())  # the whole result shown


async def test_regulatory_orders_from_pdf_text_in_fourteen_steps(offline_server, chromium_worker, tmp_path):
    """42 steps become 14: the actions' detail pages from the list's links, each page's Consent Order link read
    by its text in one call, the first order's text shown by read_pdf, the amounts of all six orders read by URL
    in one call, each row with the page it is on; amounts kept as printed."""
    outcome, transcript, tables = await _solve("offline_regulatory_004-g", offline_server, chromium_worker, tmp_path)
    assert outcome.steps == 14 and outcome.verifier_reports[0]["ok"], outcome.verifier_reports
    orders = tables["orders"]["rows"]
    assert len(orders) == 6 and all(r["consent_order"].endswith("/consent-order.pdf") for r in orders)
    shown = next(t for t in transcript if "--- page 1 ---" in t)
    assert "--- page 2 ---" in shown and "File No." in shown
    lines = tables["pdf_text"]["rows"]
    assert {r["_url"] for r in lines} == {r["consent_order"] for r in orders}
    assert all(isinstance(r["_page"], int) and f"pdf page {r['_page']}" == r["_locator"] for r in lines)
    assert "$" in outcome.answer


async def test_lifesci_species_pages_and_searches_in_twelve_steps(offline_server, chromium_worker, tmp_path):
    """49 steps become 12: the catalogue's species links; each species table read from the 8 species pages in
    one extract_rows; the 8 back-searches in one extract_rows over their URLs. (The scripted policy's own plan
    takes the one search it typed as a gate of every search, so the verifier sends the searches back once; the
    real model's plan does not.)"""
    outcome, transcript, tables = await _solve("offline_lifesci_005", offline_server, chromium_worker, tmp_path)
    reads = list(dict.fromkeys(t for t in transcript if t.startswith("/lifesci/species/achptygon-gracilis: extracted")))
    assert len(reads) == 2 and all(t.count(": extracted ") == 8 for t in reads), reads  # 8 pages a call
    assert len({r["_url"] for r in tables["synonyms"]["rows"]}) == 8
    assert len({r["query"] for r in tables["back_search"]["rows"]}) == 8
    assert all(r["species_url"].startswith(offline_server.origin + "/lifesci/species/")
               for r in tables["catalogue"]["rows"])
