"""The compact text: controls always whole, long option lists summarised, budget kept by cutting rows first."""

from __future__ import annotations

import re
from pathlib import Path

from browser.render import SHORTEN_TO, collapsed_controls, control_line, render
from browser.tokens import count_tokens
from browser.types import CellLink, Control, Link, Observation, Option, Pagination, TableData


def _select(ref: str, label: str, n: int, selected: int = 0) -> Control:
    options = [Option(label=f"opt {i}", value=str(i), selected=i == selected) for i in range(n)]
    return Control(ref=ref, kind="select", label=label, value=f"opt {selected}", options=options)


def _obs(**kwargs: object) -> Observation:
    return Observation(url="http://x.test/s?q=a&page=2", query_state={"q": ["a"], "page": ["2"]}, **kwargs)


def test_control_lines_by_kind() -> None:
    assert control_line(_select("e1", "Sort", 3, 1)) == '[e1] select "Sort" = "opt 1" {opt 0 | opt 1 | opt 2}'
    assert control_line(Control(ref="e2", kind="checkbox", label="Open", checked=True)) == '[e2] checkbox "Open" [x]'
    assert control_line(Control(ref="e3", kind="tab", label="Map", checked=True)) == '[e3] tab "Map" (selected)'
    assert control_line(Control(ref="e4", kind="submit", label="Go", disabled=True)) == '[e4] submit "Go" (disabled)'
    assert control_line(Control(ref="f1e1", kind="text", label='Say "hi"', value="", frame="f1:x")) == (
        "[f1e1] text \"Say 'hi'\" = \"\" (in frame f1:x)"
    )


def test_long_option_list_is_summarised_with_the_selected_option() -> None:
    line = control_line(_select("e1", "Country", 200, selected=150))
    assert line.startswith('[e1] select "Country" = "opt 150" {opt 0 | opt 1 |')
    assert "opt 9 | opt 150 | … 189 more of 200 — list_options e1 for all}" in line
    assert "opt 10 " not in line and "opt 151" not in line
    assert "opt 29}" in control_line(_select("e2", "At the limit", 30))
    assert "… 21 more of 31" in control_line(_select("e3", "Just over", 31))


def test_long_pager_shows_ends_and_the_pages_around_the_current_one() -> None:
    options = [Option(label=str(i), value=f"?page={i}", selected=i == 15) for i in range(1, 32)]
    options.append(Option(label="Next", value="?page=16"))
    line = control_line(Control(ref="e9", kind="link", label="Result pages", value="15", options=options))
    assert line == ('[e9] link "Result pages" = "15" {1 | 2 | … | 13 | 14 | 15* | 16 | 17 | … | 30 | 31 | Next} '
                    "(31 page links; * = current)")


def test_header_state_pagination_and_notices() -> None:
    obs = _obs(
        title="Results",
        pagination=Pagination(page=2, pages=5, first=11, last=20, total=48, page_size=10, has_next=True, has_prev=True),
        result_count=48,
        notices=["[dialog] Accept cookies"],
    )
    text, tokens = _text_tokens(obs)
    assert text.splitlines()[:3] == ["URL: http://x.test/s", "State: q=a; page=2", "Title: Results"]
    assert "Pagination: page 2 of 5; showing 11-20 of 48; page size 10; next: yes; prev: yes" in text
    assert "Result count: 48" in text and "NOTICES:\n[dialog] Accept cookies" in text
    assert tokens == count_tokens(text)


def _big_obs(n_controls: int) -> Observation:
    table = TableData(index=0, headers=["name", "value"], rows=[[f"row {i}", str(i)] for i in range(300)],
                      total_rows=300)
    return _obs(
        controls=[_select(f"e{i}", f"Filter {i}", 4) for i in range(n_controls)],
        tables=[table],
        outline=[f"Paragraph {i} with some words in it" for i in range(100)],
        links=[Link(ref=f"e{1000 + i}", text=f"Doc {i}", href=f"http://x.test/d/{i}") for i in range(100)],
    )


