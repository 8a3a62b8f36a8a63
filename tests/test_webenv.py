"""Released tasks on SGR-WebEnv, proven with stand-ins: the offline sites on loopback act as the
"environment" of made-up live origins (https://arxiv.example -> the scholar site), the scripted model
walks the task on the live name, and tasks on unmapped sites are skipped with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agent.cli import app
from agent.config import ConfigError, DatasetConfig, load_config
from agent.webenv.environments import check_site, plan_tasks
from agent.webenv.mapping import mapped_sites, parse_pairs
from agent.webenv.sites import SITES
from tasks.loaders import load_tasks
from tasks.offline.registry import PLACEHOLDER_ORIGIN

OFFLINE_RECORDS = Path(__file__).resolve().parents[1] / "tasks" / "offline" / "data" / "constraint.jsonl"
LIVE_NAMES = {  # offline task -> the made-up live origin its records are rewritten to
    "offline_scholar_001": "https://arxiv.example",
    "offline_regulatory_001": "https://regs.example",
    "offline_water_001": "https://water.unmapped.example",
}


def live_records(folder: Path) -> Path:
    """The offline records as a "released" file whose start URLs are live names, not the local server."""
    path = folder / "live.jsonl"
    lines = []
    for line in OFFLINE_RECORDS.read_text(encoding="utf-8").splitlines():
        task_id = json.loads(line)["task_id"]
        if task_id in LIVE_NAMES:
            lines.append(line.replace(PLACEHOLDER_ORIGIN, LIVE_NAMES[task_id]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_catalogue_sites_expand_to_their_live_hosts():
    sites = {s.name: s for s in mapped_sites({"arxiv": "http://127.0.0.1:8083", "census": "http://127.0.0.1:8081/"})}
    assert sites["arxiv"].live_origins == ("https://arxiv.org", "https://export.arxiv.org", "https://info.arxiv.org",
                                           "http://arxiv.org", "http://export.arxiv.org", "http://info.arxiv.org")
    assert sites["arxiv"].routes.to_environment("https://export.arxiv.org/api/query?q=1") == \
        "http://127.0.0.1:8083/api/query?q=1"
    assert sites["census"].serves("https://data.census.gov/table?q=B28002")
    assert not sites["census"].serves("https://www2.census.gov/") and not sites["arxiv"].serves("https://www.arxiv.org/")
    assert sites["census"].start_command == "python3 tools/env.py start census --release v0.1.3 --mode preview"
    assert [s.preview_port for s in SITES.values()] == [8080, 8081, 8082, 8083, 8084, 8086]
    assert parse_pairs(["https://arxiv.example=http://127.0.0.1:9"]) == {"https://arxiv.example": "http://127.0.0.1:9"}


def test_bad_webenv_entries_are_named(tmp_path: Path):
    with pytest.raises(ValueError, match="webenv.arxive: neither an SGR-WebEnv environment"):
        DatasetConfig(suite="sgrbench", source="x", webenv={"arxive": "http://127.0.0.1:8083"})
    with pytest.raises(ValueError, match="mapped to both"):
        mapped_sites({"arxiv": "http://127.0.0.1:8083", "https://arxiv.org": "http://127.0.0.1:9000"})
    with pytest.raises(ValueError, match="expected SITE=ORIGIN"):
        parse_pairs(["arxiv:http://127.0.0.1:8083"])
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"models": [{"name": "m"}], "datasets": [
        {"suite": "sgrbench", "source": "x", "webenv": {"wonder": "127.0.0.1:8082"}}]}))
    with pytest.raises(ConfigError, match=r"datasets\.0\.webenv.*wonder.*not an http\(s\) origin"):
        load_config(config)


def test_health_check_reads_the_release_and_reports_a_dead_port(standin_environment):
    up = check_site(mapped_sites({"wateroffice": standin_environment.origin})[0])
    assert up.up and up.http_status == 200 and up.version == {"release": "standin-2026.11"}
    down = check_site(mapped_sites({"noaa": "http://127.0.0.1:9"})[0])
    assert not down.up and "Connect" in down.error


def test_plan_skips_unmapped_and_down_sites(tmp_path: Path, standin_environment):
    source = live_records(tmp_path)
    tasks = load_tasks(source)
    dataset = DatasetConfig(suite="sgrbench", source=str(source), webenv={
        "https://arxiv.example": standin_environment.origin, "https://regs.example": "http://127.0.0.1:9"})
    statuses = [check_site(site) for site in mapped_sites(dataset.webenv)]
    plan = plan_tasks(tasks, [dataset], {}, statuses)
    assert [t.task_id for t in plan.runnable] == ["offline_scholar_001"]
    reasons = {s.task_id: s.reason for s in plan.skipped}
    assert "does not answer" in reasons["offline_regulatory_001"]
    assert reasons["offline_water_001"] == ("no SGR-WebEnv environment is mapped for https://water.unmapped.example "
                                            "(domain OFFLINE_WATER)")
    assert plan.routes_for(plan.runnable[0]).pairs == {"https://arxiv.example": standin_environment.origin}
    entry = plan.manifest_entry()
    assert entry["tasks_run"] == ["offline_scholar_001"] and len(entry["tasks_skipped"]) == 2


def test_webenv_check_command(tmp_path: Path, standin_environment):
    config = tmp_path / "webenv.yaml"
    config.write_text(yaml.safe_dump({"models": [{"name": "m"}], "datasets": [{
        "suite": "sgrbench", "source": str(live_records(tmp_path)), "splits": ["constraint"],
        "webenv": {"wateroffice": standin_environment.origin, "arxiv": "http://127.0.0.1:9",
                   "https://arxiv.example": standin_environment.origin}}]}))
    result = CliRunner().invoke(app, ["webenv", "check", str(config)])
    assert result.exit_code == 1, result.output  # one environment is down
    out = result.output
    assert f"wateroffice    {standin_environment.origin}  UP    HTTP 200" in out and "release standin-2026.11" in out
    assert "arxiv          http://127.0.0.1:9  DOWN" in out
    assert "start:        python3 tools/env.py start arxiv --release v0.1.3 --mode preview" in out
    assert "tasks on SGR-WebEnv: 1 will run, 2 skipped" in out
    assert "run on arxiv.example: offline_scholar_001" in out
    assert "skipped offline_water_001: no SGR-WebEnv environment is mapped for https://water.unmapped.example" in out


@pytest.mark.slow
def test_sgr_run_on_a_live_name_reaches_exact_match(tmp_path: Path, offline_server):
    source = live_records(tmp_path)
    result = CliRunner().invoke(app, [
        "run", "--tasks", str(source), "--task", "offline_scholar_001", "--model", "scripted",
        "--webenv", f"https://arxiv.example={offline_server.origin}", "--out", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "runs" / "offline_scholar_001" / "scripted" / "full"
    assert json.loads((run_dir / "score.json").read_text())["exact_match"] is True
    final = json.loads((run_dir / "retrieval_state.json").read_text())["final"]["url"]
    assert final.startswith("https://arxiv.example/scholar/search?")  # the address the agent saw: live
    steps = (run_dir / "steps.jsonl").read_text()
    assert offline_server.origin not in steps and "https://arxiv.example/scholar/" in steps
    assert json.loads((run_dir / "webenv.json").read_text())["environment"] == offline_server.origin

    skipped = CliRunner().invoke(app, [
        "run", "--tasks", str(source), "--task", "offline_water_001", "--model", "scripted",
        "--webenv", f"https://arxiv.example={offline_server.origin}", "--out", str(tmp_path / "runs")])
    assert skipped.exit_code == 0, skipped.output
    assert "skipped offline_water_001: no SGR-WebEnv environment is mapped for https://water.unmapped.example" \
        in skipped.output
    assert not (tmp_path / "runs" / "offline_water_001").exists() or \
        not any((tmp_path / "runs" / "offline_water_001").rglob("*.json"))


@pytest.mark.slow
def test_sgr_bench_checks_first_runs_mapped_tasks_and_lists_skips(tmp_path: Path, offline_server):
    """Cookie banner, filters, CSV download: the regulatory task on https://regs.example."""
    config = tmp_path / "bench.yaml"
    config.write_text(yaml.safe_dump({
        "models": [{"name": "scripted", "provider": "scripted"}],
        "datasets": [{"suite": "sgrbench", "source": str(live_records(tmp_path)), "splits": ["constraint"],
                      "task_ids": ["offline_regulatory_001", "offline_water_001"],
                      "webenv": {"https://regs.example": offline_server.origin}}],
        "protocol": {"budgets": {"wall_seconds": 300, "no_progress_seconds": 200}},
        "agent": {"trace": False},
        "run": {"output_dir": str(tmp_path / "results"), "concurrency": 1, "html_report": False}}))
    result = CliRunner().invoke(app, ["bench", str(config)])
    assert result.exit_code == 0, result.output
    assert "tasks on SGR-WebEnv: 1 will run, 1 skipped" in result.output
    assert "skipped offline_water_001: no SGR-WebEnv environment is mapped" in result.output
    cell = json.loads(next((tmp_path / "results").rglob("cell.json")).read_text())
    assert cell["task_id"] == "offline_regulatory_001" and cell["metrics"]["em"] == 1.0
    assert cell["outcome"]["stop_reason"] == "finished"
    manifest = json.loads((tmp_path / "results" / "manifest.json").read_text())
    environment = manifest["webenv"]["environments"][0]
    assert environment["environment"] == offline_server.origin and environment["up"] is True
    assert environment["live_origins"] == ["https://regs.example"]
    assert manifest["webenv"]["tasks_run"] == ["offline_regulatory_001"]
    assert manifest["sessions"][-1]["webenv"]["tasks_skipped"][0]["task_id"] == "offline_water_001"
    assert manifest["config"]["datasets"][0]["webenv"] == {"https://regs.example": offline_server.origin}
