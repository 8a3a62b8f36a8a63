"""False alarms a played model met (issue 31), through the whole graph: real Chromium on the offline water site, the
real `ChatOpenAI` client against the strict fake server answering with one small decision path.

- a field holding a comma list of every unit the plan lists (in another order, another separator) holds the gate;
- a table two phases write (one per characteristic group) is judged against both: each group's read is held under
  its own phase, and a read holding neither is flagged naming the phases it was compared with;
- a record's page has no unit or site-type control: the gates held on the list it was reached from are not said
  "unresolved" on each record's page;
- after `revise_plan` the rows' flags are judged again from their state snapshots under the revised plan: a row the
  revised plan holds loses its flag, a row it now misses gains one (and the verifier refuses it until discarded).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.measuring.paths.path import DecisionPath
from agent.measuring.paths.replay import ReplayResult, replay_path

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

TASK = "offline_water_005-g"
LIST = "{origin}/water/locations"
PAGE = "{origin}/water/locations/WQX-CP-5017"
FIELDS = {"location_id": "Location ID", "grp": "Characteristic group", "start_year": "Start year",
          "end_year": "End year"}
SQL = ("SELECT c.huc, c.location_id, max(p.start_year) AS common_start_year, min(p.end_year) AS common_end_year, "
       "max(p.start_year) AS inorganics_start, '' AS microbiological_start, '' AS nutrient_start, "
       "'' AS physical_start FROM candidates c JOIN periods p ON p.location_id = c.location_id "
       "GROUP BY c.huc, c.location_id ORDER BY c.huc")


def _plan(second_group: str) -> dict:
    return {
        "source": "water quality locations",
        "gates": [{"kind": "scope", "name": "Basin unit (HUC)", "target": {"any_of": ["05040505", "02040502", "04040504"]}},
                  {"kind": "filter", "name": "Site type", "target": {"value": "Stream"}}],
        "all_pages": True, "detail_pages": False,
        "phases": [
            {"read": "stream locations of the units", "into": "candidates"},
            {"read": "Inorganics period per location", "into": "periods", "gates": [{"kind": "filter", "name": "Characteristic group", "target": {"value": "Inorganics"}}]},
            {"read": "second group's period per location", "into": "periods",
             "gates": [{"kind": "filter", "name": "Characteristic group", "target": {"value": second_group}}]},
        ],
        "derivation": "periods joined to candidates",
    }


STEPS = [
    {"tool": "goto", "args": {"url": LIST}},
    {"tool": "fill", "args": {"target": {"shown_label": "Basin unit (HUC)"}, "value": "02040502,04040504,05040505"}},
    {"tool": "select", "args": {"target": {"shown_label": "Site type"}, "option": "Stream"}},
    {"tool": "submit", "args": {"target": {"shown_label": "Find locations"}}},
    {"tool": "extract_rows", "args": {"source": "table", "into": "candidates", "columns": {
        "huc": "Basin unit", "location_id": "Location ID", "url": "link:Location ID"}}},
    {"tool": "goto", "args": {"url": f"{PAGE}?group=Inorganics"}},  # a record's page, phase 2 still to read
    {"tool": "read_facts", "args": {"into": "periods", "fields": FIELDS,
                                    "url": [f"{PAGE}?group=Inorganics", f"{PAGE}?group=Physical"]}},
    {"tool": "read_facts", "args": {"into": "periods", "fields": FIELDS, "url": [PAGE]}},  # all groups: neither phase
    {"tool": "revise_plan", "args": {"reason": "the second read is of all groups", "plan": _plan("All groups")}},
    {"tool": "derive", "args": {"sql": SQL}},
    {"tool": "finish", "args": {}},  # refused: the Physical row is one the revised plan no longer holds
    {"tool": "discard_rows", "args": {"table": "periods", "where": {"grp": "Physical"}}},
    {"tool": "derive", "args": {"sql": SQL}},
    {"tool": "finish", "args": {}},
]
_RUN: dict[str, tuple[ReplayResult, Path]] = {}


async def _replayed(offline_server, chromium_worker, tmp_path_factory) -> tuple[ReplayResult, Path]:
    if not _RUN:
        out = tmp_path_factory.mktemp("judge-phases")
        path = DecisionPath.model_validate({"task": TASK, "plan": _plan("Physical"), "steps": STEPS})
        _RUN["run"] = (await replay_path(path, origin=offline_server.origin, worker=chromium_worker, out_dir=out), out)
    result, out = _RUN["run"]
    assert result.outcome.error_kind != "bug", result.outcome.traceback
    assert not result.divergences and not result.rejected, result.summary()
    return result, out


def _replies(out: Path) -> list[str]:
    """The tool replies the model was sent, in order (each once)."""
    seen: dict[str, str] = {}
    for line in (out / "transcript.jsonl").read_text().splitlines():
        for message in json.loads(line)["request"]["messages"]:
            if message["role"] == "tool":
                seen.setdefault(message["tool_call_id"], str(message["content"]))
    return list(seen.values())


def _reply(out: Path, starts: str, index: int = 0) -> str:
    return [r for r in _replies(out) if r.startswith(starts) or f"\n{starts}" in r][index]


async def test_a_comma_list_of_every_listed_unit_holds_the_gate(offline_server, chromium_worker, tmp_path_factory):
    result, out = await _replayed(offline_server, chromium_worker, tmp_path_factory)
    extracted = _reply(out, "extracted ")
    assert "8 row(s) into candidates" in extracted and "[gate]" not in extracted, extracted
    assert not [f for f in result.outcome.drift_flags if f["gate"] == "huc"], result.outcome.drift_flags


async def test_a_table_two_phases_write_is_judged_against_both(offline_server, chromium_worker, tmp_path_factory):
    result, out = await _replayed(offline_server, chromium_worker, tmp_path_factory)
    by_group = _reply(out, "/water/locations/WQX-CP-5017?group=Inorganics")
    assert "grp='Physical'" in by_group and "[gate]" not in by_group, by_group  # each held under its own phase
    neither = _reply(out, "read 1 row into periods (3 now)")
    assert "[gate] Characteristic group holds 'All groups'" in neither, neither
    assert "table periods is read by phases 2, 3" in neither, neither
    flags = [f for f in result.outcome.drift_flags if f["gate"] == "group"]
    assert len(flags) == 1 and flags[0]["after"] == "All groups", result.outcome.drift_flags


async def test_gates_held_on_the_list_are_not_unresolved_on_each_record_page(offline_server, chromium_worker,
                                                                               tmp_path_factory):
    _, out = await _replayed(offline_server, chromium_worker, tmp_path_factory)
    for reply in (_reply(out, "/water/locations/WQX-CP-5017?group=Inorganics"),
                  _reply(out, "read 1 row into periods (3 now)")):
        assert "unresolved" not in reply, reply
    turns = [str(json.loads(line)["request"]["messages"][-1]["content"]) for line in
             (out / "transcript.jsonl").read_text().splitlines()]
    on_record = [lines for lines in map(_grounding, turns) if any("Characteristic group" in x for x in lines)]
    assert on_record and not any("UNRESOLVED" in x for lines in on_record for x in lines), on_record


def _grounding(turn: str) -> list[str]:
    """The turn's PLAN ON THIS PAGE lines."""
    if "PLAN ON THIS PAGE" not in turn:
        return []
    lines = turn.split("PLAN ON THIS PAGE", 1)[1].splitlines()[1:]
    return [line for line in lines[:next((i for i, x in enumerate(lines) if not x.startswith("- ")), len(lines))]]


async def test_revise_plan_judges_the_rows_flags_again_from_their_snapshots(offline_server, chromium_worker,
                                                                           tmp_path_factory):
    result, out = await _replayed(offline_server, chromium_worker, tmp_path_factory)
    events = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    rejudged = [e["rejudged"] for e in events if "rejudged" in e]
    assert rejudged == [{"periods": 1}], rejudged  # the all-groups row lost its flag, the Physical row gained one
    reports = result.outcome.verifier_reports
    assert len(reports) == 2 and not reports[0]["ok"] and reports[1]["ok"], reports
    refused = reports[0]["repair_goal"]
    assert "[drift] table periods: 1 row(s)" in refused and "gate_mismatch:group" in refused, refused
    assert result.outcome.stop_reason == "finished", result.summary()