def test_budget_respected_and_rows_cut_from_the_end() -> None:
    text, tokens = _text_tokens(_big_obs(10), token_budget=1500)
    assert tokens <= 1500 and tokens == count_tokens(text)
    assert all(f'[e{i}] select "Filter {i}"' in text for i in range(10))
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith("| row ")]
    assert rows[0] == "| row 0 | 0 |" and len(rows) < 300
    assert rows[-1] == f"| row {len(rows) - 1} | {len(rows) - 1} |"  # a prefix: cut from the end
    assert f"… {300 - len(rows)} more rows of TABLE 0 not shown — read_table 0" in lines
    assert "OUTLINE:" in lines and "LINKS:" in lines  # the other sections get their share
    assert "[e1000] Doc 0 -> /d/0" in lines  # same-origin links as paths
    assert "TABLE 0 (300 rows)" in lines


def _text_tokens(obs: Observation, token_budget: int = 1500) -> tuple[str, int]:
    shown = render(obs, token_budget)
    return shown.text, shown.tokens


def test_the_fixed_part_is_bounded_and_every_control_keeps_a_ref_and_a_read() -> None:
    """60 dropdowns in a 300-token budget: the first ones whole, the rest as one line naming every ref and the
    read that lists them (issue 20: no page exceeds the budget; every control addressable)."""
    obs = _big_obs(60)
    text = render(obs, 300)
    assert text.tokens <= 300 and text.budget == 300 and not text.complete
    shown = [i for i in range(60) if f'[e{i}] select "Filter {i}"' in text.text]
    assert shown == list(range(len(shown))) and 2 <= len(shown) < 60  # a prefix of the list, whole
    tail = f"… {60 - len(shown)} more controls ({60 - len(shown)} select), refs e{len(shown)}-e59 — " \
           f"list_options e{len(shown)} lists them"
    assert tail in text.text.splitlines()
    members = collapsed_controls(obs, 300)
    assert list(members) == [f"e{len(shown)}"]
    assert [c.ref for c in members[f"e{len(shown)}"]] == [f"e{i}" for i in range(len(shown), 60)]
    assert "LINKS: … 100 more links not shown — list_links" in text.text  # nothing left out silently
    assert "more outline lines not shown" in text.text


def test_unused_share_flows_to_other_sections() -> None:
    obs = _obs(outline=[f"Line {i} of the outline text" for i in range(400)])
    text, tokens = _text_tokens(obs, token_budget=1500)
    assert 1300 < tokens <= 1500  # the outline may use what tables and links do not need
    assert "more outline lines" in text


def test_rendering_is_deterministic() -> None:
    assert render(_big_obs(5)) == render(_big_obs(5))


def test_the_graph_holds_no_parser_of_the_observation_text() -> None:
    """One owner of the observation's text format (issue 19): the browser renders the whole text and the delta;
    graph/ asks for them and never matches the format's markers or ref lines itself."""
    root = Path(__file__).resolve().parent.parent / "graph"
    markers = ("OUTLINE:", "LINKS:", "NOTICES:", '"TABLE ', "not shown —", "(page unchanged", "{…}", "CONTROLS (")
    ref_line = re.compile(r"""re\.(?:compile|match|search|findall|finditer|sub|split)\(\s*r?["'][^"']*\\\[""")
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert not [m for m in markers if m in source], path
        assert not ref_line.search(source), f"{path}: a regex over bracketed (ref) lines"


def test_no_page_exceeds_the_budget_whatever_its_fixed_part_holds() -> None:
    """A title, labels, values, query values and notices of thousands of characters: each is cut to a length,
    notices beyond their share are counted in a note, and the controls that do not fit are one line with refs."""
    huge = "word " * 2000
    obs = Observation(
        url="http://x.test/s?q=" + "9" * 5000, query_state={"q": ["9" * 5000]}, title=huge,
        controls=[Control(ref=f"e{i}", kind="text", label=huge, value=huge) for i in range(1, 101)],
        notices=[f"[notice] {huge}" for _ in range(50)],
        outline=["Main text line"], outline_total=1)
    text, tokens = _text_tokens(obs, 1500)
    assert tokens <= 1500
    assert "… " in text and "more notice(s) not shown" in text
    assert "Main text line" in text  # the content's share survives
    shown = {c.ref for c in obs.controls if f"[{c.ref}] text" in text}
    collapsed = {c.ref for members in collapsed_controls(obs).values() for c in members}
    assert shown | collapsed == {c.ref for c in obs.controls}


