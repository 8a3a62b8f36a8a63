"""The held-out offline tasks: new questions on the existing offline sites, kept apart from the suite's 60.

Why it exists: every task of the suite has been played by a real model and the agent's checks were tuned
while watching those runs, so a score on them partly measures that tuning. These tasks were written after
that, on the same sites, data and mechanics, and no check of the agent was written for them: a run on them is
the honest measurement. They live in their own release folder (this one, `sgr offline build` writes it), load
as the named source `offline-heldout` (`sgr run --task ID --tasks offline-heldout`), and never join
`load_tasks("offline")`.

Each module holds one task: its query chosen from the seeded data in code, its oracle rows computed from that
data, both wordings (`TaskDraft`) and the scripted walkthrough that solves it; `release` assembles them.
"""
