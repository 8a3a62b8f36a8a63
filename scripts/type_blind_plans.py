"""Convert the played blind plans (tasks/offline/blind_plans/*.json) and the real-model decision paths' plans
(tests/data/real_model_paths/*.json: the planner's plan and each revise_plan's) from free-text targets to typed
ones, once (issue 37, stage 1). Kept as the record of how each free-text target was read; the judge never parses
text.

The rules are the ones the old judge applied at every check, applied here once: a window gate's 'A..B' (ISO
dates or years) is a window, 'all dates ...' a window open at both ends; 'ticked' / 'unticked' (an aside left
out) a box; a list ('A;B;C', 'A, B (each separately)', 'each of A, B') any of them, one per read; a phase gate
whose target holds '..' a window (the old `Phase.gate_list`), any other a filter. The targets that describe a
value instead of giving it are listed by hand (DESCRIBED) and become `unknown`, with the planner's words as the
note. Everything else is a value.

    python scripts/type_blind_plans.py            # rewrites the files in place (idempotent: typed targets stay)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIR = ROOT / "tasks" / "offline" / "blind_plans"
PATHS = ROOT / "tests" / "data" / "real_model_paths"
DESCRIBED = {"each kept family", "selected genus", "selected genus per family", "oldest other-genus name",
             "the oldest other-genus name", "each order (expand all)", "every order expanded", "all orders expanded",
             "largest available", "Eastmarch and each county listed under 'Counties in Eastmarch'",
             "Eastmarch and all its counties", "primary or cross-listed", "each county", "each of the three units",
             "Eastmarch (state), then each county listed under Counties in Eastmarch"}
ASIDE = re.compile(r"\s*\([^()]*\)\s*")
BOUND = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$")


def typed(kind: str, text: str | dict) -> dict:
    if isinstance(text, dict):
        return text
    bare = ASIDE.sub(" ", text).strip()
    if text in DESCRIBED:
        return {"unknown": text}
    if kind == "window":
        if bare.casefold().startswith("all dates"):
            return {"from": None, "to": None}
        start, _, end = bare.partition("..")
        if BOUND.match(start) and BOUND.match(end):
            return {"from": start, "to": end}
        return {"unknown": text}
    if bare in ("ticked", "unticked", "on", "off"):
        return {"checked": bare in ("ticked", "on")}
    listed = re.sub(r"^each of\s+", "", bare)
    parts = [p.strip() for p in re.split(r"\s*(?:[;,]|\s/\s)\s*", listed) if p.strip()]
    if len(parts) > 1:
        return {"any_of": parts, "together": False}
    return {"value": text}


def convert(plan: dict) -> dict:
    for gate in plan.get("gates") or []:
        gate["target"] = typed(gate["kind"], gate["target"])
    for phase in plan.get("phases") or []:
        gates = phase.get("gates") or []
        if isinstance(gates, dict):
            gates = [{"kind": "window" if ".." in target else "filter", "name": name, "target": target}
                     for name, target in gates.items()]
        for gate in gates:
            gate["target"] = typed(gate["kind"], gate["target"])
        phase["gates"] = gates
    return plan


def convert_path(path: dict) -> dict:
    """A decision path: its plan and the plan of each revise_plan call; a bare plan file (`*.revised_plan.json`)."""
    if "gates" in path or "phases" in path:
        return convert(path)
    convert(path["plan"])
    for step in path.get("steps") or []:
        if step.get("tool") == "revise_plan" and isinstance((step.get("args") or {}).get("plan"), dict):
            convert(step["args"]["plan"])
    return path


def main() -> int:
    for path in sorted(DIR.glob("*.json")):
        plan = convert(json.loads(path.read_text(encoding="utf-8")))
        path.write_text(json.dumps(plan, indent=1, ensure_ascii=False), encoding="utf-8")
    for path in sorted(PATHS.glob("*.json")):
        decided = convert_path(json.loads(path.read_text(encoding="utf-8")))
        path.write_text(json.dumps(decided, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
