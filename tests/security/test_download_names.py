"""Issue 40 item 2: a download whose `Content-Disposition` name the page chooses crashed the action. `..` made
the file's path the downloads folder itself and 300 characters are past the file system's limit: the
`OSError` escaped `act` and the executor reported it as the browser crashing (infra), so the run restarted
from a clean slate, losing its progress and a retry. The agent now chooses the name (the page's, sanitised and
shortened), and an action whose own file work fails is a tool error the model reads."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from browser.reads import FILE_NAME_BYTES, safe_file_name
from browser.types import Download, Goto, Target

pytestmark = pytest.mark.slow

NAMES = {"..": "download.bin", ".": "download.bin", "a" * 300 + ".csv": None, "../../etc/cron.d/x.csv": "x.csv",
         "..\\..\\boot.ini": "boot.ini", ".bashrc": "bashrc", "rapport d'été 2024.csv": "rapport_d_été_2024.csv"}


@pytest.mark.parametrize("name", list(NAMES))
async def test_download_names_chosen_by_the_page_are_made_safe(chromium_worker, offline_server, tmp_path: Path,
                                                               name: str):
    async with chromium_worker.task_browser(tmp_path, [offline_server.origin]) as browser:
        await browser.act(Goto(url=f"{offline_server.origin}/adversarial/files?name={name}"))
        result = await browser.act(Download(target=Target(text="Export CSV")))
    assert result.ok, result.message
    saved = Path(result.download_path)
    assert saved.parent == tmp_path / "downloads" and saved.is_file()
    assert saved.name == (NAMES[name] or safe_file_name(name)) and len(saved.name.encode()) <= FILE_NAME_BYTES
    assert result.table is not None and result.table.rows == [["France", "2020"]]  # still read as the CSV it is


async def test_download_that_cannot_be_saved_is_a_tool_error(chromium_worker, offline_server, tmp_path: Path,
                                                             monkeypatch):
    def disk_full(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    async with chromium_worker.task_browser(tmp_path, [offline_server.origin]) as browser:
        await browser.act(Goto(url=f"{offline_server.origin}/adversarial/files?name=data.csv"))
        monkeypatch.setattr(Path, "write_bytes", disk_full)
        result = await browser.act(Download(target=Target(text="Export CSV")))
        monkeypatch.undo()
        assert not result.ok and result.error == "invalid_action"  # the action failed, the browser did not
        assert "No space left on device" in result.message
        again = await browser.act(Download(target=Target(text="Export CSV")))
    assert again.ok, again.message


def test_download_names_shortened_keep_their_extension():
    long = safe_file_name("é" * 200 + ".pdf")
    assert long.endswith(".pdf") and len(long.encode()) <= FILE_NAME_BYTES
    assert safe_file_name("report (1).csv") == "report_(1).csv" and safe_file_name("") == "download.bin"
