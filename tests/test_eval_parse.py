"""Answer parsing: dialects, schema-aware record splitting, headers, NONE, parse failures, audit trail."""

from eval.canonical import canonicalize
from eval.parse import parse_answer
from tasks.spec import OutputSpec

SPEC = OutputSpec(columns=("id", "company", "state"))


def test_canonicalize_strips_presentation_only():
    assert canonicalize("  **[Alpha  Beta](https://x.org/a)**  ") == "Alpha Beta"
    assert canonicalize("`ＡＢＣ１２３`") == "ABC123"  # NFKC folds full-width forms
    assert canonicalize("Mixed Case, punct.") == "Mixed Case, punct."  # no case folding, no punctuation loss


def test_semicolon_records_with_commas_inside_company_names():
    spec = OutputSpec(columns=SPEC.columns, record_separator=";")
    text = "1|X HOLDINGS, INC.|NY; 2|ACME, LLC|CA;3|Plain Co|TX;"
    parsed = parse_answer(text, spec)
    assert parsed.rows == [["1", "X HOLDINGS, INC.", "NY"], ["2", "ACME, LLC", "CA"], ["3", "Plain Co", "TX"]]


def test_comma_records_split_where_the_field_count_ends_a_record():
    spec = OutputSpec(columns=SPEC.columns, record_separator=",")
    text = "1|X HOLDINGS, INC.|NY, 2|Beta|1,234, 3|Gamma|TX"
    parsed = parse_answer(text, spec)
    # "INC." continues a value; "1,234" is a thousands separator; the rest are record boundaries
    assert parsed.rows == [["1", "X HOLDINGS, INC.", "NY"], ["2", "Beta", "1,234"], ["3", "Gamma", "TX"]]


def test_comma_records_one_per_line_also_parse():
    spec = OutputSpec(columns=SPEC.columns, record_separator=",")
    parsed = parse_answer("1|A|NY,\n2|B|CA", spec)
    assert parsed.rows == [["1", "A", "NY"], ["2", "B", "CA"]]


def test_single_column_semicolon_list():
    spec = OutputSpec(columns=("company",), record_separator=";")
    assert parse_answer("ACME; X HOLDINGS; Y CORP", spec).rows == [["ACME"], ["X HOLDINGS"], ["Y CORP"]]


def test_markdown_table_header_and_rule_rows_are_dropped_and_kept_for_audit():
    text = "Here you go:\n\n| ID | Company | State |\n| --- | :---: | ---: |\n| 1 | A | NY |\n"
    parsed = parse_answer(text, SPEC)
    assert parsed.rows == [["1", "A", "NY"]]
    assert parsed.header_seen
    assert [(i.line, i.reason) for i in parsed.ignored] == [
        (1, "no field separator"),
        (3, "header row"),
        (4, "table separator row"),
    ]


def test_header_detection_is_case_and_style_insensitive():
    spec = OutputSpec(columns=("arxiv_id", "first author"))
    parsed = parse_answer("ArXiv ID|First_Author\n2301.1|Smith", spec)
    assert parsed.header_seen and parsed.rows == [["2301.1", "Smith"]]


def test_escaped_pipe_stays_inside_the_cell():
    parsed = parse_answer(r"1|A \| B|NY", SPEC)
    assert parsed.rows == [["1", "A | B", "NY"]]


def test_tabs_and_code_fences():
    parsed = parse_answer("```text\n1\tA\tNY\n2\tB\tCA\n```", SPEC)
    assert parsed.rows == [["1", "A", "NY"], ["2", "B", "CA"]]
    assert [i.reason for i in parsed.ignored] == ["code fence", "code fence"]


def test_csv_only_after_a_header_row():
    parsed = parse_answer('id,company,state\n1,"X HOLDINGS, INC.",NY', SPEC)
    assert parsed.rows == [["1", "X HOLDINGS, INC.", "NY"]]
    without_header = parse_answer('1,"X HOLDINGS, INC.",NY', SPEC)
    assert without_header.status == "parse_failure"


def test_none_and_empty_are_legitimate_empty_answers():
    assert parse_answer("", SPEC).status == "empty"
    assert parse_answer("  \n ", SPEC).status == "empty"
    assert parse_answer("NONE", SPEC).status == "empty"
    assert parse_answer("No matching rows.\n**NONE**", SPEC).status == "empty"


def test_prose_without_rows_is_a_parse_failure_with_every_line_kept():
    parsed = parse_answer("I could not find it.\nSorry.", SPEC)
    assert parsed.status == "parse_failure"
    assert [i.text for i in parsed.ignored] == ["I could not find it.", "Sorry."]


def test_custom_field_separator():
    spec = OutputSpec(columns=("a", "b"), field_separator=" ~ ")
    assert parse_answer("x ~ y\nz ~ w", spec).rows == [["x", "y"], ["z", "w"]]


def test_non_newline_record_separator_still_accepts_one_tsv_record_per_line():
    spec = OutputSpec(columns=SPEC.columns, record_separator=";")
    assert parse_answer("1\tA\tNY\n2\tB\tCA", spec).rows == [["1", "A", "NY"], ["2", "B", "CA"]]
