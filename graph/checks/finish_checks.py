"""Checks before finishing: the rows were read in the planned state, from every page, and fit the schema.

Each failed check becomes a concrete repair goal for the actor ("read page 2 of 2 of /results?..."),
because a vague "something is wrong" sends agents into self-rewriting, the failure class the paper
sees when agents re-answer without new evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph.checks.details import check_details, check_input_details, detail_list, read_pages, stand_ins
from graph.checks.failures import Failure, failure, in_table, render_goal
from graph.checks.result_pages import pages_read
from graph.evidence.evidence_tables import ANSWER, TableRecord, derived_answer, evidence_inputs, read_rows
from graph.plan.judge import (
    STATE_GATES,
    Verdict,
    gate_sets,
    held_under,
    judge,
    phase_names,
    settle,
    with_shapes,
)
from graph.plan.values import values_match
from graph.prompting.page_fence import inline_data, page_repr
from graph.state import EvidenceRow, Listing, OpenedPage, Plan, ReadRecord, VerifierReport


def _steps(rows: list[EvidenceRow]) -> list[int]:
    return sorted({r["provenance"]["step"] for r in rows})


def _drifted(rows: list[EvidenceRow], repair: str, table: str | None = None) -> list[Failure]:
    """The rows read while drift was active, as one `[drift]` failure whose repair is `repair`."""
    drifted = [r for r in rows if r["provenance"]["drift"]]
    if not drifted:
        return []
    flags = sorted({f for r in drifted for f in r["provenance"]["drift"]})
    keys = {f.split(":", 1)[-1] for f in flags}  # the drifted gates' state keys; `labels`: as the page shows them
    return [failure("drift", (f"{len(drifted)} row(s) were read while drift was active ({', '.join(flags)}) at "
                              f"step(s) {_steps(drifted)}: {repair}"), table=table, gates=sorted(keys),
                    labels=sorted({(r["provenance"]["state"] or {}).get(k, {}).get("label") or k
                                   for r in drifted for k in keys}))]


def check_gates(plan: Plan, rows: list[EvidenceRow], notes: list[str],
                shapes: dict[str, dict[str, Any]] | None) -> list[Failure]:
    """The verifier's policy over the judge's verdicts: each required state gate is held on every row's snapshot
    (whoever set it: a default kept is the commonest miss). `shapes` are the controls as the site showed them
    (kind, options: `graph.plan.judge.site_shapes`), so a target is grounded on the snapshot as it was on the page. A
    clamp is accepted and noted; a gate no snapshot grounds, or a target no value of its control answers, is
    noted as unresolved, never refused."""
    failures: list[Failure] = []
    judged_rows = [r for r in rows if r["provenance"]["state"] is not None]
    if not judged_rows:
        return failures
    gates = [g for g in plan.gates if g.required and g.kind in STATE_GATES]
    # gates naming one control are alternatives on each row (graph.plan.judge.settle)
    per_row = [settle([judge(g, with_shapes(r["provenance"]["state"] or {}, shapes or {})) for g in gates])
               for r in judged_rows]
    for index, gate in enumerate(gates):
        wrong: list[tuple[EvidenceRow, Verdict]] = []
        clamped: set[str] = set()
        unresolved: set[str] = set()
        grounded = 0
        for row, judged in zip(judged_rows, per_row, strict=True):
            verdict = judged[index]
            grounded += verdict.grounded
            if verdict.status == "mismatch":
                wrong.append((row, verdict))
            elif verdict.status == "clamped":
                clamped.add(f"{inline_data(verdict.label)} = {page_repr(verdict.value)} ({verdict.evidence})")
            elif verdict.status == "unresolved" and verdict.grounded:
                unresolved.add(verdict.evidence)
        if wrong:
            label, needs = wrong[0][1].label, wrong[0][1].needs_text()
            seen = sorted({v.value for _, v in wrong})
            failures.append(failure("gate", (
                f"{len(wrong)} row(s) were read with {inline_data(label)} = {', '.join(map(page_repr, seen))}, but the "
                f"plan needs {gate.name} = {str(gate.target)!r} (read at step(s) {_steps([r for r, _ in wrong])}): set "
                f"{inline_data(label)} to "
                f"{needs}, discard_rows the wrong ones and extract again"), gates=[gate.name],
                labels=sorted({v.label for _, v in wrong if v.label})))
        if clamped:
            notes.append(f"[gate] clamped, accepted: {gate.name} = {str(gate.target)!r}: {'; '.join(sorted(clamped))}")
        if unresolved:
            notes.append(f"[gate] unresolved: {gate.name}={gate.target}: {'; '.join(sorted(unresolved))} (not checked)")
        elif not grounded:
            notes.append(f"[gate] unresolved: {gate.name}={gate.target} names no control or URL parameter of the "
                         "state any row was read in (not checked)")
    return failures


def check_pages(plan: Plan | None, reads: list[ReadRecord]) -> list[Failure]:
    """Pagination seen but not all pages read -> the rows are incomplete."""
    if plan is not None and not plan.all_pages:
        return []
    covered, total_pages = pages_read(reads)
    complete = {r["result_set"] for r in reads if r.get("complete")}
    failures: list[Failure] = []
    for result_set, pages in total_pages.items():
        if result_set in complete:
            continue
        missing = sorted(set(range(1, pages + 1)) - covered.get(result_set, set()))
        if missing:
            failures.append(failure("pages", (
                f"result set {result_set} has {pages} pages but page(s) {missing} were not read: "
                f"go to page(s) {missing} (or read_table with all_pages=true) and extract_rows there"), pages=missing, result_set=result_set))
    return failures


def check_counts(rows: list[EvidenceRow], reads: list[ReadRecord]) -> list[Failure]:
    """Where the site shows a total for an unfiltered table read, the rows kept must not fall short of it."""
    failures: list[Failure] = []
    totals = {r["result_set"]: r["site_total"] for r in reads if r["site_total"] and not r["filtered"]}
    for result_set, total in totals.items():
        distinct = {tuple(sorted(r["values"].items())) for r in rows if r["provenance"]["result_set"] == result_set}
        if len(distinct) < total:
            failures.append(failure("count", (
                f"the page says {total} results for {result_set} but only {len(distinct)} distinct row(s) were "
                "extracted: read the remaining rows"), result_set=result_set))
    return failures + check_untaken(reads, counted=set(totals))


def check_untaken(reads: list[ReadRecord], counted: set[str] | frozenset[str] = frozenset()) -> list[Failure]:
    """Rows a read could not take (the site counts more than the table held, or the browser cut it at a row cap),
    its set never read whole since: evidence the answer may lack rows, for an answer's table or a derive's input.
    `counted`: the sets whose site total the rows kept are already compared with."""
    failures: list[Failure] = []
    complete = {r["result_set"] for r in reads if not r.get("untaken") and r["complete"]}
    for read in reads:  # a read whose table held fewer rows than the site counts, filtered or not, never read whole
        if read.get("untaken") and read["result_set"] not in complete and read["result_set"] not in counted:
            failures.append(failure("count", (
                f"the read at step {read['step']} took its rows from a table holding {read['untaken']} fewer than "
                f"the site's {read['site_total']} for {read['result_set']}: read_table with all_pages=true (all "
                "rows) and extract_rows again"), result_set=read["result_set"]))
    for read in reads:  # a read the browser cut at a row cap, its set never read again uncut
        if read.get("truncated") and not _read_whole_later(read, reads):
            failures.append(failure("count", (
                f"the read at step {read['step']} took {read['rows']} row(s) from a table cut at a row cap (it held "
                f"more) for {read['result_set']}: read_table with a larger max_rows (or narrower filters) and "
                "extract_rows again"), result_set=read["result_set"]))
    return failures


def _read_whole_later(cut: ReadRecord, reads: list[ReadRecord]) -> bool:
    """A later read of the same result set that nothing cut, covering the cut read's pages (or the whole set)."""
    return any(r["step"] >= cut["step"] and r is not cut and r["result_set"] == cut["result_set"]
               and not r.get("truncated") and not r.get("untaken")
               and (r["complete"] or set(cut["pages_covered"]) <= set(r["pages_covered"])) for r in reads)


