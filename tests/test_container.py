"""The container recipe: the Dockerfile keeps its contract (checked always), and the full podman smoke
run (`scripts/container_smoke.sh`, minutes long, needs root and podman) runs when SGR_CONTAINER_SMOKE=1."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_dockerfile_contract() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    instructions = [line for line in lines if line and not line.startswith("#")]
    assert instructions[0] == "FROM debian:bookworm-slim AS agent"
    stages = [line for line in instructions if line.startswith("FROM ")]
    assert stages[1:] == ["FROM agent AS ray", "FROM agent"]  # `--target ray`: the Ray worker; default: agent
    ray_stage = "\n".join(instructions[instructions.index("FROM agent AS ray"):])
    assert "['optional-dependencies']['ray']" in ray_stage and "ray --version" in ray_stage
    install = next(line for line in instructions if "apt-get install" in line)
    for package in ("python3", "python3-venv", "chromium", "libatomic1"):
        assert f" {package} " in f" {install} ", package
    users = [line for line in instructions if line.startswith("USER ")]
    assert users and users[-1] != "USER root"
    assert 'ENTRYPOINT ["sgr"]' in instructions
    volume = next(line for line in instructions if line.startswith("VOLUME"))
    assert "/work/results" in volume and "/data" in volume
    assert not any(p in " ".join(instructions) for p in ("/etc/pip.conf", "ca-certificates.crt"))  # machine-specific
    ignored = (ROOT / ".dockerignore").read_text().split()
    for entry in (".git", ".venv", "results", "**/__pycache__"):
        assert entry in ignored


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SGR_CONTAINER_SMOKE") != "1", reason="set SGR_CONTAINER_SMOKE=1 (needs podman, root)")
def test_container_smoke(tmp_path: Path) -> None:
    assert shutil.which("podman"), "podman is not installed"
    out = tmp_path / "container-results"
    args = [str(ROOT / "scripts" / "container_smoke.sh"), "--out", str(out), "--limit", "2",
            *os.environ.get("SGR_CONTAINER_SMOKE_ARGS", "").split()]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (out / "offline" / "report.html").is_file()
    assert "SCRIPTED WALKTHROUGH" in (out / "offline" / "summary.md").read_text()


@pytest.mark.skipif(shutil.which("podman") is not None and shutil.which("runc") is not None
                    and shutil.which("debootstrap") is not None, reason="the tools are installed here")
def test_container_smoke_says_what_is_missing(tmp_path: Path) -> None:
    """Without podman (or runc, debootstrap) the script names what to install, before it touches anything."""
    done = subprocess.run([str(ROOT / "scripts" / "container_smoke.sh"), "--out", str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    if os.geteuid() != 0:
        assert done.stderr.startswith("error: run as root"), done.stderr
        return
    missing = [t for t in ("podman", "runc", "debootstrap") if shutil.which(t) is None]
    assert done.stderr.strip() == (f"error: missing {' '.join(missing)}: install them with  "
                                   "apt-get install -y podman runc debootstrap")
    assert not (tmp_path / "out").exists() and "containers.conf" not in done.stderr
