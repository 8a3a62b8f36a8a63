"""Prompt rendering: the node prompts are data files (graph/prompts/*.md, Jinja); this fills them in.

Only the solver view, the plan, the tracked state and the observation reach a prompt, so what the
model sees is exactly what the graph state holds (and a test can check it holds no oracle data).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from browser.delta import observation_text as browser_observation_text
from browser.delta import page_key as browser_page_key
from browser.delta import render_delta
from browser.tokens import count_tokens, encoding
from graph.composer import live_rows
from graph.details import phase_progress
from graph.judge import current_phase, gates_for, grounding_lines
from graph.page_fence import inline_data, untrusted
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
        turn = env.loader.get_source(env, "actor_turn.md")[0]
        # page values inside the turn's own sections are data: one line each, quoted when they imitate a header
        env.filters["data"] = lambda value: inline_data(value, turn)
        env.filters["page"] = lambda text: untrusted(str(text), turn)
        read = lambda name: (directory / name).read_text(encoding="utf-8").strip()  # noqa: E731
        return cls(planner_system=read("planner.md"), actor_system=read("actor.md"), env=env)

    def planner_task(self, task: TaskView) -> str:
        return self.env.get_template("planner_task.md").render(task=task, columns=task["output_spec"]["columns"])

    @property
    def turn_template(self) -> str:
        return self.env.loader.get_source(self.env, "actor_turn.md")[0]

    def actor_turn(self, state: AgentState, *, observation_text: str, max_steps: int) -> str:
        plan = Plan.model_validate(state["plan"]) if state.get("plan") else None
        retrieval = state.get("retrieval")
        rows = live_rows(state.get("rows") or [], state.get("discarded") or [])
        tables = state.get("tables") or {}
        columns = state["task"]["output_spec"]["columns"]
        state_values, not_in_plan = split_state_values(plan, retrieval, state.get("history") or [])
        listings = state.get("listings") or []
        phases = [(p, phase_progress(p, tables, listings)) for p in plan.phases] if plan else []
        reports = state.get("reports") or []
        return self.env.get_template("actor_turn.md").render(
            task=state["task"], columns=columns, plan=plan, retrieval=retrieval,
            pending_gates=pending_gates(plan, retrieval, state.get("history") or []),
            grounding=grounding_lines(gates_for(plan, current_phase(plan, tables)), retrieval,
                                     state.get("history") or []),
            retrieval_url=_retrieval_url(retrieval, state.get("observation")),
            state_values=state_values, not_in_plan=not_in_plan,
            drift_flags=state.get("drift_flags") or [], repair_goal=state.get("repair_goal"),
            goal_step=reports[-1]["step"] if reports else None,
            rows_collected=rows_collected(rows, tables),
            last_rows=[[r["values"].get(c, "") for c in columns] for r in rows[-LAST_ROWS_SHOWN:]],
            step=state.get("step", 0), max_steps=max_steps, observation=untrusted(observation_text, self.turn_template),
            tables=schemas(tables) if tables else "",
            phases=phases, derivation=derivation_text(plan.derivation if plan else "", not any(d for _, d in phases)),
        )


def rows_collected(rows: list[Any], tables: dict[str, Any]) -> str:
    """The live rows (discarded ones gone, a read of 0 rows not a row): the answer rows, then each table's."""
    counts = [(name, sum(not r.get("_empty") for r in t["rows"])) for name, t in tables.items() if not t["derived"]]
    if not counts:
        return str(len(rows))
    return "; ".join([*([f"answer {len(rows)}"] if rows else []), *(f"{name} {n}" for name, n in counts)])


DERIVATION_PREVIEW_TOKENS = 30


