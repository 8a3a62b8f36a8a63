"""Chromium discovery order and the error that names every place searched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from browser import launch
from browser.launch import CHROMIUM_ENV, ChromiumNotFound, find_chromium


def _fake_binary(path: Path) -> str:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


class _FakeBrowserType:
    def __init__(self, path: str):
        self.executable_path = path


def test_explicit_setting_beats_env_and_playwright(tmp_path, monkeypatch):
    explicit = _fake_binary(tmp_path / "explicit")
    monkeypatch.setenv(CHROMIUM_ENV, _fake_binary(tmp_path / "from-env"))
    managed = _FakeBrowserType(_fake_binary(tmp_path / "managed"))
    assert find_chromium(explicit, managed) == explicit  # type: ignore[arg-type]
    assert find_chromium(None, managed) == str(tmp_path / "from-env")  # type: ignore[arg-type]
    monkeypatch.delenv(CHROMIUM_ENV)
    assert find_chromium(None, managed) == str(tmp_path / "managed")  # type: ignore[arg-type]


def test_playwright_browser_not_on_disk_falls_back_to_system(tmp_path, monkeypatch):
    monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    system = _fake_binary(tmp_path / "chromium")
    monkeypatch.setattr(launch, "SYSTEM_CHROMIUM", system)
    assert find_chromium(None, _FakeBrowserType(str(tmp_path / "not-downloaded"))) == system  # type: ignore[arg-type]


def test_error_names_all_places(tmp_path, monkeypatch):
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "missing-env"))
    monkeypatch.setattr(launch, "SYSTEM_CHROMIUM", str(tmp_path / "missing-system"))
    with pytest.raises(ChromiumNotFound) as error:
        find_chromium(str(tmp_path / "missing-explicit"), _FakeBrowserType(str(tmp_path / "missing-managed")))  # type: ignore[arg-type]
    message = str(error.value)
    for fragment in ("missing-explicit", "missing-env", "Playwright managed browser: not set", "missing-system",
                     "playwright install chromium"):
        assert fragment in message


@pytest.mark.slow
async def test_launch_real_chromium_headless(chromium_worker):
    browser = await chromium_worker.browser()
    assert browser.is_connected() and browser.version
    pid = await chromium_worker.browser_pid()
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"--headless" in b" ".join(cmdline) or any(arg.startswith(b"--headless") for arg in cmdline)
    assert b"--disable-background-networking" in cmdline and b"--no-first-run" in cmdline
    assert os.path.basename(cmdline[0].decode()) in ("chromium", "chrome", "headless_shell")
