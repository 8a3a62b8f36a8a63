"""Prompt rendering: the node prompts are data files (graph/prompts/*.md, Jinja); this fills them in.

Only the solver view, the plan, the tracked state and the observation reach a prompt, so what the
model sees is exactly what the graph state holds (and a test can check it holds no oracle data).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from browser.tokens import count_tokens, encoding
from graph.state import AgentState, Plan, TaskView
from graph.tracker import ambiguous_gates, find_gate_value, plan_gates
from graph.workspace import schemas

DEFAULT_PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
LAST_ROWS_SHOWN = 2


@dataclass(frozen=True)
class Prompts:
    planner_system: str
    actor_system: str
    env: Environment

    @classmethod
    def load(cls, directory: Path = DEFAULT_PROMPT_DIR) -> Prompts:
        env = Environment(loader=FileSystemLoader(directory), undefined=StrictUndefined, autoescape=False,
                          keep_trailing_newline=False)
        read = lambda name: (directory / name).read_text(encoding="utf-8").strip()  # noqa: E731
        return cls(planner_system=read("planner.md"), actor_system=read("actor.md"), env=env)

    def planner_task(self, task: TaskView) -> str:
        return self.env.get_template("planner_task.md").render(task=task, columns=task["output_spec"]["columns"])

    def actor_turn(self, state: AgentState, *, observation_text: str, max_steps: int) -> str:
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        retrieval = state.get("retrieval")
        rows = state.get("rows") or []
        columns = state["task"]["output_spec"]["columns"]
        state_values, untouched = split_state_values(plan, retrieval)
        phases = [(p, bool((state.get("tables") or {}).get(p.into, {}).get("rows"))) for p in plan.phases] if plan else []
        return self.env.get_template("actor_turn.md").render(
            task=state["task"], columns=columns, plan=plan, retrieval=retrieval,
            pending_gates=pending_gates(plan, retrieval), retrieval_url=_retrieval_url(retrieval, state.get("observation")),
            state_values=state_values, untouched=untouched,
            drift_flags=state.get("drift_flags") or [], repair_goal=state.get("repair_goal"),
            rows_count=len(rows), last_rows=[[r["values"].get(c, "") for c in columns] for r in rows[-LAST_ROWS_SHOWN:]],
            step=state.get("step", 0), max_steps=max_steps, observation=observation_text,
            tables=schemas(state["tables"]) if state.get("tables") else "",
            phases=phases, derivation=derivation_text(plan.derivation if plan else "", not any(d for _, d in phases)),
        )


DERIVATION_PREVIEW_TOKENS = 30


def derivation_text(derivation: str, nothing_read: bool) -> str:
    """The plan's derivation: whole while no phase has rows (the turns that orient), then its opening only. It
    restates how the TASK (always shown whole) computes the answer, and a long one repeated on every read
    turn of a many-page task costs more than it guides."""
    if nothing_read or count_tokens(derivation) <= DERIVATION_PREVIEW_TOKENS:
        return derivation
    tokens = encoding().encode(derivation, disallowed_special=())
    return encoding().decode(tokens[:DERIVATION_PREVIEW_TOKENS]).rstrip() + " … (cut: the TASK says how)"


def split_state_values(plan: Plan | None, retrieval: Any) -> tuple[list[tuple[str, Any]], list[str]]:
    """The tracked values worth a line (set by the agent, named by the plan, or with evidence beyond the URL
    and the control itself: a chip, a readback) and the keys of the rest, which the observation's CONTROLS
    already show with the same value."""
    if not retrieval:
        return [], []
    named = {found[0] for g in plan_gates(plan) if (found := find_gate_value(retrieval, g.name, g))} if plan else set()
    shown: list[tuple[str, Any]] = []
    untouched: list[str] = []
    for key, value in retrieval["values"].items():
        if not value.get("value"):
            continue
        if value.get("set_at_step") is not None or key in named or set(value["evidence"]) - {"url", "control"}:
            shown.append((key, value))
        else:
            untouched.append(key)
    return shown, untouched


def _retrieval_url(retrieval: Any, observation: dict[str, Any] | None) -> str:
    """The tracked URL, unless it is the observed page's (whose URL and query the observation spells out)."""
    if not retrieval:
        return ""
    return "the page below" if observation and retrieval["url"] == observation.get("url") else retrieval["url"]


def pending_gates(plan: Plan | None, retrieval: Any) -> list[str]:
    if plan is None or not retrieval:
        return []
    return [f"{g.name}={g.target}" for g in plan.gates
            if g.kind not in ("window", "search") and not find_gate_value(retrieval, g.name, g)] + [
        f"AMBIGUOUS {note}" for note in ambiguous_gates(plan, retrieval)]


def page_key(observation: dict[str, Any] | None) -> str:
    """Identity of what an observation shows: URL, page id and the rendered content (a page that did not
    change since the model last saw it has the same key)."""
    if not observation:
        return ""
    shown = observation.get("text") or _fallback(observation)
    raw = "\n".join((str(observation.get("url", "")), str(observation.get("page_id", "")), shown))
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12]


