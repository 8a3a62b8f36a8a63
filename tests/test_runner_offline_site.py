"""A resumed local run serves the offline sites on the origin its checkpoints name, or drops those checkpoints."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx

from agent.runner.offline_sites import recorded_origin, serve_offline_sites
from tasks.offline.server import free_port


def _run_folder(tmp_path: Path, origin: str) -> Path:
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints" / "m" / "v").mkdir(parents=True)
    (run_dir / "checkpoints" / "m" / "v" / "task.sqlite").write_bytes(b"checkpoint")
    (run_dir / "manifest.json").write_text(json.dumps({"offline_origin": origin, "sessions": []}))
    return run_dir


def test_a_resumed_run_serves_the_recorded_origin_and_keeps_checkpoints(tmp_path: Path) -> None:
    origin = f"http://127.0.0.1:{free_port('127.0.0.1')}"
    run_dir = _run_folder(tmp_path, origin)
    said: list[str] = []
    with serve_offline_sites(run_dir, said.append) as served:
        assert served == origin
        assert httpx.get(f"{served}/").status_code == 200
    assert said == []
    assert (run_dir / "checkpoints" / "m" / "v" / "task.sqlite").read_bytes() == b"checkpoint"


def test_a_taken_port_moves_the_sites_and_drops_checkpoints_naming_the_old_origin(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = f"http://127.0.0.1:{squatter.getsockname()[1]}"
        run_dir = _run_folder(tmp_path, taken)
        said: list[str] = []
        with serve_offline_sites(run_dir, said.append) as served:
            assert served != taken
            assert httpx.get(f"{served}/").status_code == 200
    assert not (run_dir / "checkpoints").exists()
    assert len(said) == 1 and taken in said[0] and "start over" in said[0]


def test_a_new_run_folder_has_no_recorded_origin(tmp_path: Path) -> None:
    assert recorded_origin(tmp_path) is None
    (tmp_path / "manifest.json").write_text(json.dumps({"sessions": []}))  # a run made before origins were kept
    assert recorded_origin(tmp_path) is None
