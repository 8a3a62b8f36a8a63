"""The LangGraph checkpoint database of a task: redacted before anything is persisted, and what happens to
a thread that was interrupted (the process killed mid-task).

Redaction: every checkpoint and pending write passes through `RedactingSerializer`, so an API key echoed in
an error text (a 401 body), a typed value or a page never reaches `checkpoints.sqlite` or a cell's sqlite.

Interruption: a killed run leaves its thread mid-way. Its recorded state claims page state (a form choice,
a scope, a page of results) that a fresh browser no longer has, and re-opening the last URL does not bring
it back, so a resumed cell could answer from state it no longer holds. Such a thread is restarted from a
clean slate instead: its checkpoints are deleted, the run starts from the task's initial state, and the
restart is recorded (in the checkpoint metadata, so a second kill still counts the first) and reported in
the outcome; the earlier steps stay in `steps.jsonl` above a `restart` event.

Size: a thread keeps only its latest checkpoint (and the pending writes made on it). That is all resuming
needs: a finished thread is re-reported from its last state, an interrupted one restarted from a clean slate
(its last state says where it stopped). LangGraph's sqlite saver stores the whole state in every checkpoint,
so keeping them all grew the file with the square of the steps (issue 29: 210 MB for 20 steps with 50 KB
URLs); the file is compacted when the task ends.

Finished: once a run's outcome stands (a bench cell's `cell.json` is in place; `sgr run`'s `outcome.json` is
written and not an infrastructure failure) its checkpoint is deleted (`prune`): results are read from the
outcome, never from the checkpoint, so it is resume machinery for unfinished threads only (docs/configuration.md, "What a run keeps").

Infrastructure failure: a thread the graph ended because the browser crashed or the model endpoint failed
(an `infra` error) is finished, but the runner retries such a cell. Reporting that thread again would make
every retry a no-op, so it is restarted the same way (`reason: infra`, the error kept); a thread that ended
any other way is reported again, never re-run.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from browser.trace import Redactor

RESTARTS_KEY = "sgr_restarts"


class RedactingSerializer:
    """Wraps the saver's serializer: objects are redacted (`Redactor.deep`) before they are serialized."""

    def __init__(self, inner: Any):
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        # made per write: a key registered after the saver opened (a model created later) is covered too
        return self.inner.dumps_typed(Redactor.from_environment().deep(obj))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)


async def open_checkpointer(stack: AsyncExitStack, checkpoint_db: Path | None) -> Any:
    """The task's sqlite saver (None without a database), redacting everything it writes and keeping only
    each thread's latest checkpoint."""
    if checkpoint_db is None:
        return None
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    class LatestOnlySaver(AsyncSqliteSaver):
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            saved = await super().aput(config, checkpoint, metadata, new_versions)
            await _drop_older(self, saved["configurable"])
            return saved

    checkpoint_db.parent.mkdir(parents=True, exist_ok=True)
    saver = await stack.enter_async_context(LatestOnlySaver.from_conn_string(str(checkpoint_db)))
    saver.serde = RedactingSerializer(saver.serde)
    stack.push_async_callback(_compact, saver)  # runs before the connection closes
    return saver


async def _drop_older(saver: Any, latest: dict[str, Any]) -> None:
    """Delete a thread's checkpoints older than `latest` and the writes made on them (already applied in it)."""
    key = (str(latest["thread_id"]), str(latest["checkpoint_ns"]), str(latest["checkpoint_id"]))
    async with saver.lock, saver.conn.cursor() as cur:
        for table in ("checkpoints", "writes"):
            await cur.execute(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id <> ?",
                              key)
        await saver.conn.commit()


async def _compact(saver: Any) -> None:
    """Give the pages of deleted checkpoints back to the file system (sqlite only reuses them otherwise)."""
    import sqlite3

    try:
        async with saver.lock:
            await saver.conn.execute("VACUUM")
    except sqlite3.Error:  # a busy or full disk: the file stays as it is, nothing is lost
        return


def finished(snapshot: Any) -> bool:
    """The composer ran (it always sets `answer`). `snapshot.next` alone is not enough: a kill -9 can leave a
    last checkpoint with no next node recorded (seen under load), and that thread is not finished."""
    return bool(snapshot.values) and not snapshot.next and snapshot.values.get("answer") is not None


def infrastructure_error(snapshot: Any) -> str | None:
    """The error of a thread the graph ended on an infrastructure failure (crashed browser, model endpoint
    down), which a retry must run again; None for any other thread."""
    values = snapshot.values or {}
    errors = values.get("errors") or []
    if values.get("stop_reason") != "error" or not errors or errors[-1].get("kind") != "infra":
        return None
    return str(errors[-1].get("message") or "")


def reported_again(snapshot: Any) -> bool:
    """A finished thread whose outcome stands (not ended by an infrastructure failure)."""
    return finished(snapshot) and infrastructure_error(snapshot) is None


async def restart_if_interrupted(snapshot: Any, saver: Any, config: dict[str, Any]) -> list[dict[str, Any]] | None:
    """For an interrupted thread (`snapshot`: its latest state), or one ended by an infrastructure failure:
    delete it and return every restart so far (this one last), to be recorded with `restart_metadata` by the
    new run; None when the thread is new or its outcome stands."""
    if not snapshot.values or reported_again(snapshot):
        return None
    values = snapshot.values
    earlier = restarts_of(snapshot)
    usage = values.get("usage") or {}
    infra = infrastructure_error(snapshot) if finished(snapshot) else None
    restart = {"at": datetime.now(UTC).isoformat(timespec="seconds"),
               "reason": "interrupted" if infra is None else "infra",
               **({"error": Redactor.from_environment().text(infra)} if infra is not None else {}),
               "interrupted_at_step": int(values.get("step")
               or 0), "interrupted_before": list(snapshot.next), "last_url": (values.get("observation") or {}).get("url"),
               "checkpoint_created_at": snapshot.created_at,
               # what the lost run had spent (the outcome's own counters cover the new run only)
               "prompt_tokens": int(usage.get("prompt_tokens") or 0),
               "completion_tokens": int(usage.get("completion_tokens") or 0),
               "cost_usd": float(usage.get("cost_usd") or 0.0)}
    await saver.adelete_thread(config["configurable"]["thread_id"])
    return [*earlier, restart]


def restart_metadata(restarts: list[dict[str, Any]]) -> dict[str, str]:
    """For `config["metadata"]`: LangGraph copies only scalar values into each checkpoint's metadata (JSON,
    not passed through the serializer), so the list travels as redacted JSON text."""
    return {RESTARTS_KEY: Redactor.from_environment().text(json.dumps(restarts))}


def restarts_of(snapshot: Any) -> list[dict[str, Any]]:
    """The restarts recorded in a thread's latest checkpoint ([] for a thread never interrupted)."""
    text = (getattr(snapshot, "metadata", None) or {}).get(RESTARTS_KEY)
    try:
        restarts = json.loads(text) if isinstance(text, str) else []
    except ValueError:
        return []
    return restarts if isinstance(restarts, list) else []


def prune(checkpoint_db: Path) -> None:
    """Delete a finished run's checkpoint database (and sqlite's side files): nothing resumes a finished run."""
    for path in (checkpoint_db, checkpoint_db.with_name(checkpoint_db.name + "-wal"),
                 checkpoint_db.with_name(checkpoint_db.name + "-shm"), checkpoint_db.with_name(checkpoint_db.name + "-journal")):
        path.unlink(missing_ok=True)
