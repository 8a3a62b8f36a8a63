"""Fetch the SGR-Bench release from the Hugging Face hub (optional extra `hf`) into the local cache.

The whole dataset repository is downloaded rather than the `datasets` splits, so Chinese `data_zh`
records come too and the hub goes through the same folder loader as a local copy of the release.
"""

from __future__ import annotations

from pathlib import Path

from tasks.errors import TaskSourceError

DEFAULT_DATASET_ID = "Ninggggy/SGR-BENCH"
HUB_PREFIX = "hf:"

# Said wherever a task source is given: `--tasks` of `sgr run`/`sgr tasks`/`sgr score`, or `datasets.source` of a
# bench config (`sgr bench` has no --tasks: a newcomer was sent to an option that does not exist).
_LOCAL_HINT = (
    "Use local files instead: download the release once where the hub is reachable, e.g.\n"
    "  hf download {dataset_id} --repo-type dataset --local-dir ./sgr-bench\n"
    "then give ./sgr-bench (release folder) or ./sgr-bench/goal.jsonl (one split) as the task source: "
    "--tasks ./sgr-bench for sgr run, sgr tasks and sgr score; `source: ./sgr-bench` under `datasets:` "
    "(suite sgrbench) in a bench config. The release is {release}."
)


def download_release(dataset_id: str = DEFAULT_DATASET_ID, revision: str | None = None) -> Path:
    """Local folder holding the dataset repository (cached by huggingface_hub; honours HF_HUB_OFFLINE)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise TaskSourceError(
            "loading from the Hugging Face hub needs the optional extra: pip install 'sgr-agent[hf]'.\n"
            + _LOCAL_HINT.format(dataset_id=dataset_id, release=f"{HUB_PREFIX}{DEFAULT_DATASET_ID}")
        ) from exc
    try:
        folder = snapshot_download(repo_id=dataset_id, repo_type="dataset", revision=revision)
    except Exception as exc:  # the hub raises many types (HTTP, connection, offline cache miss)
        raise TaskSourceError(
            f"could not fetch Hugging Face dataset {dataset_id!r}: {type(exc).__name__}: {exc}\n"
            + _LOCAL_HINT.format(dataset_id=dataset_id, release=f"{HUB_PREFIX}{DEFAULT_DATASET_ID}")
        ) from exc
    return Path(folder)
