"""The offline suite as a whole: committed release is fresh, records load like the real benchmark, every
task is hidden in the default state, every mechanic of the issue exists, walkthroughs are valid tool calls."""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections import Counter, deque
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader

from tasks.models import Task
from tasks.offline.app import DEFAULT_SEED, discover_sites, site_data
from tasks.offline.registry import PLACEHOLDER_ORIGIN
from tasks.offline.suite import (
    DATA_DIR,
    MECHANICS,
    build_records,
    build_walkthroughs,
    check_release,
    task_sites,
)
from tasks.output_spec import derive_output_spec
from tests.fixtures.walkthroughs import replay, validate_steps

ISSUE_MECHANICS = (
    "state in URL query parameters", "state only in a POSTed form", "client-side rendering after a delayed fetch",
    "pagination by page numbers", "pagination by next", "pagination by page-size selector",
    "custom (non-native) dropdown", "date-range widget", "modal or cookie banner", "iframe holding a control",
    "CSV download", "PDF",
)
CRAWL_DEPTH = 3
CRAWL_LIMIT = 400

RECORDS = build_records()
CONSTRAINT_RECORDS = [r for r in RECORDS if not r["task_id"].endswith("-g")]


def test_committed_release_is_fresh():
    assert check_release(DATA_DIR) == [], "run `sgr offline build` and commit tasks/offline/data"


def test_same_seed_gives_identical_data_and_answers():
    """Fresh builds (bypassing the per-process cache) hash the same; another seed changes the answers."""
    def digest(seed: int) -> str:
        parts = []
        for site in discover_sites():
            data = site.build(seed)
            parts.append(repr(data))
            parts.append(json.dumps(site.tasks(data), sort_keys=True))
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    assert digest(DEFAULT_SEED) == digest(DEFAULT_SEED)
    assert json.dumps(build_records(DEFAULT_SEED)) == json.dumps(RECORDS)


def test_suite_size_and_both_wordings():
    bases = Counter(r["task_id"].split("_")[1] for r in CONSTRAINT_RECORDS)
    assert len(CONSTRAINT_RECORDS) >= 16
    assert len(task_sites()) >= 6 and all(n >= 2 for n in bases.values()), bases
    ids = {r["task_id"] for r in RECORDS}
    assert all(f"{r['task_id']}-g" in ids for r in CONSTRAINT_RECORDS)
    assert len(RECORDS) == 2 * len(CONSTRAINT_RECORDS)


def _rows(record: dict) -> list[list[str]]:
    spec = derive_output_spec(record["rubric"]["normalization"], record["output_format"])
    lines = record["oracle_answer"].split(spec.record_separator)
    if spec.header == "required":
        assert lines[0] == spec.field_separator.join(spec.columns)
        lines = lines[1:]
    return [line.split(spec.field_separator) for line in lines]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["task_id"])
def test_record_loads_like_the_benchmark(record):
    task = Task.model_validate(record)
    twin = next(r for r in RECORDS if r["task_id"] in (f"{task.base_id}", f"{task.base_id}-g") and r is not record)
    assert {k: v for k, v in twin.items() if k not in ("task_id", "instruction")} == \
        {k: v for k, v in record.items() if k not in ("task_id", "instruction")}
    rows = _rows(record)
    assert 2 <= len(rows) == record["oracle_output_cardinality"] <= 20
    spec = derive_output_spec(record["rubric"]["normalization"], record["output_format"])
    assert all(len(row) == spec.width for row in rows)
    assert spec.format(rows) == record["oracle_answer"]
    assert record["domain"].startswith("OFFLINE_") and record["start_url"].startswith(PLACEHOLDER_ORIGIN)
    site = next(s for s in discover_sites() if record["start_url"].startswith(f"{PLACEHOLDER_ORIGIN}/{s.prefix}/"))
    assert record["metadata"]["family"] == site.family
    assert len(record["metadata"]["State-Gated Retrieval"]) >= 2


def test_serialisations_vary():
    separators = {r["rubric"]["normalization"]["record_separator"] for r in CONSTRAINT_RECORDS}
    headers = {bool(r["rubric"]["normalization"].get("header_row")) for r in CONSTRAINT_RECORDS}
    assert {"\n", ";", ","} <= separators and headers == {True, False}


