"""Task records in both storage forms: nested objects and JSON-encoded strings, extras kept, derived fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tasks.models import SolverView, Task

SAMPLE = Path(__file__).parent / "data" / "sgrbench_sample"


def record(split: str, task_id: str, language: str = "en") -> dict:
    return json.loads((SAMPLE / f"data_{language}" / split / f"{task_id}.json").read_text(encoding="utf-8"))


def hf_record(split: str, task_id: str) -> dict:
    lines = (SAMPLE / f"{split}_hf.jsonl").read_text(encoding="utf-8").splitlines()
    return next(r for r in map(json.loads, lines) if r["task_id"] == task_id)


def test_json_string_and_nested_forms_give_the_same_task() -> None:
    raw_hf = hf_record("goal", "cfpb_complaint_database_002-g")
    assert isinstance(raw_hf["metadata"], str) and isinstance(raw_hf["rubric"], str)
    from_hf = Task.model_validate(raw_hf)
    nested = Task.model_validate(record("goal", "cfpb_complaint_database_002-g"))
    assert from_hf.to_record() == nested.to_record()
    assert from_hf.metadata.gates[0] == "filter: product Mortgage"
    assert from_hf.rubric.normalization.record_separator == ";"


@pytest.mark.parametrize(
    ("split", "task_id"),
    [("goal", "kegg_brite_004-g"), ("constraint", "nvd_005"), ("constraint", "census_gov_006")],
)
def test_record_round_trips_to_the_same_json(split: str, task_id: str) -> None:
    raw = record(split, task_id)
    task = Task.model_validate(raw)
    assert task.to_record() == raw
    again = Task.model_validate(json.loads(json.dumps(task.to_record())))
    assert again.to_record() == raw


def test_unknown_keys_are_kept_at_every_level() -> None:
    task = Task.model_validate(record("goal", "kegg_brite_004-g"))
    assert task.model_extra == {"curation_note": "verified against the KEGG 108.0 htext download"}
    assert task.metadata.model_extra == {"source_version": "KEGG 108.0 (2023-10)"}
    assert task.rubric.model_extra == {"tie_break": "hierarchy order"}
    nvd = Task.model_validate(record("constraint", "nvd_005"))
    assert nvd.metadata.freeze is not None and not isinstance(nvd.metadata.freeze, str)
    assert nvd.metadata.freeze.model_extra == {"note": "severity as of the NVD snapshot"}
    assert nvd.to_record()["metadata"]["freeze"]["note"] == "severity as of the NVD snapshot"


def test_control_dependency_absent_empty_or_present() -> None:
    absent = Task.model_validate(record("goal", "kegg_brite_004-g")).metadata
    empty = Task.model_validate(record("goal", "nvd_005-g")).metadata
    present = Task.model_validate(record("goal", "arxiv_001-g")).metadata
    assert absent.control_dependency is None and "control_dependency" not in absent.model_fields_set
    assert empty.control_dependency == ""
    assert (absent.has_control_dependency, empty.has_control_dependency, present.has_control_dependency) == (
        False,
        False,
        True,
    )
    assert absent.dependency_type == "Data" and present.dependency_type == "Data + Control"


def test_metadata_fields() -> None:
    meta = Task.model_validate(record("constraint", "water_quality_portal_003")).metadata
    assert meta.intra_chain is True and meta.inter_chain is True
    assert meta.freeze is not None and not isinstance(meta.freeze, str)
    assert meta.freeze.historical_window == "activity start date 2021-06-15"
    assert meta.answer_type == "multi-row ordered table"
    assert meta.gates == [
        "scope: site USGS-01646500",
        "filter: sample media Water",
        "time window: 2021-06-15",
        "filter: characteristic names",
        "view: narrow result",
    ]


@pytest.mark.parametrize(
    ("task_id", "base_id", "variant", "family", "ecosystem"),
    [
        ("arxiv_001-g", "arxiv_001", "goal", "Scholarly archives", "ARXIV"),
        ("cfpb_complaint_database_002", "cfpb_complaint_database_002", "constraint", "Regulatory resources", "CFPB"),
        ("kegg_brite_004-g", "kegg_brite_004", "goal", "Life-science resources", "KEGG"),
        ("water_quality_portal_003", "water_quality_portal_003", "constraint", "Environmental monitoring",
         "WATER_QUALITY_PORTAL"),
        ("nvd_005", "nvd_005", "constraint", "Vulnerability records", "NVD"),
        ("census_gov_006-g", "census_gov_006", "goal", "Official statistics", "CENSUS_GOV"),
    ],
)
def test_derived_identity(task_id: str, base_id: str, variant: str, family: str, ecosystem: str) -> None:
    split = "goal" if task_id.endswith("-g") else "constraint"
    task = Task.model_validate(record(split, task_id))
    assert (task.base_id, task.variant, task.family, task.ecosystem) == (base_id, variant, family, ecosystem)
    assert task.language == "en"  # the default until a loader says where the record came from


def test_unknown_domain_is_kept_as_family_other() -> None:
    raw = record("constraint", "nvd_005") | {"domain": "FAA_REGISTRY", "task_id": "faa_001"}
    task = Task.model_validate(raw)
    assert (task.family, task.ecosystem) == ("other", "FAA_REGISTRY")
    assert Task.model_validate(raw | {"domain": "CFPB_REPORTS"}).ecosystem == "CFPB"
    assert Task.model_validate(raw | {"domain": "KEGG_GENOME"}).family == "Life-science resources"


def test_unlisted_domain_may_declare_one_of_the_six_families() -> None:
    raw = record("constraint", "nvd_005") | {"domain": "OFFLINE_VULNDB", "task_id": "offline_vulns_001"}
    raw["metadata"] = raw["metadata"] | {"family": "Vulnerability records"}
    assert Task.model_validate(raw).family == "Vulnerability records"
    assert Task.model_validate(raw | {"family": "life-science resources"}).family == "Vulnerability records"
    del raw["metadata"]["family"]
    assert Task.model_validate(raw | {"family": "life-science resources"}).family == "Life-science resources"
    assert Task.model_validate(raw | {"family": "Adversarial (security tests)"}).family == "other"
    listed = raw | {"domain": "ARXIV", "family": "Vulnerability records"}
    assert Task.model_validate(listed).family == "Scholarly archives"  # the card's mapping wins for its domains


def test_cardinality_as_number_or_text() -> None:
    raw = record("constraint", "nvd_005")
    assert Task.model_validate(raw).expected_rows == 2
    assert Task.model_validate(raw | {"oracle_output_cardinality": "4 rows"}).expected_rows == 4
    assert Task.model_validate(raw | {"oracle_output_cardinality": "varies"}).expected_rows is None


def test_column_notes_match_names_with_spaces_slashes_and_snake_case() -> None:
    wqp = Task.model_validate(record("constraint", "water_quality_portal_003"))
    notes = wqp.rubric.normalization.column_notes(wqp.output_spec.columns)
    assert notes == {
        "result value/unit": "Value and unit separated by one space; 'std units' for pH.",
        "site_id": "Keep the organization prefix, e.g. USGS-.",
    }
    kegg = Task.model_validate(record("goal", "kegg_brite_004-g"))
    assert set(kegg.rubric.normalization.column_notes(kegg.output_spec.columns)) == {
        "KO id",
        "gene name",
        "EC/TC number",
    }


def test_solver_view_never_carries_answer_rubric_metadata_or_cardinality() -> None:
    task = Task.model_validate(record("goal", "arxiv_001-g"))
    view = task.solver_view()
    assert isinstance(view, SolverView)
    assert set(SolverView.model_fields) == {"task_id", "instruction", "output_format", "start_url", "output_spec"}
    dumped = view.model_dump_json()
    assert "Wei Zhang" not in dumped and "inclusion_conditions" not in dumped and "State-Gated" not in dumped
    assert view.start_url == "https://arxiv.org/"
    assert task.solver_view(give_start_url=False).start_url is None
    with pytest.raises(ValidationError):
        SolverView.model_validate(view.model_dump() | {"oracle_answer": "x"})


def test_metadata_string_that_is_not_json_names_the_field() -> None:
    raw = record("constraint", "nvd_005") | {"metadata": "{not json"}
    with pytest.raises(ValidationError) as info:
        Task.model_validate(raw)
    (error,) = info.value.errors()
    assert error["loc"] == ("metadata",)
    assert "not valid JSON" in error["msg"]


def test_rubric_string_must_encode_an_object() -> None:
    with pytest.raises(ValidationError) as info:
        Task.model_validate(record("constraint", "nvd_005") | {"rubric": "[1, 2]"})
    assert info.value.errors()[0]["loc"] == ("rubric",)
    assert "must encode an object" in info.value.errors()[0]["msg"]


def test_normalization_may_itself_be_a_json_string() -> None:
    raw = record("constraint", "nvd_005")
    raw["rubric"]["normalization"] = json.dumps(raw["rubric"]["normalization"])
    task = Task.model_validate(raw)
    assert task.output_spec.columns == ("cve_id", "published_date")


def test_unusual_annotation_forms_are_kept() -> None:
    raw = record("constraint", "nvd_005")
    raw["metadata"]["State-Gated Retrieval"] = ["scope: NVD", {"filter": "CVSS v3 CRITICAL"}]
    raw["metadata"]["freeze"] = {"historical_window": ["2024-01-01", "2024-03-31"]}
    task = Task.model_validate(raw)
    assert task.metadata.gates == ["scope: NVD", '{"filter": "CVSS v3 CRITICAL"}']
    assert task.to_record()["metadata"]["freeze"] == {"historical_window": ["2024-01-01", "2024-03-31"]}
