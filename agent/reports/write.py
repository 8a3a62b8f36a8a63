"""Every report of a run folder, rebuilt from its finished cells (so a resumed run reports all of them)."""

from __future__ import annotations

from pathlib import Path

from agent.reports.ablation import write_ablation
from agent.reports.faults import write_fault_report
from agent.reports.plots import write_plots
from agent.reports.summary import RunSummary, write_summary
from agent.rundir.cells import load_records


def write_run_reports(run_dir: Path, *, html: bool = True) -> RunSummary:
    records = load_records(run_dir)
    summary = write_summary(run_dir, records)
    write_plots(summary, run_dir)
    if len({r.variant for r in records}) > 1:
        write_ablation(run_dir, records)  # the fault table too
    else:  # a faulty replay of one variant still gets its fault table (and report.html shows it)
        write_fault_report(run_dir, records)
    if html:
        from agent.reports.html import write_html_report

        write_html_report(run_dir, summary, records)
    return summary
