"""Load task records from any form the benchmark ships in, collecting every bad record before failing.

Sources: a `.jsonl` file, a `.json` file (one record or a list), a release folder (`data_en/goal/*.json`,
`data_zh/...`, or `goal.jsonl`/`constraint.jsonl`, or `goal_hf.jsonl`/`constraint_hf.jsonl`),
`hf:<dataset id>` (the Hugging Face hub), `offline` (the bundled offline suite) or `offline-heldout` (the
bundled held-out tasks on the same offline sites, tasks/offline/heldout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from tasks.errors import TaskLoadError, TaskProblem, TaskSourceError, display_path
from tasks.families import family_slug, resolve_family
from tasks.hub import DEFAULT_DATASET_ID, HUB_PREFIX, download_release
from tasks.models import Rubric, Task, Variant, decode_json_object
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.output_spec import OutputSpecError, derive_output_spec

Split = Literal["both", "goal", "constraint"]
OFFLINE_DATA_DIR = Path(__file__).parent / "offline" / "data"
HELDOUT_DATA_DIR = Path(__file__).parent / "offline" / "heldout"
# the named sources served by the offline sites (their records use PLACEHOLDER_ORIGIN): the suite, the held-out set
OFFLINE_SOURCES = ("offline", "offline-heldout")
_LANGUAGE_DIR = re.compile(r"^data_([a-z]{2,3})$")
_SPLIT_STEM = re.compile(r"^(goal|constraint)(?:_hf)?$")
NESTED_TOO_DEEPLY = "invalid JSON: nested too deeply to read"


@dataclass(frozen=True)
class RecordFile:
    path: Path
    language: str
    split: Variant | None  # the split its folder or file name says it holds, if any


@dataclass
class LoadResult:
    tasks: list[Task] = field(default_factory=list)
    problems: list[TaskProblem] = field(default_factory=list)


# --- where the records are -----------------------------------------------------------------------------


def _language_of(path: Path, default: str = "en") -> str:
    for part in reversed(path.parts):
        match = _LANGUAGE_DIR.match(part)
        if match:
            return match.group(1)
    return default


def _split_of(file: Path) -> Variant | None:
    """`goal.jsonl`, `goal_hf.jsonl` or a file inside a `goal/` folder holds goal records (same for constraint)."""
    for name in (file.stem, file.parent.name):
        match = _SPLIT_STEM.match(name)
        if match:
            return "goal" if match.group(1) == "goal" else "constraint"
    return None


def _files_in_split_dir(folder: Path, language: str) -> list[RecordFile]:
    return [RecordFile(p, language, _split_of(p)) for p in sorted(folder.glob("*.json"))]


def discover(folder: Path) -> list[RecordFile]:
    """The record files of a release-like folder; per-task JSON wins over JSONL (it also has data_zh)."""
    language_dirs = sorted(p for p in folder.iterdir() if p.is_dir() and _LANGUAGE_DIR.match(p.name))
    if language_dirs:
        found: list[RecordFile] = []
        for lang_dir in language_dirs:
            language = _language_of(lang_dir)
            for split_dir in (lang_dir / "goal", lang_dir / "constraint"):
                if split_dir.is_dir():
                    found.extend(_files_in_split_dir(split_dir, language))
        return found
    language = _language_of(folder)
    split_dirs = [folder / s for s in ("goal", "constraint") if (folder / s).is_dir()]
    if split_dirs:
        return [f for d in split_dirs for f in _files_in_split_dir(d, language)]
    for suffix in ("", "_hf"):
        jsonl = [folder / f"{s}{suffix}.jsonl" for s in ("goal", "constraint")]
        if any(p.is_file() for p in jsonl):
            return [RecordFile(p, language, _split_of(p)) for p in jsonl if p.is_file()]
    direct = sorted(folder.glob("*.json")) + sorted(folder.glob("*.jsonl"))
    if direct:
        return [RecordFile(p, language, _split_of(p)) for p in direct]
    raise TaskSourceError(
        f"no task records in folder {display_path(folder)}: expected data_en/goal/*.json, "
        "data_en/constraint/*.json, goal.jsonl/constraint.jsonl or goal_hf.jsonl/constraint_hf.jsonl"
    )


def resolve_source(source: str | Path) -> list[RecordFile]:
    text = str(source)
    if text in OFFLINE_SOURCES:
        folder, what = (OFFLINE_DATA_DIR, "offline suite") if text == "offline" else (HELDOUT_DATA_DIR, "held-out set")
        written = folder.is_dir() if text == "offline" else (folder / "data_en").is_dir()  # heldout/ holds code too
        if not written:
            raise TaskSourceError(
                f"the bundled {what} has no task records yet ({display_path(folder)} is missing); "
                "it is written by the offline sites (tasks/offline); use --tasks <file or folder> meanwhile"
            )
        return discover(folder)
    if text == "hf" or text.startswith(HUB_PREFIX):
        dataset_id, _, revision = text[len(HUB_PREFIX):].strip().partition("@")
        return discover(download_release(dataset_id or DEFAULT_DATASET_ID, revision or None))
    path = Path(text).expanduser()
    if path.is_dir():
        return discover(path)
    if path.is_file():
        if path.suffix not in (".json", ".jsonl"):
            raise TaskSourceError(f"task file {display_path(path)} must end in .json or .jsonl")
        return [RecordFile(path, _language_of(path), _split_of(path))]
    raise TaskSourceError(
        f"task source {text!r} not found: give a .jsonl or .json file, a release folder (data_en/...), "
        f"'{HUB_PREFIX}<dataset id>[@revision]' (default {DEFAULT_DATASET_ID}), 'offline' or 'offline-heldout'"
    )


# --- reading and validating ----------------------------------------------------------------------------


def _raw_records(record_file: RecordFile, problems: list[TaskProblem]) -> Iterable[tuple[Any, int | None, str]]:
    """(raw record, JSONL line, field prefix) for each record in the file; unreadable parts become problems."""
    path, shown = record_file.path, display_path(record_file.path)
    try:
        text = path.read_bytes().decode("utf-8-sig")  # no newline translation: a lone "\r" is not a record end
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(TaskProblem(shown, f"cannot read file: {exc}"))
        return
    if path.suffix == ".jsonl":
        # Only "\n" ends a JSONL record: str.splitlines() would also split on U+2028, \x0c... inside strings.
        records = 0
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            records += 1
            try:
                yield json.loads(line), number, ""
            except json.JSONDecodeError as exc:
                problems.append(TaskProblem(shown, f"invalid JSON: {exc.msg} (column {exc.colno})", line=number))
            except RecursionError:
                problems.append(TaskProblem(shown, NESTED_TOO_DEEPLY, line=number))
        if not records:
            problems.append(TaskProblem(shown, "the file holds no task records"))
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(TaskProblem(shown, f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"))
        return
    except RecursionError:
        problems.append(TaskProblem(shown, NESTED_TOO_DEEPLY))
        return
    if isinstance(data, list):
        if not data:
            problems.append(TaskProblem(shown, "the file holds no task records (an empty list)"))
        for index, item in enumerate(data):
            yield item, None, f"[{index}]."
    else:
        yield data, None, ""


@dataclass(frozen=True)
class _Where:
    """The place of one record, so every problem about it names the same file, line and field prefix."""

    file: str
    line: int | None
    prefix: str  # "[3]." for the 4th record of a JSON list, else ""

    def problem(self, message: str, field: str | None = None, task_id: str | None = None) -> TaskProblem:
        return TaskProblem(self.file, message, self.line, None if field is None else self.prefix + field, task_id)


def _output_spec_error(rubric: Rubric, output_format: str) -> OutputSpecError | None:
    """Derive the spec at load time so a record without usable columns fails here, not mid-run."""
    try:
        derive_output_spec(rubric.normalization, output_format)
    except OutputSpecError as exc:
        return exc
    return None


def _schema_problems(exc: ValidationError, raw: dict[str, Any], where: _Where) -> list[TaskProblem]:
    """Every field pydantic rejects, plus the output-spec check when rubric and output_format themselves passed."""
    task_id = raw["task_id"] if isinstance(raw.get("task_id"), str) else None
    problems = [
        where.problem(error["msg"].removeprefix("Value error, "), ".".join(map(str, error["loc"])), task_id)
        for error in exc.errors()
    ]
    if not any(error["loc"][:1] in (("rubric",), ("output_format",)) for error in exc.errors()):
        spec_error = _output_spec_error(Rubric.model_validate(decode_json_object(raw["rubric"])), raw["output_format"])
        if spec_error:
            problems.append(where.problem(str(spec_error), spec_error.field, task_id))
    return problems


def _record_problems(task: Task, folder_split: Variant | None, where: _Where) -> list[TaskProblem]:
    problems = []
    spec_error = _output_spec_error(task.rubric, task.output_format)
    if spec_error:
        problems.append(where.problem(str(spec_error), spec_error.field, task.task_id))
    if folder_split and folder_split != task.variant:
        problems.append(
            where.problem(
                f"file is in the {folder_split} split but the id makes it a {task.variant} task "
                "(goal ids end in -g, constraint ids do not)",
                "task_id",
                task.task_id,
            )
        )
    return problems


def _validate(raw: Any, record_file: RecordFile, line: int | None, prefix: str) -> tuple[Task | None, list[TaskProblem]]:
    where = _Where(display_path(record_file.path), line, prefix)
    if not isinstance(raw, dict):
        return None, [where.problem(f"a task record must be a JSON object, got {type(raw).__name__}")]
    try:
        return _checked(raw, record_file, line, where)
    except RecursionError:  # e.g. a JSON string field (metadata, rubric) that decodes to something deep
        return None, [where.problem(NESTED_TOO_DEEPLY)]


def _checked(raw: dict[str, Any], record_file: RecordFile, line: int | None,
             where: _Where) -> tuple[Task | None, list[TaskProblem]]:
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        return None, _schema_problems(exc, raw, where)
    problems = _record_problems(task, record_file.split, where)
    if problems:
        return None, problems
    return task.located(language=record_file.language, file=where.file, line=line), []


def _read_all(files: list[RecordFile]) -> LoadResult:
    result = LoadResult()
    first_seen: dict[tuple[str, str], str] = {}
    for record_file in files:
        for raw, line, prefix in _raw_records(record_file, result.problems):
            task, problems = _validate(raw, record_file, line, prefix)
            result.problems.extend(problems)
            if task is None:
                continue
            key = (task.task_id, task.language)
            if key in first_seen:
                result.problems.append(
                    TaskProblem(
                        display_path(record_file.path),
                        f"duplicate task_id for language {task.language!r}, first seen in {first_seen[key]}",
                        line=line,
                        field="task_id",
                        task_id=task.task_id,
                    )
                )
                continue
            first_seen[key] = task.source or ""
            result.tasks.append(task)
    return result


# --- filters and placeholder origin --------------------------------------------------------------------


def resolve_origin(task: Task, origin: str) -> Task:
    """Point an offline task at the running server: the records are written against PLACEHOLDER_ORIGIN."""
    origin = origin.rstrip("/")
    task.instruction = task.instruction.replace(PLACEHOLDER_ORIGIN, origin)
    if task.start_url:
        task.start_url = task.start_url.replace(PLACEHOLDER_ORIGIN, origin)
    if task.all_involved_urls:
        task.all_involved_urls = [u.replace(PLACEHOLDER_ORIGIN, origin) for u in task.all_involved_urls]
    return task


def _selected(
    task: Task,
    split: Split,
    languages: set[str] | None,
    domains: set[str] | None,
    families: set[str] | None,
    task_ids: set[str] | None,
) -> bool:
    return (
        (split == "both" or task.variant == split)
        and (languages is None or task.language.lower() in languages)
        and (domains is None or task.domain.upper() in domains or task.ecosystem.upper() in domains)
        and (families is None or family_slug(task.family) in families)
        and (task_ids is None or task.task_id in task_ids)
    )


def offline_source(task_id: str) -> str:
    """The bundled source on the offline sites that holds `task_id`: the suite, else its held-out set. A task id
    neither holds: the suite's TaskSourceError (one line, the closest ids)."""
    try:
        load_tasks("offline", task_ids=[task_id])
        return "offline"
    except TaskSourceError as missing:
        try:
            load_tasks("offline-heldout", task_ids=[task_id])
        except TaskSourceError:
            raise missing from None
        return "offline-heldout"


