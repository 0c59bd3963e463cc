"""The search page of `index serve`, driven in a real headless Chromium (tests/support/browser.py) against a
real `index serve` process: typing a question, the results, the filters, the highlighting, the
passage view, the keys, the status view, the API reference, the token, and text that looks like
markup. One browser and one server for the module, on an index built once (the sample corpus and a
folder of notes); each test has a fresh browser context, so nothing carries over between them."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import fields
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from browser import chromium
from conftest import REPO
from serving import ServerProcess, build_sample, plugin_env, plugin_folder, run_index

from indexer.request import MODES
from indexer.search.hit import Hit

#: every test starts `index serve` and a browser (make test-fast leaves them out)
pytestmark = pytest.mark.heavy

XSS = "<img src=x onerror=alert(1)>"
#: Where the screenshot the README shows is written, when asked (`make screenshot`).
SCREENSHOT = os.environ.get("INDEX_SCREENSHOT")


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    return plugin_env(plugin_folder(tmp_path_factory.mktemp("plugins")))


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    """A second folder: a note whose text is markup, a plain-text list, and a note kept twice."""
    folder = tmp_path_factory.mktemp("notes")
    (folder / "markup.md").write_text(
        f"# Pasted markup\n\nThis note quotes {XSS} and <script>window.ran = 1</script> verbatim.\n"
    )
    (folder / "shopping.txt").write_text("Spare inner tube, tyre levers and a patch kit for the ride.\n")
    ferry = "# Ferry\n\nThe lighthouse ferry leaves the north quay at seven and returns at noon.\n"
    (folder / "ferry.md").write_text(ferry)
    (folder / "archive").mkdir()
    (folder / "archive" / "ferry.md").write_text(ferry)  # the same note kept twice
    (folder / "controls.md").write_text(
        "# Retitled \x1b]0;pwned\x07 heading\n\n"
        + "\n".join(f"Filler line {number} about nothing in particular." for number in range(30))
        + "\nThe zanzibar line, reversed by txt.\u202eexe, sits deep in the chunk.\n"
    )
    return folder


@pytest.fixture(scope="module")
def db(tmp_path_factory, env, notes) -> Path:
    db = build_sample(tmp_path_factory.mktemp("index") / "index.db", env)
    added = run_index("build", str(notes), "--db", str(db), "-q", env=env)  # the backend the index records
    assert added.returncode == 0, added.stderr
    return db


@pytest.fixture(scope="module")
def server(db, env, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with ServerProcess(db, env=env, log=log) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


class Page:
    """A browser tab on the server, recording what a user would not see: script errors, refused
    resources (the Content-Security-Policy), alerts, and every request the page makes."""

    def __init__(self, browser, server: ServerProcess, color_scheme: str = "light") -> None:
        self.server = server
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 820}, color_scheme=color_scheme, base_url=server.url
        )
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        self.tab = self.context.new_page()
        self.problems: list[str] = []
        self.requests: list = []
        self.tab.on("console", lambda message: message.type == "error" and self.problems.append(message.text))
        self.tab.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        self.tab.on(
            "dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss())
        )
        self.tab.on("request", lambda request: self.requests.append(request))

    def open(self, address: str = "/") -> Page:
        self.tab.goto(address)
        self.tab.wait_for_function("() => document.getElementById('q') !== null")
        return self

    def search(self, question: str, typed: bool = False) -> list[dict]:
        """Put ``question`` in the box (typed key by key, or at once) and wait for its results;
        what the page shows of each."""
        box = self.tab.locator("#q")
        if typed:
            box.press_sequentially(question, delay=25)
        else:
            box.fill(question)
        return self.wait_for_results(question)

    def searched_after(self, change) -> list[dict]:
        """What the page shows once the search that ``change`` (a call) starts has been answered."""
        with self.tab.expect_response(lambda answer: urlsplit(answer.url).path == "/search") as answer:
            change()
        return self.wait_for_results(parse_qs(urlsplit(answer.value.url).query)["q"][0])

    def wait_for_results(self, question: str) -> list[dict]:
        self.tab.wait_for_function(
            "question => { const list = document.getElementById('results');"
            " return list.dataset.question === question && !list.hasAttribute('aria-busy'); }",
            arg=question,
        )
        return self.results()

    def results(self) -> list[dict]:
        return self.tab.eval_on_selector_all(
            "#results .result",
            """items => items.map(item => ({
                citation: item.querySelector('.citation').textContent,
                score: item.querySelector('.score-value').textContent,
                heading: item.querySelector('.heading')?.textContent ?? '',
                copies: item.querySelector('.copies')?.textContent ?? '',
                snippet: item.querySelector('.snippet').textContent,
                marks: [...item.querySelectorAll('mark')].map(mark => mark.textContent),
                selected: item.getAttribute('aria-selected') === 'true',
            }))""",
        )

    def message(self) -> str:
        return self.tab.locator("#message").text_content()

    def api_requests(self, path: str) -> list:
        return [request for request in self.requests if urlsplit(request.url).path == path]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser, server):
    opened = Page(browser, server)
    yield opened
    opened.close()
    assert opened.problems == [], "the page had errors or refused resources"


def api_hits(server: ServerProcess, **params) -> list[dict]:
    answer = server.get("/search", params={"k": 20, "mode": "hybrid", **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


def citation(hit: dict) -> str:
    """The citation the library gives a hit of ``GET /search``."""
    return Hit(**{name: value for name, value in hit.items() if name in HIT_FIELDS}).citation


HIT_FIELDS = {field.name for field in fields(Hit)}


def test_typing_a_question_shows_the_hits_with_score_citation_heading_and_marked_words(page, server):
    shown = page.open().search("puncture", typed=True)
    expected = api_hits(server, q="puncture")
    assert [result["citation"] for result in shown] == [citation(hit) for hit in expected]
    assert [result["score"] for result in shown] == [f"{hit['score']:.2f}" for hit in expected]
    assert [result["heading"] for result in shown] == [hit["heading"] for hit in expected]
    marked = [result for result in shown if result["marks"]]
    assert marked
    assert all(mark.lower().startswith("punctur") for result in marked for mark in result["marks"])
    top = shown[0]
    assert re.fullmatch(r"\S+\.md:\d+-\d+", top["citation"])
    assert "puncture" in top["snippet"].lower()
    assert re.fullmatch(r"\d+ results? in \d+ ms", page.message())
    assert parse_qs(urlsplit(page.tab.url).query)["q"] == ["puncture"]  # a reload keeps the search


def test_search_waits_for_a_pause_in_typing_and_cancels_the_one_in_flight(page):
    page.open()
    held = []

    def hold_first(route) -> None:
        if not held:
            held.append(route)  # never answered: the next search must abort it
        else:
            route.continue_()

    page.tab.route("**/search?*", hold_first)
    with page.tab.expect_event("requestfailed") as aborted:
        # the first word in one input: a pause between keys of a loaded machine would search a prefix
        page.tab.locator("#q").fill("tyre")
        for _ in range(250):
            if held:
                break
            page.tab.wait_for_timeout(20)
        page.tab.locator("#q").press_sequentially(" levers", delay=25)
    assert parse_qs(urlsplit(aborted.value.url).query)["q"] == ["tyre"]
    shown = page.wait_for_results("tyre levers")
    assert shown
    assert any("levers" in result["snippet"] for result in shown)
    searches = [parse_qs(urlsplit(request.url).query)["q"][0] for request in page.api_requests("/search")]
    # a search per pause, not one per key (11 keys typed)
    assert searches[0] == "tyre"
    assert searches[-1] == "tyre levers"
    assert len(searches) <= 4


def test_filters_are_the_index_folders_types_and_modes_and_narrow_the_results(page, server, notes):
    page.open()
    status = server.get("/status").json()
    # the page fills its filters once its own request for the status is answered
    page.tab.wait_for_function(
        f"() => document.querySelectorAll('#root option').length === {len(status['roots']) + 1}"
    )
    roots = page.tab.eval_on_selector_all("#root option", "options => options.map(o => o.value)")
    assert roots == ["", *[root["path"] for root in status["roots"]]]
    types = page.tab.eval_on_selector_all("#type option", "options => options.map(o => o.value)")
    assert types[0] == ""
    assert {"md", "txt", "ipynb"} <= set(types[1:])
    assert types[1:] == [kind["type"] for kind in status["types"]]
    modes = page.tab.eval_on_selector_all("#mode option", "options => options.map(o => o.value)")
    assert modes == list(MODES)

    page.tab.select_option("#mode", "keyword")
    page.tab.select_option("#type", "txt")
    shown = page.search("tyre")
    assert shown
    assert all(re.match(r"\S+\.txt:", result["citation"]) for result in shown)
    assert [result["citation"] for result in shown] == [
        citation(hit) for hit in api_hits(server, q="tyre", mode="keyword", type="txt")
    ]
    page.searched_after(lambda: page.tab.select_option("#type", ""))
    shown = page.searched_after(lambda: page.tab.select_option("#root", str(notes)))
    assert {result["citation"].split(":")[0] for result in shown} == {"shopping.txt"}
    page.searched_after(lambda: page.tab.select_option("#root", ""))
    shown = page.searched_after(lambda: page.tab.fill("#path", "bicycle-repair/*"))
    assert shown
    assert all(result["citation"].startswith("bicycle-repair/") for result in shown)
    last = parse_qs(urlsplit(page.api_requests("/search")[-1].url).query)
    assert last["mode"] == ["keyword"]
    assert last["path"] == ["bicycle-repair/*"]


def test_a_question_nothing_matches_says_so_and_what_to_try(page):
    page.open()
    page.tab.select_option("#mode", "keyword")
    assert page.search("zqxjvw") == []
    assert (
        page.message()
        == "No results for “zqxjvw” in keyword mode. Try hybrid mode, vector mode or showing weaker hits."
    )
    page.tab.select_option("#type", "txt")
    page.wait_for_results("zqxjvw")
    page.searched_after(lambda: page.tab.fill("#q", "zqxjvw qqqq wwww yyyy"))
    assert page.message().endswith(
        "Try hybrid mode, vector mode, showing weaker hits or without the filters (type txt), or fewer words."
    )
    page.searched_after(lambda: page.tab.click("#message .try >> text=without the filters (type txt)"))
    assert page.tab.locator("#type").input_value() == ""
    assert "filters" not in page.message()
    page.searched_after(lambda: page.tab.click("#message .try >> text=showing weaker hits"))
    assert parse_qs(urlsplit(page.api_requests("/search")[-1].url).query)["min_score"] == ["0"]
    assert parse_qs(urlsplit(page.tab.url).query)["min_score"] == ["0"]
    page.searched_after(lambda: page.tab.click("#message .try >> text=vector mode"))
    assert page.tab.locator("#mode").input_value() == "vector"
    assert page.results()  # in vector mode every chunk is near, however weakly


def test_a_text_kept_in_two_files_is_one_result_citing_both(page, server):
    shown = page.open().search("lighthouse ferry")
    expected = api_hits(server, q="lighthouse ferry")
    [copy] = expected[0]["copies"]
    assert {citation(expected[0]), copy["citation"]} == {"ferry.md:1-3", "archive/ferry.md:1-3"}
    assert shown[0]["citation"] == citation(expected[0])
    assert shown[0]["copies"] == f"also in {copy['citation']}"  # the same folder: no folder named
    assert [result["copies"] for result in shown[1:]] == [""] * (len(shown) - 1)


def test_a_snippet_shows_the_lines_that_match_without_markup_or_raw_controls(page, server):
    page.open("/?mode=keyword")
    shown = page.search("zanzibar")
    expected = api_hits(server, q="zanzibar", mode="keyword")
    assert shown[0]["citation"].startswith("controls.md")
    assert "zanzibar line" in expected[0]["snippet"] and "Filler line 0" not in expected[0]["snippet"]
    assert shown[0]["snippet"] == expected[0]["snippet"].replace("\u202e", "\\u202e")
    assert shown[0]["heading"] == "Retitled \\x1b]0;pwned\\x07 heading"
    assert shown[0]["marks"] == ["zanzibar"]
    page.tab.locator("#results .result").first.click()
    page.tab.wait_for_selector("#passage-text .line")
    text = page.tab.locator("#passage-text").text_content()
    assert "txt.\\u202eexe" in text and "\u202e" not in text
    assert page.tab.locator("#passage-heading").text_content() == "Retitled \\x1b]0;pwned\\x07 heading"


def test_an_opened_hit_has_its_own_address_and_the_back_button_closes_it(page, browser, server):
    page.open("/?mode=keyword")
    shown = page.search("tyre")
    page.tab.locator("#results .result").nth(1).click()
    page.tab.wait_for_selector("#passage-text .line")
    address = urlsplit(page.tab.url)
    assert parse_qs(address.query)["open"] == [shown[1]["citation"]]
    page.tab.go_back()
    page.tab.wait_for_function("() => document.getElementById('passage-body').hidden")
    assert "open" not in parse_qs(urlsplit(page.tab.url).query)
    assert page.tab.locator("#q").input_value() == "tyre"
    page.tab.go_forward()
    page.tab.wait_for_function("() => !document.getElementById('passage-body').hidden")
    assert page.tab.locator("#passage-title").text_content() == shown[1]["citation"]

    shared = Page(browser, server)  # the address, opened by someone else
    try:
        shared.open(f"{address.path}?{address.query}")
        shared.tab.wait_for_selector("#passage-text .line.hit")
        assert shared.tab.locator("#passage-title").text_content() == shown[1]["citation"]
        assert shared.tab.locator("#q").input_value() == "tyre"
        assert shared.problems == []
    finally:
        shared.close()


@pytest.mark.parametrize("width", [1280, 700])
def test_the_search_box_stays_reachable_with_a_hit_open(browser, server, width):
    page = Page(browser, server)
    try:
        page.tab.set_viewport_size({"width": width, "height": 600})
        page.open("/?mode=keyword")
        page.search("tyre")
        page.tab.locator("#results .result").last.scroll_into_view_if_needed()
        page.tab.locator("#results .result").last.click()
        page.tab.wait_for_selector("#passage-text .line")
        box = page.tab.locator("#q").bounding_box()
        assert box is not None and box["y"] >= 0
        on_top = "([x, y]) => document.elementFromPoint(x, y)?.id"
        assert page.tab.evaluate(on_top, [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]) == "q"
        page.tab.locator("#q").fill("patch")
        assert page.wait_for_results("patch")
        assert page.problems == []
    finally:
        page.close()


def test_a_result_opens_its_passage_with_the_text_around_it_a_citation_to_copy_and_the_file(page, server):
    page.open()
    page.search('"clear backing film"')  # the phrase: the hash vectors of the test backend rank nothing
    hit = api_hits(server, q='"clear backing film"')[0]
    assert hit["path"] == "bicycle-repair/fixing-a-flat-tyre.md"
    assert hit["start_line"] > 20
    page.tab.locator("#results .result").first.click()
    title = page.tab.locator("#passage-title")
    assert title.text_content() == citation(hit)
    page.tab.wait_for_selector("#passage-text .line.hit")
    lines = page.tab.eval_on_selector_all(
        "#passage-text .line",
        "rows => rows.map(row => [Number(row.querySelector('.number').textContent), "
        "row.querySelector('.text').textContent, row.classList.contains('hit')])",
    )
    numbers = [number for number, _, _ in lines]
    assert numbers[0] < hit["start_line"]
    assert numbers[-1] > hit["end_line"]  # the text around it
    assert [number for number, _, hit_line in lines if hit_line] == list(
        range(hit["start_line"], hit["end_line"] + 1)
    )
    source = (Path(hit["root"]) / hit["path"]).read_text().split("\n")
    assert all(text == source[number - 1] or not source[number - 1].strip() for number, text, _ in lines)
    assert page.tab.locator("#passage-text mark").count() >= 1

    page.tab.click("#more-above")
    page.tab.wait_for_function(
        "first => Number(document.querySelector('#passage-text .number').textContent) < first", arg=numbers[0]
    )
    assert page.tab.locator("#more-below").is_hidden()  # the file ends there
    page.tab.click("#copy-citation")
    assert page.tab.evaluate("navigator.clipboard.readText()") == citation(hit)
    link = page.tab.locator("#file-link")
    link.wait_for(state="visible")
    assert link.get_attribute("href") == (Path(hit["root"]) / hit["path"]).as_uri()


def test_keys_alone_search_move_through_the_results_and_open_one(page):
    page.open()
    page.tab.select_option("#mode", "keyword")
    page.tab.locator("body").click(position={"x": 5, "y": 400})  # focus off the box
    page.tab.keyboard.press("/")
    assert page.tab.evaluate("document.activeElement.id") == "q"
    page.tab.keyboard.type("tyre")
    shown = page.wait_for_results("tyre")
    assert len(shown) >= 3
    for _ in range(3):
        page.tab.keyboard.press("ArrowDown")
    page.tab.keyboard.press("ArrowUp")
    assert [result["selected"] for result in page.results()][:3] == [False, True, False]
    assert page.tab.evaluate("document.activeElement.id") == "result-1"
    page.tab.keyboard.press("Enter")
    assert page.tab.locator("#passage-title").text_content() == shown[1]["citation"]
    page.tab.keyboard.press("ArrowDown")  # with the passage open, it follows the selection
    assert page.tab.locator("#passage-title").text_content() == shown[2]["citation"]
    page.tab.keyboard.press("Escape")
    assert page.tab.locator("#passage-body").is_hidden()
    assert page.tab.evaluate("document.activeElement.id") == "result-2"
    page.tab.keyboard.press("ArrowUp")
    page.tab.keyboard.press("ArrowUp")
    page.tab.keyboard.press("ArrowUp")
    assert page.tab.evaluate("document.activeElement.id") == "q"


def test_results_and_a_passage_appear_without_moving_what_is_on_the_page(page):
    page.open("/?mode=keyword")
    boxes = "() => ['q', 'results', 'passage'].map(id => { const b = document.getElementById(id)"
    boxes += ".getBoundingClientRect(); return [b.x, b.y, b.width]; })"
    before = page.tab.evaluate(boxes)
    page.search("tyre")
    with_results = page.tab.evaluate(boxes)
    page.tab.locator("#results .result").first.click()
    page.tab.wait_for_selector("#passage-text .line")
    with_passage = page.tab.evaluate(boxes)
    assert before == with_results == with_passage


def test_the_status_view_shows_the_folders_files_model_size_and_builds_with_their_chart(page, server, db):
    page.open("/#status")
    page.tab.wait_for_selector("#builds tr >> nth=1")
    status = server.get("/status", params={"builds": 30}).json()
    cards = dict(
        zip(
            page.tab.eval_on_selector_all("#status-cards .card-label", "els => els.map(e => e.textContent)"),
            page.tab.eval_on_selector_all("#status-cards .card-value", "els => els.map(e => e.textContent)"),
            strict=True,
        )
    )
    assert cards["Files"] == f"{status['files']:,}"
    assert cards["Chunks"] == f"{status['chunks']:,}"
    assert cards["Model"] == "plugin-v1"
    assert cards["Index"] == str(db)
    assert cards["Size"] == f"{status['size_bytes'] / 2**20:.1f} MB"
    folders = page.tab.eval_on_selector_all("#roots td.path", "cells => cells.map(c => c.textContent)")
    assert folders == [root["path"] for root in status["roots"]]
    builds = page.tab.eval_on_selector_all(
        "#builds tr", "rows => rows.slice(1).map(r => r.children[0].textContent)"
    )
    assert builds == [str(build["id"]) for build in status["builds"]]
    assert len(builds) == 2
    charts = page.tab.locator("#build-charts figure")
    assert charts.count() == 2
    embedded = charts.nth(1).locator("rect.bar")
    heights = [float(embedded.nth(index).get_attribute("height")) for index in range(embedded.count())]
    oldest_first = [build["chunks_embedded"] for build in reversed(status["builds"])]
    assert len(heights) == 2
    assert (heights[0] > heights[1]) == (oldest_first[0] > oldest_first[1])
    assert "build #" in embedded.first.locator("title").text_content()
    chips = page.tab.eval_on_selector_all("#types .chip", "chips => chips.map(c => c.textContent)")
    assert chips == [f".{kind['type']} {kind['files']}" for kind in status["types"]]


def test_a_document_holding_markup_shows_it_as_text_and_runs_nothing(page):
    page.open()
    page.tab.select_option("#mode", "keyword")
    shown = page.search("pasted markup onerror quotes")
    quoted = [result for result in shown if result["citation"].startswith("markup.md")]
    assert quoted
    assert (
        quoted[0]["snippet"] == "Pasted markup\nThis note quotes and window.ran = 1 verbatim."
    )  # markup never shows raw
    page.tab.locator("#results .result", has_text="markup.md").first.click()
    page.tab.wait_for_selector("#passage-text .line")
    assert XSS in page.tab.locator("#passage-text").text_content()
    assert page.tab.locator("main img, main script, #results iframe").count() == 0
    assert page.tab.evaluate("window.ran") is None
    # the page's fixture then checks that no alert opened and nothing was refused or failed


def test_every_answer_forbids_inline_scripts_and_other_origins_and_allows_no_cors(server):
    for path in ("/", "/static/app.js", "/docs", "/search?q=tyre", "/status", "/nowhere"):
        answer = server.get(path, headers={"Origin": server.url})
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert "script-src 'self';" in policy
        assert "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert not any(name.lower().startswith("access-control-") for name in answer.headers), path
    foreign = server.get("/search?q=tyre", headers={"Origin": "http://attacker.example"})
    assert foreign.status_code == 403
    assert "content-security-policy" in foreign.headers
    preflight = httpx.options(
        server.url + "/search?q=tyre",
        headers={"Origin": "http://attacker.example", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_the_api_reference_at_docs_loads_nothing_from_outside_and_tries_a_request(page, server):
    outside: list[str] = []
    page.context.route(
        lambda url: not url.startswith(server.url),
        lambda route: (outside.append(route.request.url), route.abort()),
    )
    page.tab.goto("/docs")
    page.tab.wait_for_selector(".operation")
    titles = page.tab.eval_on_selector_all(".operation-title code", "codes => codes.map(c => c.textContent)")
    assert {"/search", "/chunks/{citation}", "/status", "/health"} <= set(titles)
    health = page.tab.locator(".operation", has_text="/health")
    health.locator("button").click()
    assert health.locator(".answer .status").text_content().startswith("200")
    assert '"ok"' in health.locator(".answer pre.json").text_content()
    assert outside == []
    assert server.get("/redoc").status_code == 404  # FastAPI's other CDN page is gone too


def test_with_a_token_the_page_asks_once_keeps_it_for_the_tab_and_never_puts_it_in_an_address(
    browser, db, env, tmp_path
):
    token = "tab-token-0123456789"
    copy = tmp_path / "index.db"  # a server of its own: the module's announces itself beside `db`
    for suffix in ("", "-wal"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
    with ServerProcess(copy, "--token", token, env=env, log=tmp_path / "serve.log") as guarded:
        page = Page(browser, guarded)
        try:
            page.tab.goto("/")
            dialog = page.tab.locator("#token-dialog")
            dialog.wait_for(state="visible")
            page.tab.fill("#token-input", "wrong")
            page.tab.keyboard.press("Enter")
            page.tab.locator("#token-refused").wait_for(state="visible")
            page.tab.fill("#token-input", token)
            page.tab.keyboard.press("Enter")
            page.tab.select_option("#mode", "keyword")
            assert page.search("tyre")
            page.tab.reload()
            assert page.wait_for_results("tyre")  # the search in the address, answered with the kept token
            page.tab.goto("/docs")
            page.tab.wait_for_selector(".operation")  # /openapi.json with the same token
            assert dialog.is_hidden()
            assert page.tab.evaluate("sessionStorage.getItem('indexer.token')") == token
            answered = [
                request
                for request in page.requests
                if urlsplit(request.url).path in ("/search", "/status", "/openapi.json")
                and request.response().status == 200
            ]
            assert len(answered) >= 4
            assert all(request.headers.get("authorization") == f"Bearer {token}" for request in answered)
            assert all(token not in request.url for request in page.requests)
            assert page.tab.evaluate("location.href").find(token) == -1
            # what Chromium logs of each 401, the page's own question for the token
            assert [problem for problem in page.problems if "401" not in problem] == []
        finally:
            page.close()
        another = Page(browser, guarded)  # another session asks again
        try:
            another.tab.goto("/")
            another.tab.locator("#token-dialog").wait_for(state="visible")
        finally:
            another.close()
    assert token not in guarded.output()


def test_the_page_follows_the_system_light_or_dark_and_is_shown_in_the_readme(browser, server, tmp_path):
    colours = {}
    for scheme in ("light", "dark"):
        page = Page(browser, server, color_scheme=scheme)
        try:
            page.open()
            page.search("how to patch a puncture")
            page.tab.locator("#results .result").nth(2).click()
            page.tab.wait_for_selector("#passage-text .line.hit")
            colours[scheme] = page.tab.evaluate("getComputedStyle(document.body).backgroundColor")
            shot = Path(SCREENSHOT) if SCREENSHOT and scheme == "light" else tmp_path / f"{scheme}.png"
            page.tab.mouse.move(0, 0)
            png = page.tab.screenshot(path=shot)
            assert png.startswith(b"\x89PNG")
            assert len(png) > 20_000
            assert page.problems == []
        finally:
            page.close()
    assert colours["light"] != colours["dark"]
    assert "(docs/search-page.png)" in (REPO / "README.md").read_text()
    assert (REPO / "docs" / "search-page.png").read_bytes().startswith(b"\x89PNG")
