"""Prompt rendering: the node prompts are data files (graph/prompting/prompts/*.md, Jinja); this fills them in.

Only the solver view, the plan, the tracked state and the observation reach a prompt, so what the
model sees is exactly what the graph state holds (and a test can check it holds no oracle data).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from browser.delta import NO_PAGE, as_observation, render_observation
from browser.delta import page_key as browser_page_key
from browser.render import Rendering, whole_tokens
from browser.tokens import count_tokens, encoding
from browser.types import CHOICE_KINDS
from graph.checks.details import phase_progress
from graph.evidence.evidence_tables import extracted_answer, read_rows, schemas, workspace_tables
from graph.plan.binding import plan_of
from graph.plan.judge import current_phase, gates_for, grounding_lines, named_controls
from graph.plan.targets import AnyOf, Value
from graph.plan.values import at_site_default, gate_key, last_set, norm_value, set_by_agent
from graph.prompting.page_fence import inline_data, untrusted
from graph.state import AgentState, Gate, Plan, TaskView
from graph.tracking.plan_flags import ambiguous_gates

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
        env.tests["unresolved_line"] = lambda line: ": UNRESOLVED, " in line  # a PLAN ON THIS PAGE line
        read = lambda name: (directory / name).read_text(encoding="utf-8").strip()  # noqa: E731
        return cls(planner_system=read("planner.md"), actor_system=read("actor.md"), env=env)

    def planner_task(self, task: TaskView) -> str:
        return self.env.get_template("planner_task.md").render(task=task, columns=task["output_spec"]["columns"])

    @property
    def turn_template(self) -> str:
        return self.env.loader.get_source(self.env, "actor_turn.md")[0]

    def actor_turn(self, state: AgentState, *, observation_text: str, max_steps: int, cut: int = 0) -> str:
        """The turn; `cut` (0 to TURN_CUTS) abbreviates its state part for a short context window (`turn_cut`)."""
        plan = plan_of(state)
        retrieval = state.get("retrieval")
        tables = state.get("tables") or {}
        rows = read_rows(extracted_answer(tables))
        named = workspace_tables(tables)
        columns = state["task"]["output_spec"]["columns"]
        state_values, _ = split_state_values(plan, retrieval, state.get("history") or [])
        listings = state.get("listings") or []
        phases = [(p, phase_progress(p, tables, listings)) for p in plan.phases] if plan else []
        reports = state.get("reports") or []
        phase_in_force = current_phase(plan, tables, state.get("history"))
        in_force = distinct_gates(gates_for(plan, phase_in_force))
        grounding = grounding_lines(in_force, retrieval, state.get("history") or [])
        every_gate_grounded = bool(grounding) and len(grounding) == len(in_force)  # a line per gate, none left out
        # a gate that names a control here has its PLAN ON THIS PAGE line (control, value needed, held or not): its
        # value is not said again as a state line, nor the gate again in the PLAN's list
        named_here = {gate.name: [k for k in named_controls(gate, retrieval) if k] for gate in in_force} \
            if grounding and retrieval else {}
        covered = {key for keys in named_here.values() for key in keys}
        state_values = [(key, value) for key, value in state_values if key not in covered]
        # a pending control a gate's line shows is named only (its value is on that line): said once
        covered_labels = {((retrieval or {}).get("values") or {}).get(k, {}).get("label") for k in covered}
        pending = [(p["label"], None if p["label"] in covered_labels else p["value"])
                   for p in (retrieval or {}).get("pending") or []]
        on_page = {name for name, keys in named_here.items() if keys} | (
            {g.name for g in in_force} if every_gate_grounded else set())
        parts = turn_cut(cut, plan=plan, state_values=state_values, tables=named,
                         last_rows=[[r["values"].get(c, "") for c in columns] for r in rows[-LAST_ROWS_SHOWN:]])
        return self.env.get_template("actor_turn.md").render(
            task=state["task"], columns=columns, plan=parts["plan"], retrieval=retrieval,
            pending_gates=[] if grounding else [f"AMBIGUOUS {n}" for n in ambiguous_gates(plan, retrieval, in_force)],
            unseen={g.name for g in unseen_gates(plan, retrieval, state.get("history") or [])},
            grounding=grounding, on_page=on_page, pending=pending,
            retrieval_url=_retrieval_url(retrieval, state.get("observation")),
            state_values=parts["state_values"],
            drift_flags=state.get("drift_flags") or [], repair_goal=state.get("repair_goal"),
            goal_step=reports[-1]["step"] if reports else None,
            rows_collected=rows_collected(tables), last_rows=parts["last_rows"],
            step=state.get("step", 0), max_steps=max_steps, observation=untrusted(observation_text, self.turn_template),
            tables=schemas(named) if parts["tables"] else "", left_out=parts["left_out"],
            phases=phases, phase_in_force=phase_in_force, derivation=derivation_text(plan.derivation if plan else "",
                                                      not any(d for _, d in phases) and not cut),
        )


TURN_CUTS = 3  # 1: the bulk of the state part goes (rows, table schemas, untouched values); 2: the plan too;
# 3: the tool schemas lose their descriptions too (graph.prompting.context.undocumented; the system prompt names each tool)


def turn_cut(cut: int, *, plan: Plan | None, state_values: list[Any], tables: dict[str, Any],
             last_rows: list[Any]) -> dict[str, Any]:
    """The turn's state part for a context window too short for all of it, by what the model needs to act:
    the task, the plan on this page, gates not yet seen, drift flags, the repair goal and the step stay; the
    last rows and the table schemas (`derive`'s error lists them) go first, then the plan's lines and the tracked
    values. What went is counted in one line (`left_out`)."""
    gone: list[str] = []
    if cut >= 1:
        gone += [f"{len(last_rows)} last row(s)"] if last_rows else []
        gone += [f"{len(tables)} table schema(s)"] if tables else []
        last_rows = []
    if cut >= 2:
        if plan is not None:
            gone.append(f"the plan ({len(plan.gates)} gate(s), {len(plan.phases)} phase(s))")
        gone += [f"{len(state_values)} tracked value(s)"] if state_values else []
        plan, state_values = None, []
    if cut >= 3:
        gone.append("the tools' descriptions")
    return {"plan": plan, "state_values": state_values, "last_rows": last_rows,
            "tables": cut < 1 and bool(tables), "left_out": "; ".join(gone)}


def rows_collected(tables: dict[str, Any]) -> str:
    """The rows held (discarded ones gone, a read of 0 rows not a row): the answer's, then each table's."""
    answer = len(read_rows(extracted_answer(tables)))
    counts = [(name, len(read_rows(t))) for name, t in workspace_tables(tables).items() if not t["derived"]]
    if not counts:
        return str(answer)
    return "; ".join([*([f"answer {answer}"] if answer else []), *(f"{name} {n}" for name, n in counts)])


DERIVATION_PREVIEW_TOKENS = 15


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
    named: set[str] = set()
    for gate in gates_for(plan, every_phase=True) if plan else []:
        named.update(k for k in named_controls(gate, retrieval) if k)  # a window: its From/To pair
    shown: list[tuple[str, Any]] = []
    rest: list[str] = []
    for key, value in retrieval["values"].items():
        if not value.get("value"):
            continue
        if not set_by_agent(value) and (carried := last_set(history or [], key, value["value"])):
            value = {**value, "set_at_step": carried}  # set by the agent, carried here by a submit
        if set_by_agent(value) or key in named or set(value["evidence"]) - {"url", "control"}:
            shown.append((key, value))
        else:
            rest.append(key)
    return shown, rest


def defaults_unnamed(plan: Plan | None, retrieval: Any, history: list[Any], tables: dict[str, Any]
                     ) -> list[tuple[str, str, str]]:
    """(key, label, value) of the choice controls a read leaves at their site default that no gate of the plan
    names, not said at an earlier read: said once, as a note (the traps of played tasks were such controls: a
    choice the results depend on, left at its default and shown only as "not in plan")."""
    if plan is None or not retrieval:
        return []
    said = {k for table in tables.values() for read in table.get("reads") or [] for k in read.get("defaults") or []}
    _, rest = split_state_values(plan, retrieval, history)
    values = retrieval["values"]
    return [(k, values[k].get("label") or k, values[k]["value"]) for k in rest
            if k not in said and values[k].get("kind") in CHOICE_KINDS and len(values[k].get("options") or []) > 1
            and at_site_default(values[k])]


def _retrieval_url(retrieval: Any, observation: dict[str, Any] | None) -> str:
    """The tracked URL, unless it is the observed page's (whose URL and query the observation spells out): then
    none, and a RETRIEVAL STATE with nothing else to say is not shown."""
    if not retrieval:
        return ""
    return "" if observation and retrieval["url"] == observation.get("url") else retrieval["url"]


def distinct_gates(gates: list[Gate]) -> list[Gate]:
    """A phase's gate that restates a plan gate (the same control and value) is shown once; a plan gate of several
    values, one per read, is shown as the phase's gate naming the value this read takes (beside it, the plan's
    line read 'held as A or B' next to the phase's 'NOT HELD' on the same control: a played run's contradiction)."""
    one_value = {(gate_key(g.name), norm_value(g.target.value)) for g in gates if isinstance(g.target, Value)}
    seen: set[tuple[str, str]] = set()
    out = []
    for gate in gates:
        key = (gate_key(gate.name), str(gate.target).strip().casefold())
        if isinstance(gate.target, AnyOf) and not gate.target.together and any(
                (key[0], norm_value(v)) in one_value for v in gate.target.any_of):
            continue
        if key not in seen:
            seen.add(key)
            out.append(gate)
    return out


def pending_gates(plan: Plan | None, retrieval: Any, history: list[Any] | None = None, *,
                  in_force: list[Gate] | None = None) -> list[str]:
    """Plan gates no control of the page names, and none of any page visited before: a gate seen on the search
    page is not "not yet seen" on a result's own page, which never has it; and the gates naming several controls.
    `in_force`: only these gates' ambiguity is said (the turn's: another phase's gate is not in force now, and a
    played run was told of it on every turn). The turn shows none of it on a page where PLAN ON THIS PAGE lists
    every gate in force (an unseen or ambiguous one as UNRESOLVED)."""
    if plan is None or not retrieval:
        return []
    return [f"{g.name}={g.target}" for g in unseen_gates(plan, retrieval, history)] + [
        f"AMBIGUOUS {note}" for note in ambiguous_gates(plan, retrieval, in_force)]


def unseen_gates(plan: Plan | None, retrieval: Any, history: list[Any] | None = None) -> list[Gate]:
    """Plan gates no control of the page names, and none of any page visited before (the turn marks them in the
    PLAN's list, "(not seen yet)", rather than saying each again on a line of its own)."""
    if plan is None or not retrieval:
        return []
    return [g for g in plan.gates if g.kind not in ("window", "search") and not named_controls(g, retrieval)
            and not any(named_controls(g, h) for h in history or [])]


DELTA_SPAN = 3  # a page shown whole at most this many actor steps ago may be sent as a delta


def page_key(observation: dict[str, Any] | None) -> str:
    """Identity of what an observation shows (the browser layer's: page id and content)."""
    return browser_page_key(observation)


def observation_tokens(observation: dict[str, Any] | None) -> int:
    """What the observation takes shown whole, before any rendering: the renderer's count of the page's lines
    (a delta of the page is shorter)."""
    if not observation:
        return count_tokens(NO_PAGE)
    return whole_tokens(as_observation(observation))


def turn_observation(state: AgentState, token_budget: int) -> tuple[Rendering, dict[str, Any] | None]:
    """The observation's one rendering for this actor call, within `token_budget`, and the `seen_page` record to
    keep: the whole page, or the browser's delta rendering when the model was shown this same page whole within
    the last `DELTA_SPAN` steps."""
    observation = state.get("observation")
    key = page_key(observation)
    step = state.get("step", 0) + 1
    seen = state.get("seen_page") or {}
    recent = bool(key) and seen.get("key") == key and step - int(seen.get("step", 0)) <= DELTA_SPAN
    rendering = render_observation(observation, token_budget, since_step=int(seen["step"]) if recent else None)
    if not key:
        return rendering, None
    if rendering.unchanged_since is not None:
        return rendering, seen
    return rendering, {"key": key, "step": step}
