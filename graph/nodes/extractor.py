"""Extractor node: `extract_rows` through the deterministic extractor, rows with provenance, into the `answer`
table or a named evidence table. With `url` the node opens the page first (each of several in turn), tracks its
state and reads it in the same call: one step per detail page, its gates judged on the page it read."""

from __future__ import annotations

import asyncio
from typing import Any

from graph.evidence.workspace_tools import extract_into, needs_page_facts
from graph.nodes.deps import Deps
from graph.nodes.pages import PageReply, PageView, add_flags, echo_budget, open_pdf, read_each, read_facts_of
from graph.plan.binding import unbound_notes
from graph.plan.judge import gates_for
from graph.prompting.render import defaults_unnamed
from graph.state import AgentState
from graph.tools.agent_tools import ExtractRows


def make_extractor(deps: Deps, *, provenance: bool = True):
    """`provenance=False` is the ablation: rows keep their values but not the state they were read in."""

    async def extractor(state: AgentState) -> dict[str, Any]:
        pending = state["pending"]
        assert pending is not None
        args = ExtractRows.model_validate(pending["args"])
        urls = args.urls()

        async def read(view: PageView, url: str | None) -> PageReply:
            facts = None
            if url is not None and args.source == "pdf":
                await open_pdf(deps, view, url)
            elif url is not None:
                facts = (await view.open(deps, url)).facts
            elif needs_page_facts(args):
                facts = (await read_facts_of(deps, None)).facts
            # in a worker thread: the model's regexes run there (graph/evidence/model_regex.py), off the event loop
            written = await asyncio.to_thread(
                extract_into, args, view.context(deps, provenance=provenance), schema=deps.spec.columns,
                tables=view.get("tables") or {}, page_facts=facts.model_dump() if facts is not None else None,
                echo_chars=echo_budget(len(urls)))
            kept = defaults_unnamed(view.context(deps, provenance=provenance).plan, view.get("retrieval"),
                                    view.get("history") or [], view.get("tables") or {})
            if kept and written.record is not None:  # stored with the read, said once
                written.record["defaults"] = [k for k, _, _ in kept]
                written.notes.append("note: at their site default, named by no gate of the plan: " + "; ".join(
                    f"{label} = {value!r}" for _, label, value in kept) + " (revise_plan if the task needs another)")
            context = view.context(deps, provenance=provenance)
            said = {g for t in (view.get("tables") or {}).values() for r in t.get("reads") or [] for g in r.get("unbound") or []}
            unbound = unbound_notes(context.plan, gates_for(context.plan, args.into, required=True),
                                    view.get("observation"), said, view.get("retrieval")) if view.get("retrieval") else []
            if unbound and written.record is not None:  # stored with the read, said once
                written.record["unbound"] = [g for g, _ in unbound]
                written.notes.extend(note for _, note in unbound)
            view.tables_written(written.tables)
            add_flags(view, written.flags)
            deps.log.write({"node": "extractor", "step": view.get("step", 0), "into": args.into, "url": url,
                            "rows": len(written.rows) or None, "record": written.record,
                            "provenance": [r["provenance"] for r in written.rows[:3]]})
            return PageReply(written.message, written.notes)

        def failure_notes(view: PageView) -> list[str]:
            """The read's gates judged on the page it failed on: a mismatch is flagged even so."""
            check = view.context(deps, provenance=provenance).check(args.into)
            add_flags(view, check.mismatches)
            return check.notes()

        return await read_each(deps, state, urls, read, tool="extract_rows", error_class="extraction",
                               event={"node": "extractor", "step": state.get("step", 0)},
                               failure_notes=failure_notes)

    return extractor
