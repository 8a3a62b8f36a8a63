"""The shared evaluator: answer text -> SGR-Bench metrics, with evidence. Pure: no browser, LLM or network.

Entry points: `eval.score.score_answer`, `eval.aggregate.aggregate`, `eval.report.write_reports`,
`eval.review` (failure-review records); `eval.cli` holds `sgr score` and `sgr review`.
"""