def check_criteria(plan: Plan | None, rows: list[EvidenceRow], notes: list[str]) -> None:
    """Rows whose cell differs from a row criterion the planner wrote blind, in its own words: a note, not a
    refusal (the words are compared, not a value the page bound; issue 37: refuse only on evidence)."""
    for column, wanted in (plan.row_criteria if plan is not None else {}).items():
        bad = [r for r in rows if column in r["values"] and not values_match(r["values"][column], wanted)]
        if bad:
            notes.append(f"[criteria] {len(bad)} row(s) have {column} other than {wanted!r} (e.g. "
                         f"{page_repr(bad[0]['values'][column])}): discard_rows them if the task excludes them")


def check_schema(columns: tuple[str, ...], rows: list[EvidenceRow], extracted: bool) -> list[Failure]:
    if not extracted:
        return [failure("schema", "no extract_rows was run: read the answer rows before finishing",
                        code="nothing_extracted")]
    empty = [r for r in rows if any(not r["values"].get(c) for c in columns)]
    if empty:
        cols = sorted({c for r in empty for c in columns if not r["values"].get(c)})
        return [failure("schema", (
            f"{len(empty)} row(s) have empty column(s) {cols}: fix the column mapping of extract_rows "
            "(discard_rows the incomplete rows first)"), code="empty_columns")]
    return []


