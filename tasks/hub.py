"""Fetch the SGR-Bench release from the Hugging Face hub (optional extra `hf`) into the local cache.

The whole dataset repository is downloaded rather than the `datasets` splits, so Chinese `data_zh`
records come too and the hub goes through the same folder loader as a local copy of the release.
"""

from __future__ import annotations

from pathlib import Path

from tasks.errors import TaskSourceError

DEFAULT_DATASET_ID = "Ninggggy/SGR-BENCH"

_LOCAL_HINT = (
    "Point --tasks at local files instead: download the release once where the hub is reachable, e.g.\n"
    "  hf download {dataset_id} --repo-type dataset --local-dir ./sgr-bench\n"
    "then use --tasks ./sgr-bench (release folder), --tasks ./sgr-bench/goal.jsonl (one split), or "
    "--tasks offline (the bundled offline suite)."
)


def download_release(dataset_id: str = DEFAULT_DATASET_ID, revision: str | None = None) -> Path:
    """Local folder holding the dataset repository (cached by huggingface_hub; honours HF_HUB_OFFLINE)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise TaskSourceError(
            "loading from the Hugging Face hub needs the optional extra: pip install 'sgr-agent[hf]'.\n"
            + _LOCAL_HINT.format(dataset_id=dataset_id)
        ) from exc
    try:
        folder = snapshot_download(repo_id=dataset_id, repo_type="dataset", revision=revision)
    except Exception as exc:  # the hub raises many types (HTTP, connection, offline cache miss)
        raise TaskSourceError(
            f"could not fetch Hugging Face dataset {dataset_id!r}: {type(exc).__name__}: {exc}\n"
            + _LOCAL_HINT.format(dataset_id=dataset_id)
        ) from exc
    return Path(folder)
