"""Atomic writes: readers see the old or the new content, never a temp file, and files stay readable."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agent.rundir.atomic import replace_dir_atomic, write_json_atomic, write_text_atomic


def test_overwrite_leaves_no_temp_file_and_readable_mode(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "cell.json"
    write_json_atomic(target, {"n": 1})
    write_json_atomic(target, {"n": 2, "text": "é"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"n": 2, "text": "é"}
    assert [p.name for p in target.parent.iterdir()] == ["cell.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.md"
    write_text_atomic(target, "old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]


def test_folder_moves_in_one_step(tmp_path: Path) -> None:
    staging = tmp_path / ".staging" / "m" / "v" / "t"
    staging.mkdir(parents=True)
    (staging / "cell.json").write_text("{}")
    final = tmp_path / "cells" / "m" / "v" / "t"
    replace_dir_atomic(staging, final)
    assert (final / "cell.json").read_text() == "{}" and not staging.exists()