@dataclass
class TableCheck:
    """One evidence table as the verifier judges it. The extracted `answer` is one too, with three choices of its
    own (kept from when it was a store apart): its failures name no table and say "extract again"; an empty
    read's row is judged on its state only when nothing else was read, and never for drift; and only the reads
    of a result set it still holds rows of (or of 0 rows) speak for it."""

    name: str
    table: TableRecord
    answer: bool

    @property
    def rows(self) -> list[EvidenceRow]:
        if not self.answer:
            return self.table["rows"]
        read = read_rows(self.table)
        return read or [r for r in self.table["rows"] if r["provenance"]["state"] is not None]

    @property
    def reads(self) -> list[ReadRecord]:
        if not self.answer:
            return self.table["reads"]
        kept_sets = {r["provenance"]["result_set"] for r in read_rows(self.table)}
        return [r for r in self.table["reads"] if r["result_set"] in kept_sets or r["rows"] == 0]

    def drift(self) -> list[Failure]:
        if self.answer:
            return _drifted(read_rows(self.table), "restore the gates, discard_rows read in the drifted state, and "
                            "extract them again")
        return _drifted(self.rows, f"restore the gates, discard_rows (table={self.name!r}) those rows, read them "
                        "again and derive again", table=self.name)

    def gates(self, plan: Plan | None, notes: list[str], shapes: dict[str, dict[str, Any]] | None) -> list[Failure]:
        """The table read in its phase's state (unphased, or the answer: the plan's), its empty reads included."""
        if plan is None:
            return []
        if self.answer:
            return check_gates(plan, self.rows, notes, shapes)
        # a table several phases write: each row judged under the phase whose gates its snapshot holds (else the
        # nearest), and a refusal names that phase
        name, options = self.name, gate_sets(plan, self.name)
        if plan.phases and options[0][0] is None:
            return []
        rows = [r for r in self.rows if r["provenance"]["state"]]
        groups: dict[int, list[EvidenceRow]] = {}
        for row in rows:
            groups.setdefault(held_under(options, row["provenance"]["state"] or {}, shapes or {}), []).append(row)
        failures: list[Failure] = []
        for index, group in sorted(groups.items()) if len(options) > 1 else [(0, rows)]:
            phase, gates = options[index]
            which = (f" ({phase_names(plan, [phase])}, the nearest of {phase_names(plan, [p for p, _ in options])})"
                     if len(options) > 1 else "")
            table_notes: list[str] = []
            failures += [in_table(f, name, f" (discard_rows with table={name!r}, read again, derive again)",
                                  qualifier=which)
                         for f in check_gates(Plan(gates=gates), group, table_notes, shapes)]
            said = [note.replace("[gate] ", f"[gate] table {name}: ", 1) for note in table_notes]
            notes += [note for note in said if note not in notes]
        return failures

    def untaken(self) -> list[Failure]:
        """A derive's input: rows its reads could not take (the answer's own table: `check_counts`)."""
        return [in_table(f, self.name, f" (into {self.name!r}, then derive again)") for f in check_untaken(self.reads)]

    def pages(self, plan: Plan | None) -> list[Failure]:
        failures = check_pages(plan, self.reads)
        if self.answer:
            return failures
        return [in_table(f, self.name, f" (into {self.name!r})") for f in failures]