def derivation_text(derivation: str, nothing_read: bool) -> str:
    """The plan's derivation: whole while no phase has rows (the turns that orient), then its opening only. It
    restates how the TASK (always shown whole) computes the answer, and a long one repeated on every read
    turn of a many-page task costs more than it guides."""
    if nothing_read or count_tokens(derivation) <= DERIVATION_PREVIEW_TOKENS:
        return derivation
    tokens = encoding().encode(derivation, disallowed_special=())
    return encoding().decode(tokens[:DERIVATION_PREVIEW_TOKENS]).rstrip() + " … (cut: the TASK says how)"


def split_state_values(plan: Plan | None, retrieval: Any,
                       history: list[Any] | None = None) -> tuple[list[tuple[str, Any]], list[str]]:
    """The tracked values worth a line (set by the agent, here or on the page it came from with the same value,
    named by the plan, or with evidence beyond the URL and the control itself: a chip, a readback) and the keys
    of the rest ("not in plan": the observation's CONTROLS already show them with the same value)."""
    if not retrieval:
        return [], []
    named = {found[0] for g in plan_gates(plan) if (found := find_gate_value(retrieval, g.name, g))} if plan else set()
    shown: list[tuple[str, Any]] = []
    rest: list[str] = []
    for key, value in retrieval["values"].items():
        if not value.get("value"):
            continue
        if value.get("set_at_step") is None and (carried := _set_before(key, value["value"], history or [])):
            value = {**value, "set_at_step": carried}  # set by the agent, carried here by a submit
        if value.get("set_at_step") is not None or key in named or set(value["evidence"]) - {"url", "control"}:
            shown.append((key, value))
        else:
            rest.append(key)
    return shown, rest


def _set_before(key: str, value: str, history: list[Any]) -> int | None:
    """The latest step at which the agent set `key` to `value` on a page visited before."""
    steps = [held["set_at_step"] for state in history if (held := state["values"].get(key))
             and held.get("set_at_step") is not None and held.get("value") == value]
    return steps[-1] if steps else None


def _retrieval_url(retrieval: Any, observation: dict[str, Any] | None) -> str:
    """The tracked URL, unless it is the observed page's (whose URL and query the observation spells out)."""
    if not retrieval:
        return ""
    return "the page below" if observation and retrieval["url"] == observation.get("url") else retrieval["url"]


def pending_gates(plan: Plan | None, retrieval: Any, history: list[Any] | None = None) -> list[str]:
    """Plan gates no control of the page names, and none of any page visited before: a gate seen on the search
    page is not "not yet seen" on a result's own page, which never has it."""
    if plan is None or not retrieval:
        return []
    return [f"{g.name}={g.target}" for g in plan.gates
            if g.kind not in ("window", "search") and not find_gate_value(retrieval, g.name, g)
            and not any(find_gate_value(h, g.name, g) for h in history or [])] + [
        f"AMBIGUOUS {note}" for note in ambiguous_gates(plan, retrieval)]


DELTA_SPAN = 3  # a page shown whole at most this many actor steps ago may be sent as a delta


def page_key(observation: dict[str, Any] | None) -> str:
    """Identity of what an observation shows (the browser layer's: URL, page id and rendered content)."""
    return browser_page_key(observation)


def observation_text(observation: dict[str, Any] | None, token_budget: int) -> str:
    """The browser's rendering of the observation, as it is (the browser renderer owns the one budget)."""
    return browser_observation_text(observation, token_budget)


def turn_observation(state: AgentState, token_budget: int) -> tuple[str, dict[str, Any] | None]:
    """The observation text for this actor call and the `seen_page` record to keep: the whole page, or the
    browser's delta rendering when the model was shown this same page whole within the last `DELTA_SPAN` steps."""
    observation = state.get("observation")
    text = observation_text(observation, token_budget)
    key = page_key(observation)
    if not key:
        return text, None
    step = state.get("step", 0) + 1
    seen = state.get("seen_page") or {}
    if seen.get("key") == key and step - int(seen.get("step", 0)) <= DELTA_SPAN and observation:
        delta = render_delta(key, observation, since_step=int(seen["step"]), token_budget=token_budget)
        if delta is not None:
            return delta, seen
    return text, {"key": key, "step": step}
