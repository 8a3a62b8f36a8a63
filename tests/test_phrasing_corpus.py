"""The phrasing corpus (issue 37): many spellings of each target kind, as a planner might write them, against several
site conventions, counted as held / mismatch / unbound (unresolved or rejected at plan time).

A spelling is what the planner sends as a gate's `target`. Free text ('2018-2021', 'since 2018', 'all dates') is no
target: the Plan schema refuses it and the planner fixes it from the tool's error, so it can never pass silently. A
typed spelling is judged on each site convention's page states, and the verdict is compared with the truth computed
here by date and option arithmetic, independently of the judge: a narrower or wider window is never held, a wrong
option never held, and every gate gets a verdict (held, mismatch, or unresolved with its reason)."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest
from pydantic import ValidationError

from graph.plan.judge import judge
from graph.state import Gate

# ---------------------------------------------------------------- the spellings

# (what the planner sends as the target, the window it means: (first day, last day), None for an open end)
WINDOW_SPELLINGS = [
    ("2018-2021", "rejected"), ("since 2018", "rejected"), ("Jan 2018..Dec 2021", "rejected"),
    ("all dates", "rejected"), ("2018..2021", "rejected"), ({"value": "2018..2021"}, "rejected"),
    ({"from": "Jan 2018", "to": "Dec 2021"}, "rejected"), ({"from": "2018/01/01", "to": "2021"}, "rejected"),
    ({"from": "2021", "to": "2018"}, "rejected"), ({"from": "2018"}, "rejected"),
    ({"from": "2018-02-30", "to": "2021"}, "rejected"),
    ({"from": "2018", "to": "2021"}, (date(2018, 1, 1), date(2021, 12, 31))),
    ({"from": "2018-01-01", "to": "2021-12-31"}, (date(2018, 1, 1), date(2021, 12, 31))),
    ({"from": "2018-01", "to": "2021-12"}, (date(2018, 1, 1), date(2021, 12, 31))),
    ({"from": "2018", "to": None}, (date(2018, 1, 1), None)),
    ({"from": None, "to": "2021"}, (None, date(2021, 12, 31))),
    ({"from": None, "to": None}, (None, None)),
    ({"from": "2022", "to": "2022"}, (date(2022, 1, 1), date(2022, 12, 31))),
    ({"from": "2019-07-01", "to": "2020-06-30"}, (date(2019, 7, 1), date(2020, 6, 30))),
]
CAUSES = ["All causes", "Diabetes mellitus (E10-E14)", "Diabetes insipidus (E23.2)", "Asthma (J45)"]
# (the target, the option it means, or None when it names none)
VALUE_SPELLINGS = [
    ("Diabetes mellitus", "rejected"), ({"value": ""}, "rejected"), ({"values": ["Asthma"]}, "rejected"),
    ({"value": "Diabetes mellitus (E10-E14)"}, CAUSES[1]), ({"value": "diabetes mellitus (e10-e14)"}, CAUSES[1]),
    ({"value": "Diabetes mellitus"}, CAUSES[1]), ({"value": "DIABETES MELLITUS."}, CAUSES[1]),
    ({"value": "E10-E14"}, CAUSES[1]), ({"value": "e10-e14"}, CAUSES[1]), ({"value": "Asthma"}, CAUSES[3]),
    ({"value": "J45"}, CAUSES[3]), ({"value": "Diabetes"}, None), ({"value": "Gout"}, None),
    ({"any_of": ["Asthma", "E10-E14"]}, (CAUSES[3], CAUSES[1])), ({"any_of": ["Asthma"]}, "rejected"),
    ({"unknown": "the cause the task implies"}, None),
]
BOX_SPELLINGS = [("ticked", "rejected"), ({"value": "yes"}, "value on a box"), ({"checked": True}, "on"),
                 ({"checked": False}, "off"), ({"checked": "maybe"}, "rejected")]


def _gate(kind: str, name: str, target) -> Gate | None:
    try:
        return Gate.model_validate({"kind": kind, "name": name, "target": target})
    except ValidationError:
        return None


# ---------------------------------------------------------------- the site conventions


def _value(value: str, label: str, **more) -> dict:
    return {"value": value, "label": label, "set_at_step": more.pop("set_at_step", 3), **more}


YEARS = [str(y) for y in range(2010, 2025)]


def _day(text: str, *, end: bool) -> date | None:
    if not text:
        return None
    parts = [int(p) for p in text.split("-")]
    if len(parts) == 1:
        return date(parts[0], 12, 31) if end else date(parts[0], 1, 1)
    if len(parts) == 2:
        return date(parts[0], parts[1], 28 if end else 1) if end and parts[1] == 2 else \
            date(parts[0], parts[1], 30 if end and parts[1] in (4, 6, 9, 11) else 31 if end else 1)
    return date(*parts)


def window_pages() -> list[tuple[str, dict, tuple[date | None, date | None], str]]:
    """(convention, state, the window the page applies, who set it) over several conventions."""
    pages = []
    for start, end in [("2018-01-01", "2021-12-31"), ("2018-01-01", "2020-12-31"), ("2017-01-01", "2021-12-31"),
                       ("2018-01-01", ""), ("", ""), ("2022-01-01", "2022-12-31"), ("2019-07-01", "2020-06-30"),
                       ("2010-01-01", "2024-12-31"), ("", "2021-12-31")]:
        pages.append(("From/To date pair", {"values": {
            "date_from": _value(start, "Date from", kind="date"), "date_to": _value(end, "Date to", kind="date")}},
                      (_day(start, end=False), _day(end, end=True)), "agent"))
        if start and end:
            pages.append(("URL parameters", {"values": {
                "start_date": _value(start, "start_date", evidence=["url"]),
                "end_date": _value(end, "end_date", evidence=["url"])}}, (_day(start, end=False), _day(end, end=True)),
                "agent"))
    start, end = "2022-01-01", "2024-12-31"  # a site's default window, kept (the commonest scope drift)
    pages.append(("From/To date pair, the site's default", {"values": {
        "date_from": _value(start, "Date from", kind="date", set_at_step=None),
        "date_to": _value(end, "Date to", kind="date", set_at_step=None)}},
                  (_day(start, end=False), _day(end, end=True)), "site"))
    for start, end in [("2018", "2021"), ("2018", "2024"), ("2010", "2021"), ("2019", "2021"), ("2022", "2022")]:
        pages.append(("From/To year selects", {"values": {
            "from_year": _value(start, "From year", kind="select", options=YEARS),
            "to_year": _value(end, "To year", kind="select", options=YEARS)}},
                      (_day(start, end=False), _day(end, end=True)), "agent"))
    for year in ("2018", "2021", "2022"):
        pages.append(("single year control", {"values": {"year": _value(year, "Year", kind="select", options=YEARS)}},
                      (_day(year, end=False), _day(year, end=True)), "agent"))
    return pages


def _relation(want: tuple[date | None, date | None], page: tuple[date | None, date | None], first: date,
              last: date) -> str:
    """The page's window against the plan's, on the records' span [first, last]: equal, narrower, wider, or both."""
    w = (want[0] or first, want[1] or last)
    p = (page[0] or first, page[1] or last)
    narrower = p[0] > w[0] or p[1] < w[1]
    wider = p[0] < w[0] or p[1] > w[1]
    return "both" if narrower and wider else "narrower" if narrower else "wider" if wider else "equal"


