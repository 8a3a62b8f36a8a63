"""The fault classes of the faulty policy: names, what each mistake is, and which nodes should catch it.

A module of constants only, so the reports can name and order the classes without loading a chat model.
"""

from __future__ import annotations

FAULT_FILE = "fault.json"  # in a cell folder: what the faulty policy injected (agent.measuring.faulty writes it)
FAULT_CLASSES = ("kept_default", "wrong_option", "navigation_reset", "first_page_only", "detail_skipped",
                 "wrong_window", "stale_rows")
FAULT_DESCRIPTIONS = {
    "kept_default": "a control the plan names is left at its default (its setting step skipped)",
    "wrong_option": "a control the plan names is set to another of its options",
    "navigation_reset": "after applying the state, the search page is opened again and submitted with its "
                        "defaults, then the rows are read",
    "first_page_only": "a result set of several pages is read on page 1 only",
    "detail_skipped": "one listed result's own page, which the plan needs, is never opened",
    "wrong_window": "a narrower time window, or another year in a scope parameter, than the plan's",
    "stale_rows": "rows are read while only part of the state is set, and kept next to the later rows",
}
# Nodes whose job is to catch each class (the ablation should show these classes fall without them).
FAULT_OWNERS = {
    "kept_default": ("planner", "state_tracker", "verifier", "provenance"),
    "wrong_option": ("planner", "state_tracker", "verifier", "provenance"),
    "navigation_reset": ("planner", "state_tracker", "verifier", "provenance"),
    "first_page_only": ("verifier",),
    "detail_skipped": ("planner", "verifier"),
    "wrong_window": ("planner", "state_tracker", "verifier", "provenance"),
    "stale_rows": ("planner", "verifier", "provenance"),
}
