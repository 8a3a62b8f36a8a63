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

from agent.clients.transcript import TRANSCRIPT_FILE, read_transcript
from agent.measuring.paths.path import ORIGIN, TARGET_KEYS, DecisionPath, PathStep
from agent.measuring.play_server import PLAY_FILE
from graph.events import ActorEvent, BrowserLine, RunEvent, StepEvent, read_events

PLAN_TOOL = "Plan"
# the browser's own message names the control it acted on (older runs log no `shown`)
_ANSWER_FILE = re.compile(r"resp-(\d+)\.json")  # not resp-N.rejected.json (an answer a play folder set aside)
_NAMED = re.compile(r"^(?:filled|checked|unchecked) '([^']*)'|^selected '[^']*' in '([^']*)'")


class RunFolderError(ValueError):
    """Not a run or relay folder, or one whose answers and events do not pair up."""


def _answers(folder: Path) -> list[tuple[int, dict[str, Any]]]:
    """(request number, `{"tool", "args"}` or `{"content"}`) per answered request, in order."""
    if (folder / TRANSCRIPT_FILE).exists():
        out = []
        for line in read_transcript(folder / TRANSCRIPT_FILE):
            if line["status"] != 200 or not isinstance(line["response"], dict):
                continue  # a refused request: the model never answered it
            message = line["response"]["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            if calls:
                try:
                    args = json.loads(calls[0]["function"]["arguments"] or "{}")
                except ValueError:
                    args = {"_raw": calls[0]["function"]["arguments"]}
                out.append((line["call"], {"tool": calls[0]["function"]["name"], "args": args}))
            else:
                out.append((line["call"], {"content": message.get("content") or ""}))
        return out
    numbers = sorted(int(m.group(1)) for p in folder.glob("resp-*.json") if (m := _ANSWER_FILE.fullmatch(p.name)))
    if not numbers:
        raise RunFolderError(f"{folder}: neither {TRANSCRIPT_FILE} nor resp-N.json files")
    out = []
    for n in numbers:
        reply = json.loads((folder / f"resp-{n}.json").read_text(encoding="utf-8"))
        calls = reply.get("tool_calls") or ([{"name": reply["tool"], "args": reply.get("args", {})}]
                                            if reply.get("tool") else [])
        out.append((n, {"tool": calls[0]["name"], "args": calls[0].get("args", {})} if calls
                    else {"content": reply.get("content", "")}))
    return out


def _steps_log(folder: Path) -> list[StepEvent]:
    for candidate in (folder / "steps.jsonl", folder.parent / "steps.jsonl"):
        if candidate.exists():
            events, problems = read_events(candidate)
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
    player = json.loads(played.read_text(encoding="utf-8")).get("player") if played.exists() else None
    path = DecisionPath(task=task_id, plan=plan, steps=steps, source=str(folder), player=player,
                        unmapped=unmapped or None)
    origin = _origin(events)
    if origin and origin != ORIGIN:
        path = DecisionPath.model_validate_json(path.model_dump_json().replace(origin, ORIGIN))
    return path


def _named(message: str, key: str) -> dict[str, str] | None:
    match = _NAMED.match(message) if key == "target" else None
    return {"shown_label": match.group(1) or match.group(2)} if match else None