DELTA_SPAN = 3  # a page shown whole at most this many actor steps ago may be sent as a delta
DELTA_MIN_SAVING = 40  # tokens; a smaller saving is not worth a second form of the page
_OPTIONS = re.compile(r'^(?P<head>\[e\d+\] (?!link )\w+ "[^"]*"(?: \(form "[^"]*"\))?(?: = "[^"]*")?) \{.*\}'
                      r'(?P<tail>(?: \((?:disabled|in frame [^)]*|\+\d+ alike: [^)]*)\))*)$')
_REF_LINE = re.compile(r"^\[[a-z]*\d+\]")  # a control or link line: never left out


def observation_delta(text: str, since_step: int) -> str | None:
    """The page the model was shown whole at `since_step`, unchanged since (same URL, page id and content):
    every line but the bulk content it already read then - option lists (each control's line stays, with its
    value), table body rows (each table's heading and header row stay) and outline text - with a first line
    saying so and which reads return them. Every control, link, the state, pagination, counts and notices
    stay. None when that would save little (send it whole)."""
    kept: list[str] = []
    section, header_row, left_out = "", False, {"table": 0, "outline": 0, "options": 0}
    for line in text.splitlines():
        if not section and (short := _without_options(line)) != line:
            left_out["options"] += 1
            kept.append(short)
            continue
        if line.startswith("TABLE ") and "(" in line:
            section, header_row = "table", False
        elif line.startswith("OUTLINE:"):
            section = "outline"
        elif line.startswith("LINKS:") or line.startswith("CONTROLS") or line.startswith("NOTICES:"):
            section = ""
        elif section == "table" and line.startswith("| ") and not header_row:
            header_row = True
        elif section and not _REF_LINE.match(line):
            left_out[section] += 1
            continue
        kept.append(line)
    if not any(left_out.values()):
        return None
    note = (f"(page unchanged since step {since_step}: every control and link below; not repeated: "
            f"{left_out['options']} option list(s) {{…}}, {left_out['table']} table row(s), "
            f"{left_out['outline']} outline line(s): list_options / read_table / read_section return them)")
    delta = "\n".join([note, *kept])
    return delta if count_tokens(text) - count_tokens(delta) >= DELTA_MIN_SAVING else None


def _without_options(line: str) -> str:
    """A control line with its option list as `{…}` (ref, kind, label, value and notes stay); the line as it
    is when it does not parse as one (nothing is dropped on a guess), and a link list's (a pager) as it is."""
    match = _OPTIONS.match(line)
    return f"{match['head']} {{…}}{match['tail']}" if match else line


def turn_observation(state: AgentState, token_budget: int) -> tuple[str, dict[str, Any] | None]:
    """The observation text for this actor call and the `seen_page` record to keep: the whole page, or a delta
    when the model was shown this same page whole within the last `DELTA_SPAN` steps."""
    observation = state.get("observation")
    text = observation_text(observation, token_budget)
    key = page_key(observation)
    if not key:
        return text, None
    step = state.get("step", 0) + 1
    seen = state.get("seen_page") or {}
    if seen.get("key") == key and step - int(seen.get("step", 0)) <= DELTA_SPAN:
        delta = observation_delta(text, int(seen["step"]))
        if delta is not None:
            return delta, seen
    return text, {"key": key, "step": step}


def observation_text(observation: dict[str, Any] | None, token_budget: int) -> str:
    """The browser's rendering as it is: the browser renderer owns the one observation budget (it keeps
    every control and notes what it left out), so cutting it again here would drop controls silently.
    Only the fallback, built here for an observation without text, is cut to the budget, with a note."""
    if not observation:
        return "(no page yet: start with goto)"
    if observation.get("text"):
        return observation["text"]
    text = _fallback(observation)
    if count_tokens(text) <= token_budget:
        return text
    tokens = encoding().encode(text, disallowed_special=())
    return encoding().decode(tokens[:token_budget]) + "\n[... observation cut at the token budget]"


def _fallback(obs: dict[str, Any]) -> str:
    lines = [f"URL {obs.get('url', '')}  TITLE {obs.get('title', '')}"]
    for c in obs.get("controls") or []:
        options = ", ".join(o["label"] for o in c.get("options") or [])
        lines.append(f"[{c['ref']}] {c['kind']} {c['label']!r} = {c.get('value')!r}" + (f" options: {options}" if options else ""))
    for t in obs.get("tables") or []:
        lines.append(f"TABLE {t['index']}: " + " | ".join(t["headers"]))
        lines += ["  " + " | ".join(r) for r in t["rows"]]
    if obs.get("pagination"):
        lines.append(f"PAGINATION {obs['pagination'].get('text', '')}")
    lines += [f"[{link['ref']}] link {link['text']!r} -> {link['href']}" for link in obs.get("links") or []]
    return "\n".join(lines)
