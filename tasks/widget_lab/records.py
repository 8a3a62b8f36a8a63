"""Lab task records in the SGR-Bench record format (the same keys as the offline release's records).

`lab_record` builds one; `write_records(page, records)` writes `pages/<page>/records.jsonl`. Page authors call
them from a small script (or write the JSONL by hand); the registry reads the files.
"""

from __future__ import annotations

import json
from typing import Any

from tasks.widget_lab.registry import PAGES_DIR, PLACEHOLDER_ORIGIN


def lab_record(page: str, number: int, instruction: str, schema: list[str], rows: list[list[Any]], order: str,
               gates: list[str], library: str, category: str) -> dict[str, Any]:
    """One record: rows are the answer's rows in order; the output is `;`-separated, `|` between fields."""
    answer = ";".join("|".join(str(cell) for cell in row) for row in rows) or "NONE"
    fields = "|".join(schema)
    return {
        "task_id": f"lab_{page}_{number:03d}",
        "instruction": instruction,
        "domain": "WIDGET_LAB",
        "autonomy_type": "ordered table",
        "oracle_output_cardinality": len(rows),
        "start_url": f"{PLACEHOLDER_ORIGIN}/{page}/",
        "output_format": f"Output records separated by `;` as `{fields}` (fields separated by `|`), no header row; "
                         f"order: {order}. If no record qualifies, output NONE.",
        "oracle_answer": answer,
        "metadata": json.dumps({"State-Gated Retrieval": gates, "family": "Widget lab", "library": library,
                                "widget_category": category, "task_shape": "copy"}),
        "rubric": json.dumps({"normalization": {"field_separator": "|", "record_separator": ";", "header_row": False,
                                                "schema": schema, "sorting_or_selection": order}}),
    }


def write_records(page: str, records: list[dict[str, Any]]) -> None:
    (PAGES_DIR / page / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