# ---------------------------------------------------------------- the count


def test_the_phrasing_corpus_never_holds_a_wrong_window_or_option_and_never_passes_silently():
    counts: Counter[tuple[str, str]] = Counter()
    # windows: the records span what the controls offer (a year select's 2010..2024)
    for spelling, meant in WINDOW_SPELLINGS:
        gate = _gate("window", "Date", spelling)
        if meant == "rejected":
            assert gate is None, spelling
            counts["window", "rejected at plan time"] += 1
            continue
        assert gate is not None, spelling
        for convention, state, page, who in window_pages():
            name = "Year" if "year" in convention else "Date"
            verdict = judge(gate.model_copy(update={"name": name}), state)
            assert verdict.status in ("held", "mismatch", "unresolved"), verdict
            relation = _relation(meant, page, date(2010, 1, 1), date(2024, 12, 31))
            if verdict.status == "held":  # never a narrower or wider window
                assert relation == "equal", (spelling, convention, page, verdict)
            if relation != "equal" and verdict.status == "unresolved":
                assert verdict.evidence, (spelling, convention, verdict)  # said, with its reason
            if relation == "equal" and None not in meant:
                assert verdict.status == "held", (spelling, convention, page, verdict)
            if who == "site" and spelling == {"from": None, "to": None}:
                assert verdict.status == "mismatch", verdict  # all dates under a default window kept: narrower
            counts["window", verdict.status] += 1
            counts["window " + relation, verdict.status] += 1
    # values: a select whose labels are not its values ('Label [code]'), a URL parameter, a free-text field
    for spelling, meant in VALUE_SPELLINGS:
        gate = _gate("filter", "Cause", spelling)
        if meant == "rejected":
            assert gate is None, spelling
            counts["value", "rejected at plan time"] += 1
            continue
        assert gate is not None, spelling
        meant_options = meant if isinstance(meant, tuple) else (meant,) if meant else ()
        for option in CAUSES:
            code = option.rsplit("(", 1)[-1].rstrip(")") if "(" in option else "all"
            for convention, held in (
                    ("select, labels != values", _value(f"{option} [{code}]", "Cause of death", kind="select",
                                                        options=CAUSES)),
                    ("URL parameter", _value(code, "cause", evidence=["url"]))):
                verdict = judge(gate, {"values": {"cause": held}})
                assert verdict.status in ("held", "mismatch", "unresolved"), verdict
                if verdict.status == "held":
                    assert option in meant_options, (spelling, convention, option, verdict)
                elif verdict.status == "unresolved":
                    assert verdict.evidence, verdict
                if option in meant_options and convention.startswith("select"):
                    assert verdict.status == "held", (spelling, option, verdict)
                counts["value", verdict.status] += 1
    for spelling, meant in BOX_SPELLINGS:
        gate = _gate("filter", "Include synonyms", spelling)
        if meant == "rejected":
            assert gate is None, spelling
            counts["checkbox", "rejected at plan time"] += 1
            continue
        for on in ("on", "off"):
            verdict = judge(gate, {"values": {"syn": _value(on, "Include synonyms", kind="checkbox")}})
            expected = "unresolved" if meant == "value on a box" else "held" if on == meant else "mismatch"
            assert verdict.status == expected, (spelling, on, verdict)
            counts["checkbox", verdict.status] += 1
    table = "\n".join(f"{kind:26} {status:22} {n}" for (kind, status), n in sorted(counts.items()))
    print("\nPHRASING CORPUS\n" + table)
    # every spelling was counted somewhere, and the corpus exercises every outcome
    assert counts["window narrower", "held"] == counts["window wider", "held"] == counts["window both", "held"] == 0
    assert counts["window", "held"] and counts["window", "mismatch"] and counts["window", "rejected at plan time"]
    assert counts["value", "held"] and counts["value", "mismatch"] and counts["value", "unresolved"]


@pytest.mark.parametrize("spelling", ["2018-2021", "since 2018", {"from": "Jan 2018", "to": "Dec 2021"}])
def test_a_free_text_window_is_a_validation_error_that_says_how_to_write_it(spelling):
    from graph.tools.tool_schemas import ToolCallError, parse_plan

    with pytest.raises(ToolCallError) as error:
        parse_plan({"gates": [{"kind": "window", "name": "Date", "target": spelling}]})
    assert "from" in str(error.value) and ("ISO" in str(error.value) or "{from, to}" in str(error.value))
