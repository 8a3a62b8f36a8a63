"""The report's two views of a cell, on real inputs: the evaluator's own verdicts folded into one aligned
answer-vs-gold table, and a steps.jsonl in the format the graph and the browser write folded to one row per step."""

from __future__ import annotations

import json
from pathlib import Path

from agent.reports.answer_table import answer_table
from agent.reports.timeline import step_rows
from eval.score import score_answer
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "name", "year"))
GOLD = "A|Alpha|2001\nB|Beta|2002\nC|Gamma|2003"


def test_answer_table_aligns_rows_and_marks_the_differing_cells() -> None:
    score = score_answer("B|Beta|2020\nA|Alpha|2001\nZ|Zeta|1999", GOLD, SPEC)  # a wrong year, an extra, a missing
    table = answer_table(score.model_dump(mode="json")["evidence"])
    assert table.columns == ["id", "name", "year"]
    kinds = [(r.pred_row, r.gold_row, r.kind) for r in table.rows]
    assert kinds == [(0, 1, "differs"), (1, 0, "match"), (2, None, "extra"), (None, 2, "omitted")]
    wrong = table.rows[0].cells[2]
    assert (wrong.predicted, wrong.gold, wrong.ok) == ("2020", "2002", False)
    assert table.differing_cells == 1 + 3 + 3 and table.matching_cells == 2 + 3
    assert answer_table(None).status == "no_evidence"
    empty = answer_table(score_answer("", GOLD, SPEC).model_dump(mode="json")["evidence"])
    assert (empty.status, [r.kind for r in empty.rows]) == ("empty", ["omitted"] * 3)
    unparsed = answer_table(score_answer("no separators here", GOLD, SPEC).model_dump(mode="json")["evidence"])
    assert (unparsed.status, unparsed.rows) == ("parse_failure", [])  # the report shows the raw answer instead


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "{cut off", encoding="utf-8")
    return path


def test_one_row_per_step_with_target_effect_and_flags(tmp_path: Path) -> None:
    target = {"ref": "e3", "label": "Vintage", "text": None, "selector": None, "frame": None}
    url = "http://127.0.0.1:5000/stats/profile/EM"
    steps = _write(tmp_path / "steps.jsonl", [
        {"node": "run", "event": "start"},
        {"node": "planner", "plan": {"gates": [{"name": "Vintage", "target": {"value": "2022"}}]}},
        {"node": "actor", "step": 1, "tool": "select", "call_id": "x1", "note": {"kind": "fault", "step": 3},
         "args": {"target": target,
                                                                                    "option": "2023"}},
        {"step": 1, "action": {"kind": "select", "target": target, "option": "2023"}, "ok": True,
         "message": "selected '2023' in 'Vintage'; reworded: no delta in these words", "url": url,
         "controls_changed": {"Vintage": ["2022", "2023"]}, "params_added": {"v": ["2023"]}},
        {"node": "executor", "step": 1, "action": "select", "ok": True, "url": url},
        {"node": "state_tracker", "step": 1, "url": url, "values": {"vintage": "2023"}, "page": None, "pages": None,
         "drift": [{"rule": "gate_mismatch", "gate": "vintage"}]},
        {"node": "actor", "step": 2, "tool": "extract_rows", "call_id": "c2", "args": {"into": "answer",
                                                                                      "source": "table"}},
        {"node": "extractor", "step": 2, "into": "answer", "rows": 4},
        {"node": "verifier", "step": 2, "ok": False, "failures": [{"check": "gate", "message": "Vintage is 2023"}]},
        {"node": "composer", "step": 2, "rows": 4, "derived": False, "stop_reason": "finished"},
    ])
    rows, problems = step_rows(steps, {1: "cells/m/v/t/screenshots/step_0001.png"})
    assert problems and problems[0].startswith("line 11: not JSON")  # a cut-off last line is said, not dropped
    assert [r.step for r in rows] == ["plan", "1", "2"]  # actor, browser, executor and tracker fold into one row
    first = rows[1]
    assert (first.action, first.target, first.url) == ("select option=2023", "'Vintage' [e3]", "/stats/profile/EM")
    assert "controls Vintage: '2022' -> '2023'" in first.effect and "state: vintage = 2023" in first.effect
    assert "URL +v=2023" in first.effect and not any("reworded" in e for e in first.effect)  # the fields, not the words
    assert {f.kind for f in first.flags} == {"fault", "drift"} and first.css == "drift"
    assert first.screenshot.endswith("step_0001.png")
    second = rows[2]
    assert second.url == "" and "read 4 row(s) into answer" in second.effect
    assert second.css == "verify" and "[gate] Vintage is 2023" in second.flags[0].text