def _station_page(rows: int, links: int = 40) -> Observation:
    """A station index: a title line, a two-column main table and site links."""
    table = TableData(index=0, caption="Stations by name", headers=["Station Name", "Station Number"],
                      rows=[[f"RIVER NUMBER {i} NEAR TOWN {i}", f"08AB{i:03d}"] for i in range(rows)],
                      total_rows=rows)
    return _obs(tables=[table], outline=["# Station Name Index", "Stations in alphabetic order."], outline_total=2,
                outline_main=2,
                links=[Link(ref=f"e{100 + i}", text=f"Site page {i}", href=f"http://x.test/p/{i}") for i in range(links)],
                links_total=links)


def test_a_main_table_that_fits_whole_goes_before_the_links_share() -> None:
    """Issue 20: the page's own content first. A 75-row main table fits the budget whole when the links wait: it
    is shown whole and the links take what is left, the rest named in the note; a table too long to fit whole
    leaves the links their share (how the model moves on)."""
    text, tokens = _text_tokens(_station_page(75), token_budget=1500)
    assert tokens <= 1500 and "| RIVER NUMBER 74 NEAR TOWN 74 | 08AB074 |" in text
    assert "more rows of TABLE 0" not in text and "more links not shown — list_links" in text
    text, tokens = _text_tokens(_station_page(150), token_budget=1500)
    assert tokens <= 1500 and "more rows of TABLE 0 not shown — read_table 0" in text
    assert sum(1 for line in text.splitlines() if line.startswith("[e1")) >= 5  # the links' share


def test_the_budget_is_spent_whole() -> None:
    """A cut section's head line is paid for once, and what per-line estimates leave unused goes to a second
    layout: a text cut for want of room ends within a few tokens of the budget."""
    for budget in (600, 1000, 1500):
        text, tokens = _text_tokens(_station_page(150), token_budget=budget)
        assert budget - 25 <= tokens <= budget, (budget, tokens)
        assert tokens == count_tokens(text)


def _long_text_page(long_lines: int, words: int) -> Observation:
    """A description page: short lines and a few long ones (lists of names), and its closing lines."""
    outline = ["# Description of the resource"]
    refs = [""]
    for i in range(30):
        outline.append(f"Short point {i} of the description")
        refs.append("")
        if i % 6 == 0 and long_lines:
            long_lines -= 1
            outline.append(f"Catalogs {i}: " + ", ".join(f"Name{j}" for j in range(words)))
            refs.append(f"e{50 + i}")
    outline.append("Closing line: the licence of the resource")
    refs.append("")
    return _obs(outline=outline, outline_total=len(outline), outline_main=len(outline), outline_refs=refs)


def test_the_main_text_is_shown_whole_with_its_longest_lines_cut() -> None:
    """When the main text does not fit, its longest lines are cut to one length (each ending with the read that
    returns it whole) if that shows every line, the last ones too; a text that fits is left whole, and one that
    does not fit even cut to SHORTEN_TO characters is cut from the end as before."""
    obs = _long_text_page(5, 120)
    text, tokens = _text_tokens(obs, token_budget=800)
    assert tokens <= 800 and "Closing line: the licence of the resource" in text
    cut = [line for line in text.splitlines() if line.startswith("Catalogs ")]
    assert len(cut) == 5 and all(line.endswith(f"… [read_section e{50 + 6 * k}]") for k, line in enumerate(cut))
    assert len({len(line.split("… [read_section")[0]) for line in cut}) == 1  # one length for all
    assert all(len(line.split("… [read_section")[0]) >= SHORTEN_TO - 1 for line in cut)
    text, _ = _text_tokens(obs, token_budget=3000)
    assert "[read_section" not in text and "Name119" in text  # it fits: nothing cut
    text, tokens = _text_tokens(_long_text_page(5, 120), token_budget=250)
    assert tokens <= 250 and "Closing line" not in text and "more outline lines not shown — read_section" in text


