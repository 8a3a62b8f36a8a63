"""Deterministic table and card parsing from HTML (no browser)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from browser.tables import extract_tables, parse_cards, parse_fragment, parse_table


def _first(html: str, selector: str = "table"):  # noqa: ANN202 - a bs4 Tag
    return BeautifulSoup(html, "lxml").select_one(selector)


def test_thead_headers_rows_and_links() -> None:
    html = """<table><caption>Trials</caption><thead><tr><th>ID</th><th>Phase</th></tr></thead>
    <tbody><tr><td><a href="/t/1">NCT1</a></td><td>2</td></tr>
           <tr><td><a href="/t/2">NCT2</a> <a href="/t/2/pdf">pdf</a></td><td>3</td></tr></tbody></table>"""
    table = parse_table(_first(html))
    assert table is not None
    assert table.caption == "Trials" and table.headers == ["ID", "Phase"]
    assert table.rows == [["NCT1", "2"], ["NCT2 pdf", "3"]]
    assert table.row_links == [["/t/1"], ["/t/2", "/t/2/pdf"]]
    assert (table.total_rows, table.truncated, table.source) == (2, False, "table")


def test_first_row_of_th_without_thead_is_the_header() -> None:
    html = "<table><tr><th>Year</th><th>Value</th></tr><tr><td>2020</td><td>1.5</td></tr></table>"
    table = parse_table(_first(html))
    assert table is not None and table.headers == ["Year", "Value"] and table.rows == [["2020", "1.5"]]


def test_table_without_header_row_has_blank_headers() -> None:
    table = parse_table(_first("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>"))
    assert table is not None and table.headers == ["", ""]
    assert table.rows == [["a", "b"], ["c", ""]]


def test_colspan_rowspan_and_grouped_headers_line_up() -> None:
    html = """<table><thead>
      <tr><th rowspan="2">Country</th><th colspan="2">Exports</th></tr>
      <tr><th>2020</th><th>2021</th></tr></thead>
      <tbody><tr><td rowspan="2">France</td><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>"""
    table = parse_table(_first(html))
    assert table is not None
    assert table.headers == ["Country", "Exports / 2020", "Exports / 2021"]
    assert table.rows == [["France", "1", "2"], ["France", "3", "4"]]


def test_row_cap_marks_truncation_and_keeps_total() -> None:
    rows = "".join(f"<tr><td>{i}</td></tr>" for i in range(30))
    table = parse_table(_first(f"<table><tr><th>n</th></tr>{rows}</table>"), max_rows=10)
    assert table is not None
    assert len(table.rows) == 10 and table.rows[-1] == ["9"] and table.total_rows == 30 and table.truncated


def test_aria_grid() -> None:
    html = """<div role="grid"><div role="row"><span role="columnheader">Drug</span><span role="columnheader">Year</span></div>
      <div role="row"><span role="gridcell">Aspirin</span><span role="gridcell">1899</span></div></div>"""
    table = parse_table(_first(html, "[role=grid]"))
    assert table is not None and table.headers == ["Drug", "Year"] and table.rows == [["Aspirin", "1899"]]


CARDS = """<section id="r">{}</section>""".format("".join(
    f'<div class="card"><h3 class="title"><a href="/p/{i}">Paper {i}</a></h3>'
    f'<span class="year">{2000 + i}</span><span class="cites">{i * 10} citations</span>'
    + ('<span class="badge">open access</span>' if i == 1 else "") + "</div>"
    for i in range(1, 5)
))


def test_regular_cards_become_rows_with_field_columns() -> None:
    table = parse_cards(_first(CARDS, "#r"))
    assert table is not None and table.source == "cards"
    assert table.headers == ["title", "year", "cites"]  # 'badge' is in only one card of four
    assert table.rows[0] == ["Paper 1", "2001", "10 citations"]
    assert table.rows[3] == ["Paper 4", "2004", "40 citations"]
    assert table.row_links[2] == ["/p/3"]


def test_mixed_label_value_fields_keep_labels() -> None:
    html = "<ul id='r'>" + "".join(
        f"<li class='hit'><b class='name'>Site {i}</b><div class='info'>Depth: <i>{i}0 m</i></div></li>"
        for i in range(3)
    ) + "</ul>"
    table = parse_cards(_first(html, "#r"))
    assert table is not None
    assert table.headers == ["name", "info"]
    assert table.rows[1] == ["Site 1", "Depth: 10 m"]


def test_extract_tables_finds_tables_and_cards_but_not_menus() -> None:
    nav = "<nav><ul>" + "".join(f"<li><a href='/{i}'>Menu {i}</a></li>" for i in range(6)) + "</ul></nav>"
    plain_list = "<ul>" + "".join(f"<li>x{i}</li>" for i in range(5)) + "</ul>"
    html = f"<body>{nav}{plain_list}<table><tr><th>a</th></tr><tr><td>1</td></tr></table>{CARDS}</body>"
    found = extract_tables(html)
    assert [(t.index, t.source) for t in found] == [(0, "table"), (1, "cards")]


def test_fragment_entry_point() -> None:
    table = parse_fragment(CARDS, "cards", index=3)
    assert table is not None and table.index == 3 and table.total_rows == 4
    assert parse_fragment("", "table", index=0) is None


def test_cards_named_by_styling_classes_get_no_header_row() -> None:
    """A comment list whose fields carry utility classes ('d-flex ai-center'): the last class is styling, not a
    column name, so the list shows no header row rather than class names (issue 20); its rows stay whole."""
    html = "<ul id='r'>" + "".join(
        f"<li class='comment'><span class='comment-copy'>Comment {i} text</span>"
        f"<div class='d-inline-flex ai-center'>– user {i}</div><span class='date'>Mar {i}</span></li>"
        for i in range(3)
    ) + "</ul>"
    table = parse_cards(_first(html, "#r"))
    assert table is not None and table.headers == ["", "", ""]
    assert table.rows[2] == ["Comment 2 text", "– user 2", "Mar 2"]


def test_every_cell_keeps_its_links_with_their_refs_and_absolute_addresses() -> None:
    """A cell's links, by row and column (what `link:<header>` extraction and a click by ref need): a spanned
    cell links from its first position only, a javascript: link is no address, refs are the observer's."""
    html = """<table><tr><th>County</th><th>Data</th><th>More</th></tr>
    <tr><td><a href="/c/cedar" data-sgr-ref="e41">Cedar County</a></td><td rowspan="2">1,204</td>
        <td><a href="javascript:void(0)">open</a> <a href="detail?id=7" data-sgr-ref="e42">details</a></td></tr>
    <tr><td colspan="1"><a href="https://other.example/x">Elm</a></td><td></td></tr></table>"""
    table = parse_fragment(html, "table", index=0, base_url="http://site.test/stats/list?page=2")
    assert table is not None and table.headers == ["County", "Data", "More"]
    assert [[[(ln.text, ln.href, ln.ref) for ln in cell] for cell in row] for row in table.cell_links] == [
        [[("Cedar County", "http://site.test/c/cedar", "e41")], [], [("details", "http://site.test/stats/detail?id=7",
                                                                     "e42")]],
        [[("Elm", "https://other.example/x", "")], [], []],
    ]


def test_a_card_links_from_its_fields_and_a_link_in_no_field_goes_to_its_first_cell() -> None:
    html = """<div id="list">""" + "".join(
        f"""<div class="card"><a class="thumb" href="/sp/{i}" data-sgr-ref="t{i}"><img src="x.png"></a>
        <h3 class="name"><a href="/sp/{i}" data-sgr-ref="n{i}">Species {i}</a></h3>
        <span class="status">Status {i}</span><a class="src" href="/src/{i}" data-sgr-ref="s{i}">source {i}</a></div>"""
        for i in range(3)) + "</div>"
    table = parse_cards(_first(html, "#list"))
    assert table is not None and table.rows[0] == ["Species 0", "Status 0", "source 0"]
    first = [[(ln.text, ln.ref) for ln in cell] for cell in table.cell_links[0]]
    assert first == [[("Species 0", "n0"), ("", "t0")], [], [("source 0", "s0")]]
