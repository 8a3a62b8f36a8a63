"""The SGR-Bench authors' scoring, reimplemented: `sgr score --compat authors`.

Written from reading the authors' scorer (`Ninggggy/sgr-bench-extend`, `ten_task_phase/runtime/score.py`
at commit abcf288, called by its `run.py` and `admission.py`); none of their code is copied. Parsing,
canonicalisation, keys, types and metrics follow theirs so a score here means what the paper's does;
where our default mode differs, `docs/evaluator.md` lists the case and why.
"""
