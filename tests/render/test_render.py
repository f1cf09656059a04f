"""Pages whose JSON-LD only JavaScript writes, rendered in Debian's chromium headless shell (real).

The fixture site `render-js` serves SPA shells in the style of MagIC, R2R, Neotoma and
USAP-DC over real HTTP on 127.0.0.1. One browser serves the whole module (the process's
`adapter.render.browser` service, started by the first page), budgets are short.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.http.addresses import AddressPolicy
from adapter.http.fetcher import Fetcher
from adapter.limits import Limits
from adapter.models import Fetched
from adapter.pipeline import CheckOptions, check_landing_page, get_page, read_whole
from adapter.render import browser
from adapter.render import findings as rf
from adapter.render import page as render_page
from adapter.render.need import holds_dataset, wants_rendering
from adapter.render.rendered import CHROMIUM, render_if_needed
from adapter.render.route import ScriptCache
from tests.support.cli import run_in_process
from tests.support.fixture_server import SiteServer, start_site, stop

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(),
    reason="no chromium-headless-shell (apt-get install; .ci/run does)",
)
JS_PAGES = {  # path -> (the DOI its script writes, how)
    "/magic/16789": ("10.7288/v4/magic/16789", "inlined state, written at once"),
    "/r2r/cruise/RR1904": ("10.7284/908415", "after a fetch() of the API"),
    "/neotoma/site/4721": ("10.21233/n34w2x", "after a deferred load of 1.2 s, then a fetch()"),
    "/usap/dataset/601234": ("10.15784/601234", "after a fetch(), with Signposting <link>s"),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[list[SiteServer]]:
    running = start_site("render-js")
    yield running
    stop(running)


@pytest.fixture(scope="module")
def site(servers: list[SiteServer]) -> SiteServer:
    return servers[0]


def fetcher_for(site: SiteServer, **limits: float) -> Fetcher:
    caps = Limits().with_overrides({"render_budget": 6, **limits})
    return Fetcher(caps, policy=AddressPolicy([site.origin]), retry_base_delay=0.05)


def check(site: SiteServer, path: str, *extra: str) -> dict[str, Any]:
    ran = run_in_process(
        ["check-dataset", "--json", "--profile", "mnlite", *extra, site.url(path)], ROOT
    )
    assert ran.returncode in (0, 1), ran.stderr
    report: dict[str, Any] = json.loads(ran.stdout)
    return report


def codes(report: dict[str, Any]) -> list[str]:
    every = [*report["findings"], *(f for d in report["datasets"] for f in d["findings"])]
    return [f["code"] for f in every]


@pytest.mark.parametrize("path", list(JS_PAGES))
def test_check_dataset_render_reads_what_the_scripts_wrote(site: SiteServer, path: str) -> None:
    doi, _how = JS_PAGES[path]
    static = check(site, path)
    assert not static["rendered"] and not static["datasets"]
    assert "extract/js-rendered" in codes(static)  # unchanged without --render

    report = check(site, path, "--render")
    assert report["rendered"] is True
    assert [d["doi"] for d in report["datasets"]] == [doi]
    assert report["harvestable"], codes(report)
    assert rf.RENDERED.code in codes(report)
    assert "extract/js-rendered" not in codes(report)
    rendered = next(f for f in report["findings"] if f["code"] == rf.RENDERED.code)
    assert "serve them in the HTML itself" in rendered["message"]


def test_the_signposting_links_a_script_adds_are_read(site: SiteServer) -> None:
    report = check(site, "/usap/dataset/601234", "--render")
    links = {(s["rel"], s["href"], s["source"]) for s in report["signposts"]}
    assert ("cite-as", "https://doi.org/10.15784/601234", "html") in links
    assert ("item", site.url("/files/601234/ions.csv"), "html") in links
    # the Link header of the real response stays (the HTML page's own, not the browser's)
    magic = check(site, "/magic/16789", "--render")
    assert any(o["rel"] == "canonical" and o["source"] == "header" for o in magic["other_links"])


def test_the_text_report_says_the_page_was_rendered(site: SiteServer) -> None:
    ran = run_in_process(["check-dataset", "--render", site.url("/r2r/cruise/RR1904")], ROOT)
    assert "rendered: read from the page as a browser built it" in ran.stdout
    assert "render/rendered" in ran.stdout


def test_a_page_with_its_jsonld_in_the_html_is_not_rendered(site: SiteServer) -> None:
    fetcher = fetcher_for(site)
    page = get_page(fetcher, site.url("/catalog/1"))
    assert isinstance(page, Fetched) and holds_dataset(page, fetcher.limits)
    assert not wants_rendering(page, "auto", fetcher.limits)
    assert wants_rendering(page, "always", fetcher.limits)
    assert render_if_needed(page, fetcher, "auto", 2) is page
    report = check(site, "/catalog/1", "--render")
    assert not report["rendered"] and report["harvestable"]


def test_private_addresses_never_leave_the_browser(servers: list[SiteServer]) -> None:
    site, other = servers  # other: https://cdn.other.example, a loopback port not trusted
    report = check(site, "/probe/ssrf", "--render")
    assert report["rendered"] and report["datasets"]  # the page itself was read
    blocked = [f["message"] for f in report["findings"] if f["code"] == rf.REQUEST_BLOCKED.code]
    said = "\n".join(blocked)
    assert "http://10.0.0.1/admin" in said and "private address" in said
    assert "http://169.254.169.254/latest/meta-data/" in said and "cloud metadata" in said
    assert other.url("/beacon.json") in said and "loopback" in said
    assert "http://[::1]:22/" in said
    assert "method POST" in said
    assert "http://169.254.170.2/v2/credentials" in said  # a frame
    assert "http://192.168.1.1/" in said  # the page taken elsewhere: not followed
    assert other.log == []  # not one request reached the other server
    assert not [r for r in site.log if r.method == "POST" or r.path == "/api/track"]
    assert not [r for r in site.log if r.path.endswith((".png", ".css", ".woff2", ".ico"))]


def test_images_fonts_and_stylesheets_are_never_fetched(site: SiteServer) -> None:
    check(site, "/r2r/cruise/RR1904", "--render")
    paths = {r.path for r in site.log}
    assert "/api/dataset/RR1904.json" in paths and "/static/js/app.4f9e2b.js" in paths
    assert not paths & {"/static/css/main.8c1d2e.css", "/static/img/logo.png",
                        "/static/fonts/inter-var.woff2", "/favicon.ico"}  # fmt: skip


def test_a_repositorys_script_bundle_is_fetched_once_per_node(site: SiteServer) -> None:
    def bundle_gets() -> int:
        return sum(r.path == "/static/js/app.4f9e2b.js" for r in site.log)

    fetcher = fetcher_for(site)  # a node: its own address policy
    before = bundle_gets()
    for path in ("/r2r/cruise/RR1904", "/usap/dataset/601234", "/magic/16789"):
        out = render_if_needed(get_page(fetcher, site.url(path)), fetcher, "auto", 2)
        assert isinstance(out, Fetched) and out.rendered
    assert bundle_gets() == before + 1  # three pages, one bundle
    other = fetcher_for(site)  # another node, trusting the same origin: asks for itself
    out = render_if_needed(get_page(other, site.url("/r2r/cruise/RR1904")), other, "auto", 2)
    assert isinstance(out, Fetched) and out.rendered
    assert bundle_gets() == before + 2


def test_a_policy_gone_lends_its_cached_scripts_to_no_later_policy() -> None:
    """The cache is keyed by the fetcher's policy: one freed (its node's run over) must not
    have its private-origin scripts served to a policy that CPython put at its address."""
    cache = ScriptCache(lambda: 0.0)
    url = "http://10.0.0.7/static/js/app.js"
    script = Fetched(url=url, final_url=url, status=200, headers={}, body=b"var x = 1;")
    for _ in range(100):  # each freed after its call: their addresses free for the next
        cache.put(AddressPolicy(["http://10.0.0.7"]), url, script)
    leaked = [cache.get(AddressPolicy(), url) for _ in range(100)]
    assert leaked == [None] * 100


def test_the_page_is_fetched_once(site: SiteServer) -> None:
    def gets() -> int:
        return sum(r.path == "/neotoma/site/4721" and r.method == "GET" for r in site.log)

    before = gets()
    check(site, "/neotoma/site/4721", "--render")
    assert gets() == before + 1  # the browser is handed the adapter's response


def test_a_page_without_a_dataset_ends_when_it_goes_quiet(site: SiteServer) -> None:
    fetcher = fetcher_for(site, render_budget=8)
    page = get_page(fetcher, site.url("/search"))
    assert isinstance(page, Fetched)
    out = render_if_needed(page, fetcher, "auto", 2)
    assert isinstance(out, Fetched) and out.rendered
    assert b"Record RR1904" in out.body  # what the script built
    [rendered] = [f for f in out.render_findings if f.code == rf.RENDERED.code]
    assert "its scripts went quiet" in rendered.message
    seconds = float(rendered.message.split(" after ")[1].split(" s)")[0])
    assert seconds < 4, rendered.message  # quiet, not the 8 s budget
    assert rf.BUDGET_SPENT.code not in [f.code for f in out.render_findings]


def test_a_page_that_never_goes_quiet_is_read_when_the_budget_ends(site: SiteServer) -> None:
    fetcher = fetcher_for(site, render_budget=1.5)
    page = get_page(fetcher, site.url("/ticker/1"))
    assert isinstance(page, Fetched)
    out = render_if_needed(page, fetcher, "auto", 2)
    assert isinstance(out, Fetched) and out.rendered
    assert b'<span id="clock">1' in out.body  # read as it stood
    [spent] = [f for f in out.render_findings if f.code == rf.BUDGET_SPENT.code]
    assert site.url("/ticker/1") in spent.message
    report = check_landing_page(page.url, fetcher, CheckOptions(fetcher.limits), prefetched=out)
    assert report.rendered and not read_whole(report)


@pytest.mark.slow
def test_a_page_that_hangs_is_cut_off_and_the_next_page_renders(
    site: SiteServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetcher = fetcher_for(site, render_budget=1.5)
    page = get_page(fetcher, site.url("/hang/1"))
    assert isinstance(page, Fetched)
    with monkeypatch.context() as short:
        # after the budget the DOM is asked for, given GRACE (5 s, for a starved page process
        # that is slow to answer) before the page is called hung: this page never answers,
        # and its renderer spins a core all the while. 1 s proves the same, 4 s sooner
        short.setattr(render_page, "GRACE", 1.0)
        out = render_if_needed(page, fetcher, "auto", 2)
    assert isinstance(out, Fetched) and not out.rendered
    assert out.body == page.body  # the page as served is what is read
    [failed] = [f for f in out.render_findings if f.code == rf.RENDER_FAILED.code]
    assert "hung" in failed.message and site.url("/hang/1") in failed.message
    report = check_landing_page(page.url, fetcher, CheckOptions(fetcher.limits), prefetched=out)
    assert rf.RENDER_FAILED.code in [f.code for f in report.findings]
    assert not read_whole(report)  # a Dataset may hide in what was not rendered
    # the browser was restarted: the next page renders
    nxt = render_if_needed(get_page(fetcher, site.url("/magic/16789")), fetcher, "auto", 2)
    assert isinstance(nxt, Fetched) and nxt.rendered


@pytest.mark.slow
def test_a_page_whose_process_runs_out_of_memory_is_reported(site: SiteServer) -> None:
    fetcher = fetcher_for(site)
    page = get_page(fetcher, site.url("/oom/1"))
    assert isinstance(page, Fetched)
    out = render_if_needed(page, fetcher, "auto", 2)
    assert isinstance(out, Fetched) and not out.rendered and out.body == page.body
    [failed] = [f for f in out.render_findings if f.code == rf.RENDER_FAILED.code]
    # its process dies of it; on a starved machine the budget may end the page first
    assert "crashed" in failed.message or "hung" in failed.message, failed.message
    nxt = render_if_needed(get_page(fetcher, site.url("/r2r/cruise/RR1904")), fetcher, "auto", 2)
    assert isinstance(nxt, Fetched) and nxt.rendered


def _browser_pids() -> list[int]:
    """The chromium main processes below this one (its renderers carry --type=)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"chromium" in cmdline and b"--type=" not in cmdline and _below(parent):
            found.append(int(entry.name))
    return found


