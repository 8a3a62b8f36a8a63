"""The ablation's fault table explains a missed fault that did no harm (issue 40): EM 100 on a missed fault is a
harmless default, said in words, and a missed fault with a wrong answer is a real miss."""

from __future__ import annotations

from agent.reports.faults import FaultCell, fault_rows, render_fault_markdown


def _cell(task_id: str, em: float, *, flagged: bool = False) -> FaultCell:
    return FaultCell(model="faulty-walkthrough", variant="full", ablated="-", task_id=task_id, fault="kept_default",
                     injected=True, injected_at=3, by_tracker=flagged, by_verifier=False, em=em, item_f1=em,
                     detail="kept the default 'All years' of Year")


def test_a_missed_fault_with_em_100_is_explained_as_harmless() -> None:
    cells = [_cell("offline_stats_001", 1.0), _cell("offline_stats_002", 0.0), _cell("offline_vulns_001", 1.0,
                                                                                        flagged=True)]
    text = render_fault_markdown(fault_rows(cells), [], cells)
    missed = text.split("## Not flagged by the full agent")[1].split("##")[0]
    assert "EM 100 on a missed fault means the mistake did no harm" in missed
    rows = {line.split("|")[1].strip(): line for line in missed.splitlines() if line.startswith("| offline")}
    assert set(rows) == {"offline_stats_001", "offline_stats_002"}  # the flagged one is not a miss
    assert "harmless: the answer stayed exact" in rows["offline_stats_001"]
    assert "MISSED: the answer is wrong" in rows["offline_stats_002"]
