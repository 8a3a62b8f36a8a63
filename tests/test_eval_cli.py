"""`sgr score` and `sgr review` end to end on the bundled sample tasks and example predictions."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agent.cli import app
from eval.batch import PredictionsError, read_predictions

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "sgrbench_sample"
PREDICTIONS = ROOT / "examples" / "predictions" / "sgrbench_sample.jsonl"
RULES = ROOT / "examples" / "rules" / "sgrbench_sample.yaml"
runner = CliRunner()


def run_score(out: Path, *extra: str):
    args = [
        "score",
        "--tasks",
        str(SAMPLE),
        "--language",
        "en",
        "--predictions",
        str(PREDICTIONS),
        "--out",
        str(out),
        *extra,
    ]
    return runner.invoke(app, args)


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("score")
    result = run_score(out, "--rules", str(RULES))
    assert result.exit_code == 0, result.output
    return out


def test_score_writes_every_task_and_lists_missing_and_unknown(scored_run: Path):
    records = [json.loads(line) for line in (scored_run / "scores.jsonl").read_text().splitlines()]
    assert len(records) == 12  # 6 base tasks x 2 variants, English only
    by_id = {r["task_id"]: r for r in records}
    assert by_id["water_quality_portal_003-g"]["missing_prediction"] is True
    assert by_id["water_quality_portal_003-g"]["score"]["item_f1"] == 0.0
    assert by_id["kegg_brite_004-g"]["score"]["parse_failure"] is True
    assert by_id["arxiv_001-g"]["score"]["exact_match"] is True  # arxiv_id rule strips `arXiv:` and `v2`
    assert by_id["census_gov_006"]["score"]["poa"] == 0.0  # reversed rows
    # kegg_brite_004: one EC number wrong in 4 rows x 3 columns -> 2*11/24, rows 2*3/8
    assert by_id["kegg_brite_004"]["score"]["item_f1"] == pytest.approx(22 / 24)
    assert by_id["kegg_brite_004"]["score"]["row_f1"] == pytest.approx(6 / 8)
    inputs = json.loads((scored_run / "inputs.json").read_text())
    assert inputs["unknown_task_ids"] == ["arxiv_999"]
    assert inputs["missing_predictions"] == ["example-model/water_quality_portal_003-g"]
    summary = json.loads((scored_run / "summary.json").read_text())
    assert summary["overall"]["n_parse_failures"] == 1 and summary["overall"]["n_scored"] == 11
    assert (scored_run / "f1_by_family.png").is_file()


def test_rules_change_the_verdict(tmp_path: Path):
    result = run_score(tmp_path)
    assert result.exit_code == 0, result.output
    by_id = {
        json.loads(line)["task_id"]: json.loads(line)
        for line in (tmp_path / "scores.jsonl").read_text().splitlines()
    }
    assert by_id["arxiv_001-g"]["score"]["exact_match"] is False  # versioned ids without the normalizer
    assert by_id["nvd_005"]["score"]["item_f1"] == pytest.approx(0.5)  # dates differ in form: 2 of 4 fields


def test_bad_predictions_file_names_every_bad_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "answer": "x"}\nnot json\n{"answer": "y"}\n[1]\n')
    with pytest.raises(PredictionsError) as error:
        read_predictions(bad)
    message = str(error.value)
    assert f"{bad}:2: not JSON" in message and f"{bad}:3: field task_id" in message and f"{bad}:4:" in message
    strict = runner.invoke(
        app, ["score", "--tasks", str(SAMPLE), "--predictions", str(bad), "--out", str(tmp_path / "s"), "--strict"]
    )
    assert strict.exit_code == 2 and "bad.jsonl:2" in strict.output and "3 bad line(s) of 4" in strict.output
    assert not (tmp_path / "s").exists()


def test_bad_lines_are_reported_skipped_and_counted(tmp_path: Path):
    lines = PREDICTIONS.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "not json", *lines[1:], '{"answer": "y"}']) + "\n")
    result = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions", str(bad),
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert f"{bad}:2: not JSON" in result.output and "field task_id" in result.output
    assert f"skipped 2 bad line(s) of {len(lines) + 2} in {bad}" in result.output
    assert len((tmp_path / "o" / "scores.jsonl").read_text().splitlines()) == 12
    assert json.loads((tmp_path / "o" / "inputs.json").read_text())["bad_lines"][0] == f"{bad}:2: not JSON: " \
        "Expecting value"


def test_only_predicted_and_filters_score_what_was_asked(tmp_path: Path):
    one = tmp_path / "one.jsonl"
    one.write_text(PREDICTIONS.read_text().splitlines()[0] + "\n")
    task_id = json.loads(one.read_text())["task_id"]
    whole = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions", str(one),
                                "--out", str(tmp_path / "all")])
    assert whole.exit_code == 0, whole.output
    assert "missing predictions: 11 of 12 task(s) have none" in whole.output
    assert "water_quality_portal_003-g" not in whole.output  # counted, listed only on request
    listed = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions", str(one),
                                 "--out", str(tmp_path / "l"), "--list-missing"])
    assert "missing predictions (no answer: scored 0): " in listed.output and "water_quality_portal_003-g" in listed.output
    only = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions", str(one),
                               "--out", str(tmp_path / "only"), "--only-predicted"])
    assert only.exit_code == 0, only.output
    records = [json.loads(x) for x in (tmp_path / "only" / "scores.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in records] == [task_id] and "missing predictions" not in only.output
    picked = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions",
                                 str(PREDICTIONS), "--out", str(tmp_path / "t"), "--task", "nvd_005", "--task",
                                 "nvd_005-g"])
    assert picked.exit_code == 0, picked.output
    assert sorted(json.loads(x)["task_id"] for x in (tmp_path / "t" / "scores.jsonl").read_text().splitlines()) == [
        "nvd_005", "nvd_005-g"]
    assert "unknown task ids (not scored): arxiv_999" in picked.output  # filtered-out ids are not called unknown
    assert "kegg" not in picked.output.split("unknown task ids")[1]


def test_empty_file_warns_and_unwritable_out_is_one_line(tmp_path: Path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions", str(empty),
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and f"warning: {empty} holds no prediction" in result.output
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(app, ["score", "--tasks", str(SAMPLE), "--language", "en", "--predictions",
                                 str(PREDICTIONS), "--out", str(blocker / "sub")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0 and result.output.startswith(f"error: --out {blocker / 'sub'}")


def test_review_init_then_summary(scored_run: Path):
    result = runner.invoke(app, ["review", "init", str(scored_run)])
    assert result.exit_code == 0, result.output
    files = sorted((scored_run / "reviews").glob("*.yaml"))
    # not fully correct: reversed census rows, omitted cfpb row, wrong kegg field, parse failure, NONE, missing;
    # census_gov_006-g is exact under the integer rule, nvd_005 under the date rule
    names = {p.name.removeprefix("example-model__").removesuffix(".yaml") for p in files}
    assert names == {
        "census_gov_006",
        "cfpb_complaint_database_002-g",
        "kegg_brite_004",
        "kegg_brite_004-g",
        "nvd_005-g",
        "water_quality_portal_003-g",
    }
    pending = runner.invoke(app, ["review", "summary", str(scored_run)])
    assert pending.exit_code == 0 and "6 template(s) not filled yet" in pending.output

    kegg = scored_run / "reviews" / "example-model__kegg_brite_004.yaml"
    review = yaml.safe_load(kegg.read_text())
    assert review["context"]["item_f1"] == pytest.approx(22 / 24)
    review.update(
        primary_class="in-page misreading",
        first_root_cause="read the EC number of the row above",
        key_trace_evidence="step 7 observation shows 2.7.1.2 for K12407",
        nearest_other_class="final answer composition error",
        why_not_nearest="the extracted row already held the wrong value before composing",
    )
    kegg.write_text(yaml.safe_dump(review))
    broken = scored_run / "reviews" / "example-model__nvd_005-g.yaml"
    broken.write_text(yaml.safe_dump({**yaml.safe_load(broken.read_text()), "primary_class": "laziness"}))

    summary = runner.invoke(app, ["review", "summary", str(scored_run)])
    assert summary.exit_code == 1  # an invalid review fails the command
    assert "in-page misreading" in summary.output and "100.0" in summary.output
    assert "nvd_005-g.yaml" in summary.output and "primary_class" in summary.output

    again = runner.invoke(app, ["review", "init", str(scored_run)])
    assert "0 template(s) written, 6 existing review(s) kept" in again.output
    assert yaml.safe_load(kegg.read_text())["primary_class"] == "in-page misreading"  # never overwritten


def test_review_init_reads_a_benchmark_run_layout(tmp_path: Path):
    from eval.score import score_answer
    from tasks.spec import OutputSpec

    spec = OutputSpec(columns=("id", "v"))
    for task_id, answer in (("t1", "a|1\nb|2"), ("t2", "b|2\na|1")):
        cell = tmp_path / "cells" / "m1" / "full" / task_id
        cell.mkdir(parents=True)
        score = score_answer(answer, "a|1\nb|2", spec).model_dump(mode="json")
        (cell / "cell.json").write_text(
            json.dumps(
                {
                    "model": "m1",
                    "variant": "full",
                    "task_id": task_id,
                    "split": "constraint",
                    "family": "F",
                    "score": score,
                }
            )
        )
    broken = tmp_path / "cells" / "m1" / "full" / "t3"
    broken.mkdir(parents=True)
    (broken / "cell.json").write_text(
        json.dumps(
            {"model": "m1", "variant": "full", "task_id": "t3", "score": {"error": "GoldParseError: no rows"}}
        )
    )
    result = runner.invoke(app, ["review", "init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (tmp_path / "reviews").glob("*.yaml"))
    assert files == ["m1__full__t2.yaml", "m1__full__t3.yaml"]  # t1 is exact: no review needed
    t2 = yaml.safe_load((tmp_path / "reviews" / "m1__full__t2.yaml").read_text())
    assert t2["context"]["poa"] == 0.0 and t2["context"]["artifacts"].endswith("cells/m1/full/t2")
    assert yaml.safe_load((tmp_path / "reviews" / "m1__full__t3.yaml").read_text())["context"][
        "error"
    ].startswith("Gold")


def test_review_of_an_unscored_folder_is_a_clear_error(tmp_path: Path):
    result = runner.invoke(app, ["review", "init", str(tmp_path)])
    assert result.exit_code == 2 and "scores.jsonl" in result.output
    summary = runner.invoke(app, ["review", "summary", str(tmp_path)])
    assert summary.exit_code == 2 and "sgr review init" in summary.output


def test_review_file_names_stay_plain_distinct_and_short():
    from types import SimpleNamespace

    from eval.review import review_file_name

    def name(system: str, variant: str, task: str) -> str:
        return review_file_name(SimpleNamespace(record=SimpleNamespace(system=system, agent_variant=variant,
                                                                       task_id=task)))

    assert name("m1", "full", "t2") == "m1__full__t2.yaml"  # plain ids unchanged
    odd = [name("m/1", "full", "../../x"), name("m 1", "full", "..-x"), name("..", "", ".hidden"),
           name("m", "full", "t" * 400)]
    for file_name in odd:
        assert "/" not in file_name and not file_name.startswith(".") and len(file_name) < 200
    assert len(set(odd)) == len(odd) and name("m/1", "full", "x") != name("m_1", "full", "x") != name("m-1", "full", "x")