@overload
def load_tasks(
    source: str | Path,
    *,
    split: Split = "both",
    languages: Iterable[str] | None = None,
    domains: Iterable[str] | None = None,
    families: Iterable[str] | None = None,
    task_ids: Iterable[str] | None = None,
    origin: str | None = None,
    on_error: Literal["raise"] = "raise",
) -> list[Task]: ...


@overload
def load_tasks(
    source: str | Path,
    *,
    split: Split = "both",
    languages: Iterable[str] | None = None,
    domains: Iterable[str] | None = None,
    families: Iterable[str] | None = None,
    task_ids: Iterable[str] | None = None,
    origin: str | None = None,
    on_error: Literal["collect"],
) -> LoadResult: ...


def load_tasks(
    source: str | Path,
    *,
    split: Split = "both",
    languages: Iterable[str] | None = None,
    domains: Iterable[str] | None = None,
    families: Iterable[str] | None = None,
    task_ids: Iterable[str] | None = None,
    origin: str | None = None,
    on_error: Literal["raise", "collect"] = "raise",
) -> list[Task] | LoadResult:
    """Load, validate and filter tasks. Every bad record is found before `TaskLoadError` is raised;
    `on_error="collect"` returns the good tasks with the problems instead (for `sgr tasks validate`).
    `domains` matches a domain or an ecosystem ("CFPB" selects both CFPB domains)."""
    if split not in ("both", "goal", "constraint"):
        raise ValueError(f"split must be 'both', 'goal' or 'constraint', got {split!r}")
    wanted_languages = {lang.lower() for lang in languages} if languages else None
    files = [
        f
        for f in resolve_source(source)
        if (split == "both" or f.split in (None, split)) and (wanted_languages is None or f.language in wanted_languages)
    ]
    result = _read_all(files)
    if result.problems and on_error == "raise":
        raise TaskLoadError(result.problems)

    wanted_ids = set(task_ids) if task_ids else None
    if wanted_ids:
        unknown = wanted_ids - {t.task_id for t in result.tasks}
        if unknown:
            raise TaskSourceError(_unknown_ids_message(source, sorted(unknown), [t.task_id for t in result.tasks],
                                                       split, sorted(wanted_languages or [])))
    selected = [
        t
        for t in result.tasks
        if _selected(
            t,
            split,
            wanted_languages,
            {d.upper() for d in domains} if domains else None,
            {family_slug(resolve_family(f)) for f in families} if families else None,
            wanted_ids,
        )
    ]
    if origin:
        selected = [resolve_origin(t, origin) for t in selected]
    if on_error == "collect":
        return LoadResult(tasks=selected, problems=result.problems)
    return selected


def _unknown_ids_message(source: str | Path, unknown: list[str], known: list[str], split: str,
                         languages: list[str]) -> str:
    """One line: the ids not found, the closest known ids, and, for the bundled suite, where released ids are."""
    import difflib

    def closest(task_id: str) -> str:
        near = difflib.get_close_matches(task_id, known, n=3, cutoff=0.5)
        return f"{task_id} (closest: {', '.join(near)})" if near else task_id

    where = f"split={split}" + (f", languages={languages}" if languages else "")
    message = f"unknown task id(s) in {source} ({where}): " + "; ".join(closest(t) for t in unknown)
    if str(source) == "offline" and not all(t.startswith("offline_") for t in unknown):
        message += ("; released SGR-Bench ids need --tasks hf:Ninggggy/SGR-BENCH (extra `hf`) or --tasks PATH to a "
                    "local copy of the release (`sgr tasks list --tasks offline` lists the bundled ids)")
    return message
