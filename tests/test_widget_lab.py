"""The widget lab's scaffolding: pages discovered by folder, served with their data and the pinned libraries,
records in the SGR-Bench format computed from the data the page serves; every page loads in Chromium with its
widgets built by the library (no script error)."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from tasks.widget_lab.app import create_app
from tasks.widget_lab.registry import PLACEHOLDER_ORIGIN, lab_pages, lab_records, vendor_missing

CATEGORIES = {"multi-select", "typeahead", "date", "tree", "grid", "list"}


def test_pages_are_discovered_with_their_metadata() -> None:
    pages = lab_pages()
    assert pages, "no lab page found under tasks/widget_lab/pages"
    for page in pages:
        assert page.category in CATEGORIES, page.name
        assert (page.folder / "index.html").exists(), page.name
        assert page.widgets, f"{page.name} names no widget for the tests and the bench"


def test_every_page_and_its_data_are_served() -> None:
    client = TestClient(create_app())
    index = client.get("/").text
    for page in lab_pages():
        assert f'href="/{page.name}/"' in index
        assert "<html" in client.get(f"/{page.name}/").text
        if (page.folder / "data.json").exists():
            assert client.get(f"/{page.name}/data.json").json() == page.data()
    assert "window.Lab" in client.get("/static/lab.js").text


@pytest.mark.skipif(vendor_missing() is not None, reason=str(vendor_missing()))
def test_the_vendored_libraries_are_served_from_node_modules() -> None:
    client = TestClient(create_app())
    package = json.loads((lab_pages()[0].folder.parents[1] / "package.json").read_text())
    for name in package["dependencies"]:
        served = client.get(f"/vendor/{name}/package.json")
        assert served.status_code == 200, name
        assert served.json()["version"] == package["dependencies"][name], name


def test_records_are_in_the_benchmark_format_and_start_on_their_page() -> None:
    from tasks.offline.suite import build_records

    offline_keys = set(build_records()[0])
    records = lab_records()
    assert records
    ids = [r["task_id"] for r in records]
    assert len(ids) == len(set(ids))
    for record in records:
        assert set(record) == offline_keys, record["task_id"]
        assert record["start_url"].startswith(PLACEHOLDER_ORIGIN + "/")
        assert record["oracle_answer"] != "NONE" and record["oracle_output_cardinality"] > 0
        assert record["task_id"] not in {r["task_id"] for r in build_records()}


def test_api_endpoints_answer_a_term_with_the_matching_entries() -> None:
    client = TestClient(create_app())
    for page in lab_pages():
        for name, key in page.api.items():
            entries = page.data()[key]
            first = entries[0] if isinstance(entries[0], str) else json.dumps(entries[0])
            term = (first if isinstance(entries[0], str) else entries[0].get("label", first))[:3]
            got = client.get(f"/{page.name}/api/{name}", params={"q": term}).json()
            assert got and all(term.lower() in json.dumps(g).lower() for g in got), (page.name, name)
            assert client.get(f"/{page.name}/api/{name}", params={"q": ""}).json() == []


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("page", [p.name for p in lab_pages()])
async def test_each_page_builds_its_widgets_in_chromium(page: str, lab_browser, widget_lab) -> None:
    from browser.types import Goto

    errors: list[str] = []
    lab_browser.page.on("pageerror", lambda exc: errors.append(str(exc)))
    result = await lab_browser.act(Goto(url=widget_lab.url(page)))
    assert result.ok, result
    spec = next(p for p in lab_pages() if p.name == page)
    for widget in spec.widgets:
        await lab_browser.page.wait_for_function(f"() => {{ try {{ return ({widget.truth}) !== undefined; }}"
                                                 " catch (e) { return false; } }", timeout=5000)
    assert errors == []
