"""`sgr ablate` on a real two-variant run, and failure review on a run whose tasks hit their step budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from agent.commands.review import review_app
from agent.reports.review import first_divergence
from agent.rundir.cells import load_records
from agent.runner.bench import run_bench
from tests.test_runner_bench import sgr

pytestmark = pytest.mark.slow


def _config(tmp_path: Path, *, variants: str, limit: int, max_steps: int = 60) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(
        "models: [{name: walkthrough, provider: scripted}]\n"
        "datasets: [{suite: offline}]\n"
        f"protocol: {{budgets: {{max_steps: {max_steps}}}}}\n"
        f"agent: {{variants: {variants}, trace: false}}\n"
        f"run: {{output_dir: '{tmp_path / 'run'}', concurrency: 2, demo_mode: true, demo_limit: {limit}}}\n"
    )
    return path


def test_sgr_ablate_prints_deltas_against_full(tmp_path: Path) -> None:
    config = _config(tmp_path, variants="[{name: full}, {name: no-state-tracker, ablate: [state_tracker]}]", limit=2)
    done = sgr("ablate", str(config))
    assert done.returncode == 0, done.stderr[-3000:]
    records = load_records(tmp_path / "run")
    assert len(records) == 4
    assert {r.variant: r.outcome.ablated for r in records} == {"full": [], "no-state-tracker": ["state_tracker"]}
    assert all("state_tracker" not in r.outcome.nodes_run for r in records if r.variant == "no-state-tracker")

    def mean(variant: str, metric: str) -> float:
        values = [r.metrics[metric] for r in records if r.variant == variant]
        return sum(values) / len(values)

    rows = json.loads((tmp_path / "run" / "ablation.json").read_text())
    overall = next(r for r in rows if r["variant"] == "no-state-tracker" and r["family"] == "all")
    assert overall["delta_item_f1"] == pytest.approx(mean("no-state-tracker", "item_f1") - mean("full", "item_f1"),
                                                     abs=1e-6)
    assert "| walkthrough (scripted replay) | no-state-tracker | state_tracker | 2 |" in done.stdout
    assert "no real model ran" in done.stderr  # said from the rows' `replayed`, not from the table's title
    assert (tmp_path / "run" / "plots" / "ablation_deltas.png").is_file()


async def test_review_init_prefills_trace_evidence(tmp_path: Path) -> None:
    config = _config(tmp_path, variants="[{name: full}]", limit=2, max_steps=3)
    result = await run_bench(config, console=Console(quiet=True))
    records = load_records(result.run_dir)
    unsolved = [r for r in records if not r.metrics["em"]]
    assert unsolved and all(r.outcome.stop_reason == "max_steps" for r in unsolved)

    runner = CliRunner()
    done = runner.invoke(review_app, ["init", str(result.run_dir)])
    assert done.exit_code == 0, done.output
    templates = sorted((result.run_dir / "reviews").glob("*.yaml"))
    assert len(templates) == len(unsolved)
    body = yaml.safe_load(templates[0].read_text())
    assert body["key_trace_evidence"].startswith("[prefilled from the trace; edit] first divergence from the plan:")
    assert "stop reason: max_steps" in body["key_trace_evidence"]
    assert templates[0].read_text().startswith("# Failure review.")

    body.update(primary_class="retrieval dependency not closed", first_root_cause="ran out of steps before paging",
                nearest_other_class="drift", why_not_nearest="the filters held; pages were never read")
    templates[0].write_text(yaml.safe_dump(body))
    summary = runner.invoke(review_app, ["summary", str(result.run_dir)])
    assert summary.exit_code == 0, summary.output
    assert "retrieval dependency not closed" in summary.output and "100.0" in summary.output


def test_first_divergence_finds_a_wrong_and_a_lost_gate() -> None:
    plan = {"gates": [{"kind": "filter", "name": "Year", "target": {"value": "2021"}, "required": True}]}

    def state(step: int, value: str | None, set_at: int | None) -> dict:
        values = {"year": {"value": value, "set_at_step": set_at}} if value else {}
        return {"step": step, "url": f"http://x/{step}", "values": values}

    wrong = {"plan": plan, "visited": [state(1, None, None), state(2, "2020", 2)]}
    assert first_divergence(wrong) == "step 2: gate 'Year' set to '2020', plan says '2021' at http://x/2"
    lost = {"plan": plan, "visited": [state(1, "2021", 1), state(3, None, None)]}
    assert first_divergence(lost) == "step 3: gate 'Year' lost (plan '2021', now '-') at http://x/3"
    fine = {"plan": plan, "visited": [state(1, "2021", 1)]}
    assert first_divergence(fine) == "no divergence from the plan in the visited states"
    assert first_divergence({}) == "no plan recorded (planner ablated or never ran)"