def test_an_empty_cell_is_one_space_and_the_columns_still_line_up() -> None:
    table = TableData(index=0, headers=["", "Type", "Tags"], rows=[["1930 - 1930", "Flow", ""], ["", "", "x"]],
                      total_rows=2)
    text, _ = _text_tokens(_obs(tables=[table]))
    assert "| | Type | Tags |\n| 1930 - 1930 | Flow | |\n| | | x |" in text


def test_per_post_widgets_give_way_to_the_content_as_one_line_of_running_refs() -> None:
    """A thread of 40 posts, each with its vote toggles and share/flag buttons in its own box (issue 20): when the
    posts' text does not fit, the widgets of every post are one line - the boxes joined by their alike controls,
    the refs one run - and the read that lists them; the text gets the budget."""
    controls = [Control(ref=f"e{4 * p + k + 1}", kind=kind, label=label, checked=False if kind == "toggle" else None,
                        box=f"b{p}", box_label="answer")
                for p in range(40)
                for k, (kind, label) in enumerate([("toggle", "Up vote"), ("toggle", "Down vote"),
                                                   ("button", "Share"), ("button", "Flag")])]
    outline = [f"Post {p}: the answer's own text, long enough to need the budget of the page " * 2 for p in range(40)]
    obs = _obs(controls=controls, outline=outline, outline_total=40, outline_main=40)
    text, tokens = _text_tokens(obs, 1500)
    panel = [line for line in text.splitlines() if " panel " in line]
    assert panel == ['[e1] panel "answer": 160 controls (80 toggle, 80 button), refs e1-e160 — list_options e1 '
                     'lists them']
    assert sorted(c.ref for c in collapsed_controls(obs)["e1"]) == sorted(c.ref for c in controls)
    assert tokens <= 1500 and sum(1 for line in outline if line in text) >= 15


def test_a_rows_links_carry_their_refs_and_rows_left_out_are_one_read_away() -> None:
    """Issue 27: `[e41] Cedar County` - a result row's link is clicked by its ref; an icon link (no text) and a
    second link to an address the row already gave a ref cost nothing; the rows cut say which read has them."""
    rows, links = [], []
    for i in range(60):
        rows.append([f"County {i}", f"{i} points by user{i} 2 hours ago | 5 comments", ""])
        links.append([[CellLink(text=f"County {i}", href=f"http://x.test/c/{i}", ref=f"e{100 + 4 * i}")],
                      [CellLink(text=f"user{i}", href=f"http://x.test/u/{i}", ref=f"e{101 + 4 * i}"),
                       CellLink(text="2 hours ago", href=f"http://x.test/item/{i}", ref=f"e{102 + 4 * i}"),
                       CellLink(text="5 comments", href=f"http://x.test/item/{i}", ref=f"e{103 + 4 * i}")],
                      [CellLink(text="", href="http://x.test/vote", ref=f"v{i}")]])
    table = TableData(index=0, headers=["Name", "Info", ""], rows=rows, cell_links=links, total_rows=60)
    text, tokens = _text_tokens(_obs(tables=[table]), token_budget=800)
    assert "| [e100] County 0 | 0 points by [e101] user0 [e102] 2 hours ago / 5 comments | |" in text
    assert "e103" not in text and "[v0]" not in text
    shown = [i for i in range(60) if f"[e{100 + 4 * i}] County {i} |" in text]
    assert tokens <= 800 and shown == list(range(len(shown))) and 5 < len(shown) < 60
    assert f"… {60 - len(shown)} more rows of TABLE 0 not shown — read_table 0" in text