def verify(*, plan: Plan | None, columns: tuple[str, ...], tables: dict[str, TableRecord], step: int,
           listings: list[Listing] | None = None, opened: list[OpenedPage] | None = None,
           shapes: dict[str, dict[str, Any]] | None = None, skipped: dict[str, str] | None = None) -> VerifierReport:
    """The one verifier, over evidence tables: a derived answer stands on its lineage and every table a phase of
    the plan read (`evidence_tables`), an extracted one on the `answer` table. Each evidence table is checked
    the same way (no drift, its gates held, every page read), then the detail pages the plan needs, and the
    answer's own rows; each failure becomes a repair goal."""
    listings = listings or []
    notes: list[str] = []
    derived = derived_answer(tables)
    if derived is not None:
        names = evidence_tables(plan, tables)
        failures = _derived_rows(derived, tables, evidence_inputs(tables), notes)
        failures += check_unread_phases(plan, tables, listings, notes)
    else:
        names = [ANSWER] if ANSWER in tables else []
        failures = _extracted_rows(columns, tables.get(ANSWER))
    evidence = [TableCheck(name, tables[name], answer=derived is None) for name in names]
    failures += [f for e in evidence for f in e.drift()]
    failures += [f for e in evidence for f in e.gates(plan, notes, shapes)]
    failures += [f for e in evidence for f in e.pages(plan)]
    if derived is not None:  # a listed page counts once read into the table standing for its phase
        failures += check_input_details(plan, tables, names, listings, opened, skipped, notes, lineage=names)
        failures += [f for e in evidence for f in e.untaken()]
        return _report(step, failures, notes)
    failures += check_details(plan, listings, opened or [], skipped, notes, tables)  # the answer's own: opened or read
    if evidence:
        failures += check_counts(read_rows(evidence[0].table), evidence[0].reads)
        check_criteria(plan, read_rows(evidence[0].table), notes)
    return _report(step, failures, notes)


def _extracted_rows(columns: tuple[str, ...], answer: TableRecord | None) -> list[Failure]:
    """The answer extract_rows collected: it was read, each row has every column, and not all of it discarded
    with nothing read again (a read of 0 rows is the answer's evidence too: NONE)."""
    rows = read_rows(answer)
    failures = check_schema(columns, rows, extracted=answer is not None)
    if answer is not None and not rows and not TableCheck(ANSWER, answer, answer=True).reads:
        failures.append(failure("schema", (
            "every row read was discarded and nothing was read again: restore the state and extract_rows again "
            "(a page with no results is read too: extract_rows there records 0 rows)"), code="all_discarded"))
    return failures


def _derived_rows(answer: TableRecord, tables: dict[str, TableRecord], inputs: list[str],
                  notes: list[str]) -> list[Failure]:
    """A derived answer has rows (or an input holds a read of 0 rows: NONE), none of them all empty."""
    failures: list[Failure] = []
    read_none = [n for n in inputs if any(r.get("empty") for r in tables[n]["rows"])]
    if not answer["rows"] and not read_none:
        failures.append(failure("schema", (
            f"the derived answer has no rows: check the inputs ({answer['inputs']}) and the SQL"), code="no_rows"))
    elif not answer["rows"]:
        notes.append(f"the derived answer has no rows (NONE): {read_none} hold reads of 0 rows")
    blank = [r for r in answer["rows"] if all(r.get(c) in (None, "") for c in answer["columns"])]
    if blank:
        failures.append(failure("schema", (
            f"{len(blank)} answer row(s) have every column empty (an empty read's row? those have _empty true: "
            "filter them out in the SQL, then derive again)"), code="blank_rows"))
    return failures