def _below(pid: int) -> bool:
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


@pytest.mark.slow
def test_a_browser_that_died_is_started_again_and_the_run_goes_on(site: SiteServer) -> None:
    fetcher = fetcher_for(site)
    first = render_if_needed(get_page(fetcher, site.url("/magic/16789")), fetcher, "auto", 2)
    assert isinstance(first, Fetched) and first.rendered
    service = browser.service(CHROMIUM)
    launches = service.launches
    pids = _browser_pids()
    assert pids, "the browser runs below this process"
    for pid in pids:  # the browser this test's process started, by its id
        os.kill(pid, signal.SIGKILL)
    outcomes = []
    for _ in range(3):  # a page in flight as it died is reported; the next starts a browser
        page = get_page(fetcher, site.url("/r2r/cruise/RR1904"))
        out = render_if_needed(page, fetcher, "auto", 2)
        assert isinstance(out, Fetched)
        outcomes.append(out)
        if out.rendered:
            break
        assert rf.RENDER_FAILED.code in [f.code for f in out.render_findings]
    assert outcomes[-1].rendered
    assert service.launches == launches + 1


# One fresh interpreter without Playwright (a test process has imported it and the render
# modules, so a command importing them too early would pass here and fail where it is not
# installed) runs each command in it, as `run_in_process` does, and then a sync.
WITHOUT_PLAYWRIGHT = """
import json, sys
sys.modules['playwright'] = None
from pathlib import Path
from tests.support.cli import run_in_process
commands, sitemap, store = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
out = {}
for name, args in commands.items():
    ran = run_in_process(args, Path.cwd())
    out[name] = [ran.returncode, ran.stdout, ran.stderr]
from adapter.config.load import quick_node
from adapter.config.settings import AdapterConfig
from adapter.extras import MissingExtra
from adapter.sync.run import run_node
node = quick_node(sitemap, 'urn:node:R', rendering={'mode': 'auto'})
config = AdapterConfig(store_url='sqlite:///' + store, nodes=(node,))
try:
    run_node(config, node)
    out['sync'] = 'ran'
except MissingExtra as exc:
    out['sync'] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.slow  # a fresh interpreter: its imports are the point
def test_without_playwright_asking_for_rendering_says_what_to_install(
    site: SiteServer, tmp_path: Path
) -> None:
    commands = {
        "asked": ["check-dataset", "--render", site.url("/r2r/cruise/RR1904")],
        "plain": ["check-dataset", "--json", site.url("/catalog/1")],  # nothing else changes
        "listed": ["findings", "--json"],
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    store = tmp_path / "store.db"
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PLAYWRIGHT, json.dumps(commands),
         site.url("/sitemap.xml"), str(store)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    code, _, stderr = out["asked"]
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "playwright" in lines[0] and "pip install 'dataone-slender-adapter[render]'" in lines[0]
    code, stdout, stderr = out["plain"]
    assert code in (0, 1), stderr
    assert json.loads(stdout)["rendered"] is False
    code, stdout, _ = out["listed"]
    assert code == 0 and rf.RENDERED.code in stdout
    # a node that asks for rendering: its sync stops before anything, saying what to install
    assert out["sync"].startswith("rendering pages in a browser"), out["sync"]
    assert "pip install 'dataone-slender-adapter[render]'" in out["sync"]
    assert not store.exists()  # stopped before the store was opened
