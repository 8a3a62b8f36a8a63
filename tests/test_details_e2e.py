"""A real model's correct paths, replayed through the graph (real ChatOpenAI client, fake server, real Chromium):
the detail check accepts the way the site opens its results, and the turn's bookkeeping says what is true.

offline_stats_004: each county was read at `/stats/profile/EM-NN?product=acs5&vintage=2022`, the only correct way on
that site; the check compared full URLs and refused the answer ("10 of 10 not opened"). offline_lifesci_005: the
derivation keeps 8 of the catalogue's 11 species by the catalogue's own columns; the check demanded the 3 it drops.
The paths are the model's decisions (tests/data/real_model_paths), targets given by the label or link it was shown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.replay_calls import replay_replies

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]
PATHS = Path(__file__).parent / "data" / "real_model_paths"


def _target(args: dict[str, Any]) -> dict[str, Any]:
    """A target as the model saw it: the label or link text shown becomes a label / text target (no ref)."""
    out = dict(args)
    for key in ("target", "start_target", "end_target"):
        shown = out.get(key)
        if isinstance(shown, dict) and "shown_label" in shown:
            out[key] = {"label": shown["shown_label"]}
        elif isinstance(shown, dict) and "shown_link" in shown:
            out[key] = {"text": shown["shown_link"]}
    return out


def _call(tool: str, args: dict[str, Any], origin: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": json.loads(json.dumps(args).replace("{origin}", origin))}]}


async def _replay(task_id: str, plan: dict[str, Any], steps: list[dict[str, Any]], offline_server, chromium_worker,
                  tmp_path: Path) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    origin = offline_server.origin
    replies = [_call("Plan", plan, origin), *(_call(s["tool"], _target(s["args"]), origin) for s in steps)]
    done = await replay_replies(task_id, replies, offline_server, chromium_worker, tmp_path)
    return done.outcome, done.events, done.requests


def _turns(requests: list[dict[str, Any]]) -> list[str]:
    """The actor's turn text of each request (its last user message)."""
    out = []
    for request in requests:
        users = [m for m in request["messages"] if m["role"] == "user"]
        if users and "BUDGET: step" in str(users[-1]["content"]):
            out.append(str(users[-1]["content"]))
    return out


def _tool_replies(requests: list[dict[str, Any]]) -> list[str]:
    """Every tool reply the model was sent, once each."""
    return list(dict.fromkeys(str(m["content"]) for r in requests for m in r["messages"] if m["role"] == "tool"))


def _detail_failures(events: list[dict[str, Any]]) -> list[str]:
    return [f["message"] for e in events if e.get("node") == "verifier" for f in e["failures"]
            if f["check"] == "details"]


async def test_counties_read_under_their_links_with_the_sites_query_are_opened(offline_server, chromium_worker,
                                                                                 tmp_path):
    path = json.loads((PATHS / "offline_stats_004.json").read_text())
    steps = list(path["steps"])
    # three counties in, the model tries to switch the check off: refused, the plan stays as it was
    switched_off = json.loads(json.dumps(path["plan"]))
    switched_off["phases"][2]["detail_pages"] = False
    at = next(i for i, s in enumerate(steps) if "EM-03" in json.dumps(s["args"])) + 1
    steps.insert(at, {"tool": "revise_plan", "args": {"plan": switched_off, "reason": "the counties are read"}})
    outcome, events, requests = await _replay("offline_stats_004", path["plan"], steps, offline_server,
                                              chromium_worker, tmp_path)

    assert _detail_failures(events) == []
    refused = [t for t in _tool_replies(requests) if t.startswith("revise_plan refused")]
    assert len(refused) == 1 and "7 of 10 listed result(s) were not opened" in refused[0]
    turns = _turns(requests)
    last = turns[-1]
    assert re.search(r"phase 3 \[[^]]*\]: each county profile.*\(each listed result's page\)", last)  # kept
    assert "10 of 10 listed results opened" in last and "[done]" not in last
    assert re.search(r"ROWS COLLECTED: .*county_stats 10", last)
    for turn in turns:  # the state header is the current step; nothing the agent set is "untouched"
        header = re.search(r"RETRIEVAL STATE \(step (\d+)\)", turn)
        budget = re.search(r"BUDGET: step (\d+) of", turn)
        assert header is None or header.group(1) == budget.group(1)
        assert "untouched" not in turn
    # the labels the model was shown found their controls ("Survey product", "Vintage", "Update profile")
    assert not [e for e in events if e.get("node") == "executor" and e.get("error") == "not_found"]
    assert outcome.answer


async def test_species_the_derivation_drops_by_catalogue_values_need_no_visit(offline_server, chromium_worker,
                                                                             tmp_path):
    path = json.loads((PATHS / "offline_lifesci_005.json").read_text())
    plan = json.loads((PATHS / "offline_lifesci_005.revised_plan.json").read_text())
    outcome, events, requests = await _replay("offline_lifesci_005", plan, path["steps"], offline_server,
                                              chromium_worker, tmp_path)
    assert [e for e in events if e.get("node") == "verifier"], "the path ends in finish"
    assert _detail_failures(events) == []  # 3 of the 11 catalogue species are dropped by the SQL, never opened
    last = _turns(requests)[-1]
    assert "8 of 11 listed results opened" in last  # progress counts the whole list; the check asks only what the answer uses
    assert outcome.answer


async def test_a_result_list_read_by_url_is_a_listing_the_detail_check_holds_to(offline_server, chromium_worker,
                                                                               tmp_path):
    """`extract_rows(url=...)` opens a result list itself: the list is recorded as one a `goto` would have shown,
    so a plan needing each result's page refuses an answer read off the list alone (before, the read recorded
    no list and the check passed with no detail page opened)."""
    plan = {"source": "vulnerability search", "gates": [{"kind": "filter", "name": "Severity", "target": {"value": "HIGH"}}],
            "all_pages": False, "detail_pages": True}
    read = {"tool": "extract_rows", "args": {"url": "{origin}/vulns/search?severity=HIGH",
                                             "columns": {"id": "ID", "published": "Published", "score": "Score"}}}
    _, events, _ = await _replay("offline_vulns_001", plan, [read], offline_server, chromium_worker,
                                              tmp_path)
    failures = _detail_failures(events)
    assert failures and re.search(r"(\d+) of \1 listed result\(s\) were not opened: .*/vulns/detail/", failures[0])