def _report(step: int, failures: list[Failure], notes: list[str]) -> VerifierReport:
    goal = render_goal(failures)
    report = VerifierReport(step=step, ok=not failures, failures=failures, repair_goal=goal)
    if notes:
        report["notes"] = notes
    return report


def evidence_tables(plan: Plan | None, tables: dict[str, Any]) -> list[str]:
    """What a derived answer stands on: its lineage, and every table a phase of the plan read. A phase's table
    is evidence even when the SQL never reads it: its list decides which items the later phases visit, so
    a page of it left unread (or read in another state) loses items the answer never hears of."""
    names = evidence_inputs(tables)
    for phase in plan.phases if plan is not None else []:
        table = tables.get(phase.into)
        if table is not None and not table["derived"] and phase.into not in names:
            names.append(phase.into)
    return names


def _every_listed_result_read(tables: dict[str, Any], listings: list[Listing]) -> bool:
    """Each row of the list the agent went through was read on (its page or a page under it), into some table: a
    detail phase never read then misses no result (a played plan marked its list phase as reading each result's
    page, and its answer, read from every result under the next phase's name, was refused)."""
    read = read_pages(tables)
    links = detail_list(listings, read)
    return bool(links) and all(link in read for link in links)


def check_unread_phases(plan: Plan | None, tables: dict[str, Any], listings: list[Listing],
                        notes: list[str]) -> list[Failure]:
    """A phase of the plan whose table was never read (not even a read of 0 rows): the answer was computed
    without one of the reads the plan says it needs, which no check of the tables that exist can see. A phase
    that reads each listed result's page is read when the answer's tables were read on those pages under other
    names (graph/checks/details.stand_ins): the detail check then applies to them.

    The planner names its tables blind: when the answer's lineage reads at least as many tables that no phase
    names as there are phases still without a table, those are taken as the phases' reads under the model's own
    names and the gap is noted (revise_plan to name them), not refused. A phase that reads a list, not each listed
    result's page, is noted too: nothing shows the answer lacks rows it would hold (a played run was refused for a
    phase whose columns another read already held); a detail phase never read is listed results never opened,
    unless every listed result was read under another phase (`_every_listed_result_read`: then a note)."""
    phases = plan.phases if plan is not None else []
    for p in phases:
        if not p.detail_pages and p.into not in tables:
            notes.append(f"[schema] the plan's phase {p.read!r} reads into {p.into!r}, which was never read (noted: "
                         "the answer stands on the tables read; revise_plan if it needs none)")
    missing = [p for p in phases if p.detail_pages and p.into not in tables
               and not stand_ins(plan, p, tables, listings)]
    if missing and _every_listed_result_read(tables, listings):  # no result unopened: nothing of the kind missing
        notes += [f"[schema] the plan's phase {p.read!r} reads into {p.into!r}, which was never read; every listed "
                  "result was read under another phase (noted: revise_plan if the answer needs none)" for p in missing]
        return []
    named = {p.into for p in plan.phases} if plan is not None else set()
    unnamed = [n for n in evidence_inputs(tables) if n not in named]
    if missing and len(unnamed) >= len(missing):
        notes += [f"[schema] the plan's phase {p.read!r} reads into {p.into!r}, which was never read; the answer "
                  f"reads tables no phase names ({', '.join(unnamed)}): revise_plan to name the phase's table"
                  for p in missing]
        return []
    return [failure("schema", (
        f"the plan's phase {p.read!r} reads into {p.into!r}, but nothing was read into {p.into!r}: "
        f"extract_rows (into={p.into!r}) where the plan says (a read of 0 rows counts), then derive again; "
        "or revise_plan if the answer does not need that phase"), code="unread_phase") for p in missing]
