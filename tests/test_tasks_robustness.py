"""Arbitrary input never crashes the task layer: it yields a task or a problem that names the field."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.loaders import load_tasks
from tasks.output_spec import OutputSpecError, derive_output_spec
from tasks.spec import OutputSpec

SAMPLE = Path(__file__).parent / "data" / "sgrbench_sample"
BASE = json.loads((SAMPLE / "data_en" / "constraint" / "nvd_005.json").read_text(encoding="utf-8"))

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=40))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)
keys = st.sampled_from(
    ["field_separator", "record_separator", "header_row", "schema", "dedup_key", "sorting_or_selection", "none_token"]
)
prose_atoms = st.sampled_from(
    ["<a>", "|", "<b>", "columns", " a|b ", "`", ":", "\n", "no header", "include a header", "output NONE",
     "if none,", "sort by", ";", ",", "records separated by", "semicolons", " ", "{x}", "."]
)
prose = st.one_of(st.text(max_size=200), st.lists(prose_atoms, max_size=25).map("".join))


@settings(max_examples=300, deadline=None)
@given(normalization=st.dictionaries(keys, values, max_size=6), output_format=prose)
def test_derive_output_spec_returns_a_spec_or_names_a_field(normalization: dict, output_format: str) -> None:
    try:
        spec = derive_output_spec(normalization, output_format)
    except OutputSpecError as exc:
        assert exc.field.startswith(("rubric.normalization.", "output_format"))
        return
    assert isinstance(spec, OutputSpec)
    assert spec.width >= 1 and all(spec.columns)
    assert spec.field_separator and spec.record_separator and spec.none_token is not None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=st.dictionaries(
        st.sampled_from(["task_id", "domain", "instruction", "metadata", "rubric", "oracle_answer", "output_format",
                         "all_involved_urls", "oracle_output_cardinality", "extra_key"]),
        values,
        max_size=3,
    ),
    junk=st.lists(st.text(max_size=30), max_size=3),
)
def test_loader_turns_any_line_into_a_task_or_a_problem(tmp_path_factory, changes: dict, junk: list[str]) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    lines = [json.dumps(BASE | changes), *junk]
    path = folder / "tasks.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines), encoding="utf-8")
    result = load_tasks(path, on_error="collect")
    non_blank = [i + 1 for i, line in enumerate(lines) if line.replace("\n", " ").strip()]
    reported = {t.source_line for t in result.tasks} | {p.line for p in result.problems}
    assert reported == set(non_blank)  # every record accounted for: loaded, or named in a problem
    assert all(p.file.endswith("tasks.jsonl") and p.message for p in result.problems)
