"""The real-model paths bind the plan gates their pages show by the exact rule (their targets are the labels the
pages show), but for the gates a played full run's setter named in its `gate` field (the model's binding), and a
gate left unbound is said at one read only (graph/plan/binding.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from agent.rundir.evidence import read_evidence
from graph.plan.values import gate_key
from tests.test_real_model_paths import PATHS, _replayed

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

# the gates each path's pages name exactly (the others name no control a page shows: a collection chosen by its
# link, a geography by the page opened, a period the site does not filter by)
BOUND = {
    "offline_regulatory_004-g": {"filter status = Terminated": ["status"],
                                 "window initial_filing_date = 2013-01-01..2015-01-01": ["from", "to"]},
    "offline_scholar_002-g": {"filter category = cs.CL": ["category"],
                              "window latest_version_date = 2021-01-01..2021-12-31": ["from", "to"]},
    "offline_stats_004": {"filter vintage = 2022": ["vintage"], "filter survey_product = 5-year estimates": ["product"]},
    "offline_vulns_003": {"search keyword = local user": ["keyword"], "filter severity = MEDIUM": ["severity"],
                          "filter date_type = Published": ["date_type"],
                          "window published_date_range = 2021-01-01..2021-06-30": ["from", "to"]},
    "offline_water_005-g": {"filter huc = 02040502 | 04040504 | 05040505": ["huc"], "filter site_type = Stream": ["site_type"]},
    "offline_water_005-g-shared-phases": {"scope huc = 02040502": ["huc"], "scope huc = 04040504": ["huc"],
                                          "filter site_type = Stream": ["site_type"]},
}


def _name(gate_id: str) -> str:
    """The normalised gate name of a binding's gate id ('window years = 2009..2015' -> 'years')."""
    return gate_id.split(" ", 1)[1].split(" = ", 1)[0]


@pytest.mark.parametrize("name", sorted(PATHS))
async def test_real_model_path_gates_bound_by_rule(name, offline_server, chromium_worker, tmp_path_factory):
    _, out = await _replayed(name, offline_server, chromium_worker, tmp_path_factory)
    evidence = read_evidence(out)
    assert evidence is not None
    bound = evidence.bindings
    # a played full run's setters may name a gate (`gate=`): only those gates may be bound by the model
    named = {gate_key(str(step.args["gate"])) for step in PATHS[name].steps if step.args.get("gate")}
    assert all(b["by"] == "rule" and "replaced" not in b or b["by"] == "model" and _name(gate) in named
               for gate, b in bound.items()), (bound, named)
    for gate, keys in BOUND.get(name, {}).items():
        assert gate in bound and bound[gate]["keys"] == keys, (gate, bound.get(gate))
    said = Counter(g for table in evidence.tables.values() for read in table.get("reads") or []
                   for g in read.get("unbound") or [])
    assert all(n == 1 for n in said.values()), said