def test_every_base_task_has_a_valid_walkthrough():
    walks = build_walkthroughs()
    assert set(walks) == {r["task_id"] for r in CONSTRAINT_RECORDS}
    for base_id, steps in walks.items():
        assert steps[0]["tool"] == "goto", base_id
        validate_steps(steps)
        assert sum(s["tool"] == "extract_rows" for s in steps) >= 1, base_id


def test_release_loads_with_the_benchmark_loader():
    from tasks.loaders import load_tasks

    result = load_tasks("offline", on_error="collect")
    assert result.problems == [] and len(result.tasks) == len(RECORDS)
    local = load_tasks("offline", origin="http://127.0.0.1:9", families=["Regulatory resources"])
    assert local and all(t.start_url.startswith("http://127.0.0.1:9/regulatory/") for t in local)


def test_cli_build_check_and_tasks(tmp_path):
    from typer.testing import CliRunner

    from tasks.offline.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["build", "--check"]).exit_code == 0
    assert runner.invoke(app, ["build", "--check", "--out", str(tmp_path)]).exit_code == 1
    assert runner.invoke(app, ["build", "--out", str(tmp_path)]).exit_code == 0
    (tmp_path / "walkthroughs" / "offline_obsolete_001.json").write_text("[]")
    failed = runner.invoke(app, ["build", "--check", "--out", str(tmp_path)])
    assert failed.exit_code == 1 and "stale" in failed.output
    listing = runner.invoke(app, ["tasks"])
    assert listing.exit_code == 0 and len(listing.output.splitlines()) == len(RECORDS)


def test_adversarial_pages_are_served_and_never_in_tasks(offline_server):
    from tasks.offline.sites.adversarial import ADVERSARIAL_PAGES, FOREIGN_HOST

    attacks = {p.attack for p in ADVERSARIAL_PAGES}
    assert {"ignore_task", "visit_foreign_host", "output_given_answer"} <= attacks
    for page in ADVERSARIAL_PAGES:
        html = httpx.get(f"{offline_server.origin}/adversarial/notes/{page.slug}", timeout=30).text
        assert page.visible_text in html and (not page.hidden_text or page.hidden_text in html)
    assert FOREIGN_HOST in httpx.get(f"{offline_server.origin}/adversarial/notes/visit-host", timeout=30).text
    assert not any("/adversarial/" in json.dumps(r) for r in RECORDS)


# ---------------------------------------------------------------- default state


