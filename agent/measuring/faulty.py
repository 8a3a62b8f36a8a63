"""The faulty policy: the scripted walkthrough policy plus one seeded mistake per task record.

It stands in for a model that makes the paper's mistakes (`agent.measuring.fault_plan`) and then follows the graph's
feedback: it reacts to drift flags and verifier repair goals exactly as the scripted policy does (restore
the flagged gates, discard and re-read the failed tables), and its repairs replay the *correct* walkthrough,
as a model told "Date basis is 'Latest version' but the plan needs 'Original submission'" would set it.
So its figures measure what the state-tracking nodes catch and what a feedback-following agent recovers,
never what an LLM does: they are FAULT-INJECTED REPLAYS wherever they appear.

The injection is in the trace: every call it changed or added is noted `{"kind": "fault", "step": <walkthrough
step>}` (steps.jsonl logs each call's note; its id `fx-<step>-<n>` is only a label), and `fault.json` in the run
folder says what was done, where, and whether it took effect.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from pydantic import PrivateAttr

from agent.measuring.fault_classes import FAULT_DESCRIPTIONS, FAULT_FILE
from agent.measuring.fault_plan import (
    FaultSite,
    apply_after,
    choose_fault,
    last_goto,
    narrower_window,
    other_year,
    read_after,
)
from agent.measuring.scripted import ScriptedPolicy, load_walkthrough, policy_plan, target_name
from graph.model_io.policy import ControlState, TurnState
from graph.plan.values import gate_candidates, values_match
from graph.settings import PlanSource
from tasks.offline.registry import Step

FAULTS_FILE = FAULT_FILE


class FaultyPolicy(ScriptedPolicy):
    """`steps` is the correct walkthrough (what repairs replay); `site` is where the mistake may be made."""

    task_id: str = ""
    seed: int = 0
    site: FaultSite | None = None

    _pending: list[int] = PrivateAttr(default_factory=list)
    _record: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._pending = list(self.site.candidates) if self.site else []
        self._record = {
            "label": "FAULT-INJECTED REPLAY", "task_id": self.task_id, "seed": self.seed,
            "fault": self.site.fault if self.site else None,
            "description": FAULT_DESCRIPTIONS.get(self.site.fault, "") if self.site else "",
            "injected": False, "walkthrough_step": None, "call": None, "detail": "",
            "why_not": "" if self.site else "the walkthrough offers no place for any fault class",
        }

    @classmethod
    def for_task(cls, task_id: str, *, origin: str | None = None, seed: int = 0,
                 only: tuple[str, ...] | None = None, plans: PlanSource = "walkthrough") -> FaultyPolicy:
        """The fault's place is chosen from what the task needs (the walkthrough), whatever plan the policy shows."""
        steps = load_walkthrough(task_id, origin=origin)
        return cls(steps=steps, task_id=task_id, seed=seed, site=choose_fault(steps, task_id, seed, only=only),
                   plan_args=policy_plan(task_id, steps, plans, origin=origin))

    def records(self) -> dict[str, Any]:
        return {FAULTS_FILE: self.fault_record()}

    def fault_record(self) -> dict[str, Any]:
        """What was injected, for the run folder (`fault.json`)."""
        record = dict(self._record)
        if not record["injected"] and not record["why_not"]:
            record["why_not"] = "every candidate place was a no-op at run time (the page already showed the " \
                                "planned value, or one page only)"
        return record

    # -- injection

    def _walkthrough_step(self, state: TurnState) -> tuple[str, Step]:
        while self._pending and self._pending[0] < self._cursor:
            self._pending.pop(0)  # passed (a repair moved the cursor on)
        if self._pending and self._pending[0] == self._cursor and not self._record["injected"]:
            index = self._cursor
            made = self._realise(index, state)
            if made is None:
                self._pending.pop(0)
            else:
                steps, resume, detail = made
                self._pending = []
                self._record.update(injected=True, walkthrough_step=index, call=self._calls, detail=detail)
                self._cursor = resume
                if steps:
                    self._queue = [(self._noted(f"fx-{index}-{n}", {"kind": "fault", "step": index}), s)
                                   for n, s in enumerate(steps)]
                    return self._queue.pop(0)
        return super()._walkthrough_step(state)

    def _realise(self, index: int, state: TurnState) -> tuple[list[Step], int, str] | None:
        """(steps to issue instead, where the walkthrough resumes, what was done), or None for a no-op here."""
        fault = self.site.fault if self.site else ""
        step = copy.deepcopy(self.steps[index])
        args = step["args"]
        rng = random.Random(f"{self.seed}:{self.task_id}:{index}")
        if fault == "kept_default":
            current = _control(state, target_name(args))
            wanted = args["option"] if step["tool"] == "select" else "on" if args.get("checked", True) else "off"
            if current is None or values_match(current["value"], wanted):
                return None
            return [], index + 1, f"skipped {step['tool']} {target_name(args)!r} = {wanted!r}: kept {current['value']!r}"
        if fault == "wrong_option":
            current = _control(state, target_name(args))
            options = [o for o in (current or {}).get("options") or []
                       if o.strip() and not values_match(o, args["option"])]
            if not options:
                return None
            others = [o for o in options if not values_match(o, current["value"])] or options
            wrong = rng.choice(others)
            return [{**step, "args": {**args, "option": wrong}}], index + 1, \
                f"select {target_name(args)!r} = {wrong!r} instead of {args['option']!r}"
        if fault == "navigation_reset":
            goto = last_goto(self.steps, index)
            if goto is None:
                return None
            reset = [step, copy.deepcopy(self.steps[goto]), copy.deepcopy(step)]
            return reset, index + 1, f"after {target_name(args)!r}, opened {self.steps[goto]['args']['url']} " \
                                     "again and submitted it with its defaults"
        if fault == "first_page_only":
            if (state.pages or 0) <= 1:
                return None
            return [{**step, "args": {**args, "all_pages": False}}], index + 1, \
                f"read page 1 of {state.pages} only"
        if fault == "detail_skipped":
            resume = self.site.skip_to[index]
            return [], resume, f"skipped the visit to {target_name(args)!r} (walkthrough steps {index}-{resume - 1})"
        if fault == "wrong_window":
            if step["tool"] == "set_range":
                narrow = narrower_window(args)
                return [{**step, "args": narrow}], index + 1, \
                    f"window {narrow['start']}..{narrow['end']} instead of {args['start']}..{args['end']}"
            url = other_year(args["url"])
            return [{**step, "args": {**args, "url": url}}], index + 1, f"opened {url} instead of {args['url']}"
        if fault == "stale_rows":
            apply = apply_after(self.steps, index)
            early = read_after(self.steps, apply) if apply is not None else []
            if not early:
                return None
            return [step, copy.deepcopy(self.steps[apply]), *copy.deepcopy(early)], index + 1, \
                f"read and kept rows after setting only {target_name(args) or step['tool']!r}"
        return None


def _control(state: TurnState, name: str) -> ControlState | None:
    """The control a walkthrough step names, as the page shows it (key or label, whole words)."""
    controls = state.controls
    found = gate_candidates({"values": controls}, name)
    return controls[found[0][0]] if len(found) == 1 else None
