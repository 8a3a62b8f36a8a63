"""Build the two aligned SGR-Bench records (constraint `<id>`, goal `<id>-g`) of one offline base task.

Both wordings must share oracle, schema and rubric exactly, so they are produced from one `TaskDraft`;
the oracle text is serialised by the same `OutputSpec` the agent's composer and the evaluator use.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from tasks.spec import OutputSpec

SEPARATOR_WORDS = {"\n": "one record per line", ";": "records separated by `;`", ",": "records separated by `,`"}


@dataclass(frozen=True)
class TaskDraft:
    task_id: str
    domain: str
    family: str
    constraint_instruction: str
    goal_instruction: str
    start_url: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]
    sorting: str
    gates: list[str]  # metadata["State-Gated Retrieval"]
    data_dependency: str
    control_dependency: str
    inclusion: list[str]
    exclusion: list[str]
    traps: list[str]
    column_notes: dict[str, str] = field(default_factory=dict)
    dedup_key: tuple[str, ...] = ()
    record_separator: str = "\n"
    header: bool = False
    intra_chain: bool = True
    inter_chain: bool = False
    freeze: str = "synthetic offline data, fixed by the suite seed"
    shape: str = "copy"  # "copy": answer cells are table cells; "derived": selected, joined or computed
    mirrors: str = ""  # the released SGR-Bench task shape a derived task models
    phases: tuple[str, ...] = ()  # the dependent retrieval phases, in order (derived tasks)
    derived: tuple[str, ...] = ()  # columns computed, judged, ranked or chosen (each explained in column_notes)


def output_spec(draft: TaskDraft) -> OutputSpec:
    return OutputSpec(
        columns=draft.columns,
        field_separator="|",
        record_separator=draft.record_separator,
        header="required" if draft.header else "omitted",
        ordering=draft.sorting,
        dedup_key=draft.dedup_key or (draft.columns[0],),
    )


def output_format(draft: TaskDraft) -> str:
    layout = "|".join(draft.columns)
    header = f"start with the header row `{layout}`" if draft.header else "no header row"
    return (
        f"Output {SEPARATOR_WORDS[draft.record_separator]} as `{layout}` (fields separated by `|`), {header}; "
        f"order: {draft.sorting}. If no record qualifies, output NONE."
    )


def record_pair(draft: TaskDraft) -> list[dict[str, Any]]:
    """The constraint record and the goal record of one base task, in the release's per-task JSON shape."""
    if not 2 <= len(draft.rows) <= 20:
        raise ValueError(f"{draft.task_id}: oracle cardinality {len(draft.rows)} outside 2-20")
    spec = output_spec(draft)
    dedup = draft.dedup_key or (draft.columns[0],)
    normalization: dict[str, Any] = {
        "field_separator": "|",
        "record_separator": draft.record_separator,
        "header_row": draft.header,
        "schema": list(draft.columns),
        "dedup_key": "(" + ", ".join(dedup) + ")",
        "sorting_or_selection": draft.sorting,
        **draft.column_notes,
    }
    metadata: dict[str, Any] = {
        "State-Gated Retrieval": list(draft.gates),
        "dependency_type": "Data + Control",
        "intra_chain": draft.intra_chain,
        "inter_chain": draft.inter_chain,
        "data_dependency": draft.data_dependency,
        "control_dependency": draft.control_dependency,
        "freeze": {"historical_window": draft.freeze},
        "answer_type": "multi-row ordered table",
        "family": draft.family,
        "traps": list(draft.traps),
        "task_shape": draft.shape,
    }
    if draft.mirrors:
        metadata["mirrors"] = draft.mirrors
    if draft.phases:
        metadata["phases"] = list(draft.phases)
    if draft.derived:
        missing = [c for c in draft.derived if c not in draft.column_notes]
        if missing:
            raise ValueError(f"{draft.task_id}: derived column(s) {missing} need a rule in column_notes")
        metadata["derived"] = list(draft.derived)
    rubric = {
        "inclusion_conditions": list(draft.inclusion),
        "exclusion_conditions": list(draft.exclusion),
        "normalization": normalization,
    }
    common = {
        "domain": draft.domain,
        "autonomy_type": "ordered table",
        "oracle_output_cardinality": len(draft.rows),
        "start_url": draft.start_url,
        "output_format": output_format(draft),
        "oracle_answer": spec.format([list(r) for r in draft.rows]),
        "metadata": metadata,
        "rubric": rubric,
    }
    constraint = {"task_id": draft.task_id, "instruction": draft.constraint_instruction, **common}
    goal = {"task_id": f"{draft.task_id}-g", "instruction": draft.goal_instruction, **copy.deepcopy(common)}
    return [constraint, goal]


def derive_then_finish(sql: str, why: str, done: str = "answer = the derived table") -> list[dict[str, Any]]:
    """The last two steps of every derived walkthrough: compute the `answer` table, then finish from it."""
    return [{"tool": "derive", "args": {"sql": sql}, "why": why}, {"tool": "finish", "args": {}, "why": done}]
