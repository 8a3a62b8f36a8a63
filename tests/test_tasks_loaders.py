"""Loaders for every source form, filters, placeholder origins, and all-problems-collected error reports."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import tasks.loaders as loaders
from tasks.errors import TaskLoadError, TaskSourceError, display_path
from tasks.loaders import load_tasks
from tasks.offline.registry import PLACEHOLDER_ORIGIN

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "sgrbench_sample"
BAD = DATA / "bad"


def ids(tasks: list) -> list[str]:
    return sorted(f"{t.task_id}@{t.language}" for t in tasks)


# --- source forms --------------------------------------------------------------------------------------


def test_release_folder_loads_both_languages_and_splits() -> None:
    tasks = load_tasks(SAMPLE)
    assert len(tasks) == 16
    assert {t.language for t in tasks} == {"en", "zh"}
    assert sum(t.variant == "goal" for t in tasks) == 8
    zh = [t for t in tasks if t.language == "zh"]
    assert ids(zh) == ["arxiv_001-g@zh", "arxiv_001@zh", "nvd_005-g@zh", "nvd_005@zh"]
    assert zh[0].instruction != next(t for t in tasks if t.task_id == zh[0].task_id and t.language == "en").instruction
    assert all(t.source and t.source.endswith(".json") for t in tasks)


def test_language_folder_and_split_folder() -> None:
    assert len(load_tasks(SAMPLE / "data_en")) == 12
    zh_goal = load_tasks(SAMPLE / "data_zh" / "goal")
    assert ids(zh_goal) == ["arxiv_001-g@zh", "nvd_005-g@zh"]


def test_single_json_file_takes_language_from_its_folder() -> None:
    (task,) = load_tasks(SAMPLE / "data_zh" / "constraint" / "nvd_005.json")
    assert (task.task_id, task.language, task.variant) == ("nvd_005", "zh", "constraint")


def test_json_file_holding_a_list(tmp_path: Path) -> None:
    records = [json.loads(p.read_text()) for p in sorted((SAMPLE / "data_en" / "goal").glob("*.json"))]
    path = tmp_path / "all.json"
    path.write_text(json.dumps(records))
    assert len(load_tasks(path)) == 6


def test_hf_jsonl_equals_the_per_task_files() -> None:
    from_jsonl = load_tasks(SAMPLE / "goal_hf.jsonl")
    from_files = load_tasks(SAMPLE / "data_en" / "goal")
    assert len(from_jsonl) == 6
    by_id = {t.task_id: t.to_record() for t in from_files}
    assert {t.task_id: t.to_record() for t in from_jsonl} == by_id
    shown = display_path(SAMPLE / "goal_hf.jsonl")
    assert [t.source for t in from_jsonl] == [f"{shown}:{n}" for n in range(1, 7)]


def test_folder_with_only_jsonl_splits_prefers_plain_names(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "goal_hf.jsonl", tmp_path / "goal_hf.jsonl")
    shutil.copy(SAMPLE / "constraint_hf.jsonl", tmp_path / "constraint_hf.jsonl")
    tasks = load_tasks(tmp_path)
    assert len(tasks) == 12 and {t.language for t in tasks} == {"en"}
    assert load_tasks(tmp_path, split="constraint")[0].source.endswith("constraint_hf.jsonl:1")  # type: ignore[union-attr]
    one = (SAMPLE / "goal_hf.jsonl").read_text().splitlines()[0]
    (tmp_path / "goal.jsonl").write_text(one + "\n")
    tasks = load_tasks(tmp_path)
    assert ids(tasks) == ["arxiv_001-g@en"]  # goal.jsonl (and no constraint.jsonl) wins over the _hf files


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("no/such/place.jsonl", "not found"),
        (str(DATA / "sgrbench_sample" / "data_en" / "goal" / "missing.json"), "not found"),
    ],
)
def test_missing_source_is_a_clear_error(source: str, message: str) -> None:
    with pytest.raises(TaskSourceError, match=message):
        load_tasks(source)


def test_wrong_suffix_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "tasks.txt").write_text("{}")
    with pytest.raises(TaskSourceError, match=r"\.json or \.jsonl"):
        load_tasks(tmp_path / "tasks.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TaskSourceError, match="no task records in folder .*data_en/goal"):
        load_tasks(empty)


# --- filters -------------------------------------------------------------------------------------------


def test_split_filter() -> None:
    assert {t.variant for t in load_tasks(SAMPLE, split="goal")} == {"goal"}
    assert len(load_tasks(SAMPLE, split="constraint", languages=["en"])) == 6
    with pytest.raises(ValueError, match="split must be"):
        load_tasks(SAMPLE, split="all")  # type: ignore[call-overload]


def test_language_filter_is_case_insensitive() -> None:
    assert {t.language for t in load_tasks(SAMPLE, languages=["ZH"])} == {"zh"}


def test_domain_filter_matches_domain_or_ecosystem() -> None:
    assert ids(load_tasks(SAMPLE, domains=["cfpb"])) == [
        "cfpb_complaint_database_002-g@en",
        "cfpb_complaint_database_002@en",
    ]
    assert len(load_tasks(SAMPLE, domains=["NVD", "KEGG_BRITE"])) == 6


def test_family_filter_accepts_names_and_prefixes() -> None:
    by_name = load_tasks(SAMPLE, families=["Life-science resources"])
    by_prefix = load_tasks(SAMPLE, families=["life"])
    assert ids(by_name) == ids(by_prefix) == ["kegg_brite_004-g@en", "kegg_brite_004@en"]
    assert {t.domain for t in load_tasks(SAMPLE, families=["environmental monitoring", "official"])} == {
        "WATER_QUALITY_PORTAL",
        "CENSUS_GOV",
    }
    with pytest.raises(ValueError, match="unknown source family 'astrology'"):
        load_tasks(SAMPLE, families=["astrology"])


def test_task_id_filter_and_unknown_ids() -> None:
    assert ids(load_tasks(SAMPLE, task_ids=["nvd_005-g"])) == ["nvd_005-g@en", "nvd_005-g@zh"]
    assert ids(load_tasks(SAMPLE, task_ids=["nvd_005-g"], languages=["en"])) == ["nvd_005-g@en"]
    with pytest.raises(TaskSourceError, match="unknown task id.*nvd_999"):
        load_tasks(SAMPLE, task_ids=["nvd_005", "nvd_999"])


def test_filters_combine() -> None:
    tasks = load_tasks(SAMPLE, split="goal", languages=["en"], families=["scholarly"])
    assert ids(tasks) == ["arxiv_001-g@en"]


# --- offline suite, hub, placeholder origin ------------------------------------------------------------


def _offline_record() -> dict:
    raw = json.loads((SAMPLE / "data_en" / "goal" / "nvd_005-g.json").read_text())
    raw.update(
        task_id="vuln_001-g",
        domain="OFFLINE_VULN",
        start_url=f"{PLACEHOLDER_ORIGIN}/vuln/search",
        instruction=f"Open {PLACEHOLDER_ORIGIN}/vuln/search and list the critical CVEs.",
        all_involved_urls=[f"{PLACEHOLDER_ORIGIN}/vuln/search", f"{PLACEHOLDER_ORIGIN}/vuln/detail/1"],
    )
    return raw


def test_offline_source_without_data_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(loaders, "OFFLINE_DATA_DIR", tmp_path / "absent")
    with pytest.raises(TaskSourceError, match="offline suite has no task records yet"):
        load_tasks("offline")


def test_offline_source_resolves_the_placeholder_origin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    goal_dir = tmp_path / "data_en" / "goal"
    goal_dir.mkdir(parents=True)
    (goal_dir / "vuln_001-g.json").write_text(json.dumps(_offline_record()))
    monkeypatch.setattr(loaders, "OFFLINE_DATA_DIR", tmp_path)

    unresolved = load_tasks("offline")[0]
    assert unresolved.start_url == f"{PLACEHOLDER_ORIGIN}/vuln/search"
    assert unresolved.family == "other"

    task = load_tasks("offline", origin="http://127.0.0.1:8765/")[0]
    assert task.start_url == "http://127.0.0.1:8765/vuln/search"
    assert task.instruction == "Open http://127.0.0.1:8765/vuln/search and list the critical CVEs."
    assert task.all_involved_urls == ["http://127.0.0.1:8765/vuln/search", "http://127.0.0.1:8765/vuln/detail/1"]
    assert PLACEHOLDER_ORIGIN not in task.solver_view().model_dump_json()


def test_hub_source_goes_through_the_folder_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    calls: list[dict] = []

    def fake_snapshot_download(**kwargs: object) -> str:
        calls.append(kwargs)
        return str(SAMPLE)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    assert len(load_tasks("hf:")) == 16
    assert len(load_tasks("hf:someone/OTHER@v1.0", languages=["zh"])) == 4
    assert [(c["repo_id"], c["revision"]) for c in calls] == [("Ninggggy/SGR-BENCH", None), ("someone/OTHER", "v1.0")]
    assert all(c["repo_type"] == "dataset" for c in calls)


def test_unreachable_hub_says_how_to_use_local_files(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    def offline(**kwargs: object) -> str:
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(TaskSourceError) as info:
        load_tasks("hf:Ninggggy/SGR-BENCH")
    message = str(info.value)
    assert "could not fetch Hugging Face dataset 'Ninggggy/SGR-BENCH'" in message
    assert "ConnectionError" in message
    assert "--tasks ./sgr-bench" in message and "hf download Ninggggy/SGR-BENCH --repo-type dataset" in message


def test_missing_hf_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(TaskSourceError, match=r"pip install 'sgr-agent\[hf\]'"):
        load_tasks("hf:")


# --- malformed input -----------------------------------------------------------------------------------


def test_bad_jsonl_reports_every_bad_line_with_file_line_and_field() -> None:
    with pytest.raises(TaskLoadError) as info:
        load_tasks(BAD / "broken.jsonl")
    found = {(p.line, p.field, p.task_id) for p in info.value.problems}
    assert found == {
        (2, None, None),  # invalid JSON
        (4, "metadata", "nvd_901"),  # JSON string that is not JSON
        (5, "metadata.intra_chain", "nvd_902"),  # not a boolean
        (6, "instruction", "nvd_903"),  # missing
        (7, None, None),  # not an object
        (8, "rubric.normalization.schema", "nvd_904"),  # no columns anywhere
    }
    assert all(p.file.endswith("broken.jsonl") for p in info.value.problems)
    text = str(info.value)
    assert text.startswith("6 bad task record(s):")
    assert "broken.jsonl:5 [nvd_902] field 'metadata.intra_chain': Input should be a valid boolean" in text
    assert "broken.jsonl:2 invalid JSON: Unterminated string" in text
    assert "broken.jsonl:7 a task record must be a JSON object, got list" in text


def test_collect_returns_good_tasks_and_all_problems() -> None:
    result = load_tasks(BAD / "broken.jsonl", on_error="collect")
    assert [t.task_id for t in result.tasks] == ["nvd_005"]
    assert len(result.problems) == 6


def test_bad_release_folder_problems() -> None:
    result = load_tasks(BAD / "release", on_error="collect")
    assert [t.task_id for t in result.tasks] == ["arxiv_001"]
    by_file = {(Path(p.file).name, p.field): p.message for p in result.problems}
    assert set(by_file) == {
        ("arxiv_001-g.json", None),
        ("arxiv_002.json", "task_id"),
        ("arxiv_003.json", "domain"),
        ("arxiv_003.json", "rubric.normalization.record_separator"),  # reported alongside the missing domain
        ("arxiv_001_copy.json", "task_id"),
    }
    assert by_file[("arxiv_001-g.json", None)].startswith("invalid JSON: Expecting ',' delimiter (line 5")
    assert "goal split but the id makes it a constraint task" in by_file[("arxiv_002.json", "task_id")]
    assert "duplicate task_id for language 'en'" in by_file[("arxiv_001_copy.json", "task_id")]
    assert "arxiv_001.json" in by_file[("arxiv_001_copy.json", "task_id")]


def test_problems_in_a_json_list_name_the_item(tmp_path: Path) -> None:
    good = json.loads((SAMPLE / "data_en" / "constraint" / "nvd_005.json").read_text())
    bad = dict(good, task_id="nvd_006")
    del bad["oracle_answer"]
    path = tmp_path / "two.json"
    path.write_text(json.dumps([good, bad]))
    with pytest.raises(TaskLoadError) as info:
        load_tasks(path)
    (problem,) = info.value.problems
    assert (problem.field, problem.task_id, problem.line) == ("[1].oracle_answer", "nvd_006", None)


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path: Path) -> None:
    raw = json.loads((SAMPLE / "data_en" / "constraint" / "nvd_005.json").read_text())
    raw["instruction"] = "First part\u2028second part\x0cthird part"
    path = tmp_path / "constraint.jsonl"
    path.write_bytes((json.dumps(raw, ensure_ascii=False) + "\r\n").encode("utf-8"))
    (task,) = load_tasks(path)
    assert task.instruction == "First part\u2028second part\x0cthird part"
    assert task.source_line == 1
