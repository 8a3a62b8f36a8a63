"""Issue 21 item 3: `--fresh` deleted and `fingerprint.json` was written outside the run folder, and `--model`
names were joined unslugged. Every name joined into a run path is one safe segment, checked to stay inside."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.rundir.cells import CellKey, cell_dir, fresh_staging_dir
from agent.rundir.paths import UnsafePath, ensure_inside, run_path, safe_segment
from agent.runner.local import checkpoint_path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["../../victim", "/abs/x", "a/b", "..", ".", "", "x\\..\\y", "..\x00/etc",
                                  "C:\\x", "~/x", "a" * 400])
def test_item3_every_name_is_one_segment_inside_the_root(tmp_path: Path, name: str):
    segment = safe_segment(name)
    assert "/" not in segment and "\\" not in segment and segment not in ("", ".", "..")
    assert not segment.startswith(".") and len(segment) <= 120
    path = run_path(tmp_path, name, name, name)
    assert path.resolve().is_relative_to(tmp_path.resolve()) and len(path.relative_to(tmp_path).parts) == 3


def test_item3_known_names_keep_their_folders(tmp_path: Path):
    assert safe_segment("offline_vulns_001-g") == "offline_vulns_001-g"
    assert safe_segment("openai/gpt-4.1-mini") == "openai_gpt-4.1-mini"
    assert run_path(tmp_path, "t", "scripted", "full") == tmp_path / "t" / "scripted" / "full"
    assert safe_segment("a" * 400) != safe_segment("a" * 399 + "b")  # cut names keep a hash of the whole


def test_item3_a_symlink_out_of_the_run_folder_is_refused(tmp_path: Path):
    outside, root = tmp_path / "outside", tmp_path / "runs"
    outside.mkdir()
    root.mkdir()
    (root / "t").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath, match="not inside the run folder"):
        run_path(root, "t", "m")
    with pytest.raises(UnsafePath):
        ensure_inside(root, root)  # the root itself is never a cell's folder


def test_item3_bench_cell_checkpoint_and_staging_paths_stay_inside(tmp_path: Path):
    key = CellKey("/abs/model", "../v", "../../etc/x.1")
    for path in (cell_dir(tmp_path, key), fresh_staging_dir(tmp_path, key), checkpoint_path(tmp_path, key)):
        assert path.resolve().is_relative_to(tmp_path.resolve())
    assert checkpoint_path(tmp_path, key).name == "etc_x.1.sqlite"  # not `etc_x.sqlite`: `x.1` and `x.2` differ
    assert checkpoint_path(tmp_path, CellKey("m", "v", "x.2")) != checkpoint_path(tmp_path, CellKey("m", "v", "x.1"))


def test_item3_sgr_run_fresh_never_touches_outside_the_run_folder(tmp_path: Path):
    victim = tmp_path / "victim" / "scripted" / "full"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("precious")
    out = tmp_path / "runs" / "a"
    before = _snapshot(tmp_path)
    for task, model in (("../../victim", "scripted"), ("t", str(tmp_path / "victim")), ("t", "../../../victim")):
        result = CliRunner().invoke(app, ["run", "--task", task, "--out", str(out), "--model", model, "--fresh"])
        assert result.exit_code == 2, result.output  # the unknown task id is refused with one line
        assert "error:" in result.output
    assert {k: v for k, v in _snapshot(tmp_path).items() if not k.startswith("runs/")} == before
    assert not out.exists()  # a config error makes no run folder (issue 40): nothing written inside either


def test_item3_sgr_run_refuses_a_run_folder_that_symlinks_out(tmp_path: Path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    out = tmp_path / "runs"
    (out / "t").mkdir(parents=True)
    (out / "t" / "scripted").symlink_to(victim, target_is_directory=True)
    result = CliRunner().invoke(app, ["run", "--task", "t", "--out", str(out), "--model", "scripted", "--fresh"])
    assert result.exit_code == 2 and "not inside the run folder" in result.output
    assert (victim / "keep.txt").read_text() == "precious" and sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
