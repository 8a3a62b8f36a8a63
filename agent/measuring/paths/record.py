"""A run becomes a decision path: a played or real-model run folder (`transcript.jsonl` + `steps.jsonl`), or
a relay folder (`resp-N.json`, one answer per request, with the run's `steps.jsonl` beside it or one up).

The model's own calls come from the wire (the transcript's responses, or the answer files), in order; the
actor's events in `steps.jsonl` pair with them one for one (each actor model call logs one event with its
tool, or `invalid`). A target given by ref becomes what the page showed for it: the actor logs that
(`shown`, from the structured observation it had). Runs made before that was logged fall back to the label
the browser named in its message (fill, select, check); a ref neither gives is kept and listed in `unmapped`.
The sites' origin (the first page the browser showed) becomes `{origin}`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent.clients.transcript import TRANSCRIPT_FILE
from agent.measuring.paths.path import ORIGIN, TARGET_KEYS, DecisionPath, PathStep
from agent.measuring.play_server import PLAY_FILE
from agent.measuring.safe_files import UnsafeFile, loads, read_json, read_text
from graph.events import ActorEvent, BrowserLine, RunEvent, StepEvent, events_from_text

PLAN_TOOL = "Plan"
# the browser's own message names the control it acted on (older runs log no `shown`)
_ANSWER_FILE = re.compile(r"resp-(\d+)\.json")  # not resp-N.rejected.json (an answer a play folder set aside)
_NAMED = re.compile(r"^(?:filled|checked|unchecked) '([^']*)'|^selected '[^']*' in '([^']*)'")


class RunFolderError(ValueError):
    """Not a run or relay folder, or one whose answers and events do not pair up."""


MAX_TRANSCRIPT_BYTES = 512 * 2**20  # 60 calls of at most 2 MB each way (the recorder's own cap) fit
MAX_STEPS_BYTES = 256 * 2**20
MAX_SMALL_BYTES = 1_000_000  # an answer file, play.json


def _read(path: Path, cap: int) -> str:
    try:
        return read_text(path, cap)
    except UnsafeFile as exc:
        raise RunFolderError(str(exc)) from exc


def _transcript_answers(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for number, text in enumerate(_read(path, MAX_TRANSCRIPT_BYTES).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            line = loads(text, f"{path}: line {number}", max_depth=None)
            if line["status"] != 200 or not isinstance(line["response"], dict):
                continue  # a refused request: the model never answered it
            message = line["response"]["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            if calls:
                raw = calls[0]["function"]["arguments"] or "{}"
                try:
                    args = json.loads(raw)
                except (ValueError, RecursionError):
                    args = None
                args = args if isinstance(args, dict) else {"_raw": str(raw)[:10_000]}
                out.append((int(line["call"]), {"tool": str(calls[0]["function"]["name"]), "args": args}))
            else:
                out.append((int(line["call"]), {"content": str(message.get("content") or "")}))
        except UnsafeFile as exc:
            raise RunFolderError(str(exc)) from exc
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, RecursionError) as exc:
            raise RunFolderError(f"{path}: line {number} is not a transcript line ({type(exc).__name__})") from exc
    return out


def _answer_file(path: Path) -> dict[str, Any]:
    try:
        reply = read_json(path, MAX_SMALL_BYTES)
    except UnsafeFile as exc:
        raise RunFolderError(str(exc)) from exc
    if not isinstance(reply, dict):
        raise RunFolderError(f"{path}: not an answer ({{\"tool\": NAME, \"args\": {{...}}}} or {{\"content\": ...}})")
    calls = reply.get("tool_calls") or ([{"name": reply["tool"], "args": reply.get("args", {})}]
                                        if reply.get("tool") else [])
    if calls and not (isinstance(calls, list) and isinstance(calls[0], dict) and isinstance(calls[0].get("name"), str)
                      and isinstance(calls[0].get("args", {}), dict)):
        raise RunFolderError(f"{path}: its tool call has no name or its args are not an object")
    return ({"tool": calls[0]["name"], "args": calls[0].get("args", {})} if calls
            else {"content": str(reply.get("content", ""))})


def _answers(folder: Path) -> list[tuple[int, dict[str, Any]]]:
    """(request number, `{"tool", "args"}` or `{"content"}`) per answered request, in order."""
    if not folder.is_dir():
        raise RunFolderError(f"{folder}: not a folder (give a run folder or a play/relay folder)")
    if (folder / TRANSCRIPT_FILE).exists():
        return _transcript_answers(folder / TRANSCRIPT_FILE)
    numbers = sorted(int(m.group(1)) for p in folder.glob("resp-*.json") if (m := _ANSWER_FILE.fullmatch(p.name)))
    if not numbers:
        raise RunFolderError(f"{folder}: neither {TRANSCRIPT_FILE} nor resp-N.json files")
    return [(n, _answer_file(folder / f"resp-{n}.json")) for n in numbers]


def _steps_log(folder: Path) -> list[StepEvent]:
    for candidate in (folder / "steps.jsonl", folder.parent / "steps.jsonl"):
        if candidate.exists():
            events, problems = events_from_text(_read(candidate, MAX_STEPS_BYTES))
            if problems:
                raise RunFolderError(f"{candidate}: {problems[0]}"
                                     + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
            return events
    raise RunFolderError(f"{folder}: no steps.jsonl here or one folder up (the run's own record)")


def _origin(events: list[StepEvent]) -> str | None:
    for event in events:
        url = str(getattr(event, "url", None) or "")
        if url.startswith(("http://", "https://")):
            parts = urlsplit(url)
            return f"{parts.scheme}://{parts.netloc}"
    return None


def path_from_run(folder: Path, task: str | None = None) -> DecisionPath:
    folder = Path(folder)
    answers = _answers(folder)
    events = _steps_log(folder)
    start = next((e for e in events if isinstance(e, RunEvent) and e.event == "start"), None)
    task_id = task or (start.task_id if start else None)
    if not task_id:
        raise RunFolderError(f"{folder}: the task id is not recorded; give it")
    actor = [e for e in events if isinstance(e, ActorEvent) and (e.tool is not None or e.invalid is not None)]
    messages = {e.step: e.message or "" for e in events if isinstance(e, BrowserLine)}
    plan, steps, unmapped = None, [], []
    calls = iter(actor)
    for n, answer in answers:
        if answer.get("tool") == PLAN_TOOL:
            plan = answer["args"]
            continue
        event = next(calls, None)
        if event is None:
            raise RunFolderError(f"{folder}: request {n} was answered but the run logged no actor step for it")
        if "tool" not in answer:
            continue  # prose: not a decision a replay can repeat
        args = dict(answer["args"])
        for key in TARGET_KEYS:
            target = args.get(key)
            if not (isinstance(target, dict) and target.get("ref")):
                continue
            shown = (event.shown or {}).get(key) or _named(messages.get(event.step, ""), key)
            if shown:
                args[key] = shown
            else:
                unmapped.append(f"request {n} ({answer['tool']}): {key} ref {target['ref']}")
        steps.append(PathStep(tool=answer["tool"], args=args, n=n))
    played = folder / PLAY_FILE
    try:
        record = read_json(played, MAX_SMALL_BYTES) if played.exists() else {}
    except UnsafeFile as exc:
        raise RunFolderError(str(exc)) from exc
    player = record.get("player") if isinstance(record, dict) else None
    path = DecisionPath(task=task_id, plan=plan, steps=steps, source=str(folder), player=player,
                        unmapped=unmapped or None)
    origin = _origin(events)
    if origin and origin != ORIGIN:
        path = DecisionPath.model_validate_json(path.model_dump_json().replace(origin, ORIGIN))
    return path


def _named(message: str, key: str) -> dict[str, str] | None:
    match = _NAMED.match(message) if key == "target" else None
    return {"shown_label": match.group(1) or match.group(2)} if match else None