def _units(content_type: str, body: bytes) -> list[str]:
    """Text blocks whose cells count as 'visible together': table rows, list items, definition lists,
    paragraphs, and the whole page."""
    if "pdf" in content_type:
        return ["\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(body)).pages)]
    if "json" in content_type:
        return [json.dumps(json.loads(body), ensure_ascii=False)]
    soup = BeautifulSoup(body, "lxml")
    for hidden in soup(["script", "style"]):
        hidden.decompose()
    blocks = [el.get_text(" ") for el in soup.find_all(["tr", "li", "dl", "p", "section"])]
    return [*blocks, soup.get_text(" ")]


@lru_cache(maxsize=64)
def _default_state_texts(origin: str, start: str) -> tuple[str, ...]:
    """Pages reachable from `start` without changing any state: links and iframes without a query string
    (iframes as embedded), plus literal query-less URLs the pages' scripts fetch."""
    prefix = "/" + urlsplit(start).path.strip("/").split("/")[0]
    queue, seen, texts = deque([(start, 0)]), {start}, []
    with httpx.Client(timeout=30) as client:  # fresh client: no cookies, banners as a newcomer sees them
        while queue and len(seen) <= CRAWL_LIMIT:
            url, depth = queue.popleft()
            response = client.get(url)
            if response.status_code != 200:
                continue
            content_type = response.headers.get("content-type", "")
            texts.extend(" ".join(u.split()) for u in _units(content_type, response.content))
            if "html" not in content_type or depth >= CRAWL_DEPTH:
                continue
            soup = BeautifulSoup(response.content, "lxml")
            targets = [a["href"] for a in soup.find_all("a", href=True) if "?" not in a["href"]]
            targets += [f["src"] for f in soup.find_all("iframe", src=True)]
            for script in soup.find_all("script"):
                targets += re.findall(r"fetch\(\s*[\"']([^\"'?]+)[\"']\s*\)", script.get_text())
            for target in targets:
                nxt = urljoin(url, target).split("#")[0]
                parts = urlsplit(nxt)
                if parts.netloc == urlsplit(origin).netloc and parts.path.startswith(prefix) and nxt not in seen:
                    seen.add(nxt)
                    queue.append((nxt, depth + 1))
    return tuple(texts)


def _visible_together(row: list[str], texts: tuple[str, ...]) -> str | None:
    patterns = [re.compile(r"(?<!\w)" + re.escape(" ".join(c.split())) + r"(?!\w)", re.I) for c in row]
    return next((t for t in texts if all(p.search(t) for p in patterns)), None)


@pytest.mark.slow
@pytest.mark.parametrize("record", CONSTRAINT_RECORDS, ids=lambda r: r["task_id"])
def test_answer_rows_absent_from_default_state(record, offline_server):
    start = record["start_url"].replace(PLACEHOLDER_ORIGIN, offline_server.origin)
    texts = _default_state_texts(offline_server.origin, start)
    assert len(texts) > 1, f"crawl from {start} found no page"
    for row in _rows(record):
        where = _visible_together(row, texts)
        assert where is None, f"{record['task_id']}: row {row} visible in the default state: {where[:300]}"


# ---------------------------------------------------------------- mechanics


def test_every_issue_mechanic_is_provided():
    assert set(ISSUE_MECHANICS) <= set(MECHANICS)
    prefixes = {s.prefix for s in discover_sites()}
    assert all(m.site in prefixes for ms in MECHANICS.values() for m in ms)


@pytest.mark.parametrize(
    ("mechanic", "index"), [(name, i) for name, ms in MECHANICS.items() for i in range(len(ms))],
    ids=lambda v: str(v),
)
def test_mechanic_over_http(mechanic, index, offline_server):
    probe = MECHANICS[mechanic][index]
    path = probe.probe
    if "{pdf}" in path:
        doc = site_data("regulatory", DEFAULT_SEED).documents[0]
        path = path.replace("{pdf}", f"/regulatory/documents/{doc.slug}.pdf")
    response = httpx.get(offline_server.origin + path, timeout=30)
    assert response.status_code == 200, path
    body = response.content.decode("latin-1")
    assert re.search(probe.marker, body, re.M), f"{mechanic}: {probe.marker!r} not in {path}"


@pytest.mark.slow
def test_crawl_does_see_default_state_rows(offline_server):
    """Guard against a blind crawler: a complaint on the default first page IS visible by default."""
    newest = site_data("regulatory", DEFAULT_SEED).complaints[0]
    texts = _default_state_texts(offline_server.origin, offline_server.origin + "/regulatory/complaints")
    assert _visible_together([newest.id, newest.received.isoformat(), newest.state, newest.issue], texts)
    doc = site_data("regulatory", DEFAULT_SEED).documents[0]
    assert _visible_together([doc.respondent, f"${doc.penalty:,}"], texts)  # read from a default PDF


# ---------------------------------------------------------------- walkthroughs in real Chromium (all sites)

WALK_CASES = [(s.prefix, base_id) for s in discover_sites()
              for base_id in s.walkthroughs(site_data(s.prefix, DEFAULT_SEED))]


@pytest.mark.slow
@pytest.mark.parametrize(("prefix", "task_id"), WALK_CASES)
async def test_walkthrough_reproduces_the_oracle(prefix, task_id, offline_server, chromium_worker, tmp_path):
    site = next(s for s in discover_sites() if s.prefix == prefix)
    data = site_data(prefix, DEFAULT_SEED)
    record = next(r for r in site.tasks(data) if r["task_id"] == task_id)
    async with chromium_worker.task_browser(str(tmp_path), [offline_server.origin]) as driver:
        answer = await replay(driver, site.walkthroughs(data)[task_id], Task.model_validate(record),
                              offline_server.origin)
    assert answer == record["oracle_answer"]
