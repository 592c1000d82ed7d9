"""The docs site (`tools/render_docs.py`: nbdev's processed notebooks through MkDocs Material) in a real browser.

Served from 127.0.0.1, it is walked as a reader would: from the front page along the navigation to every page, with
no console error and every figure decoded on each; the search finds `SkillTreeEnv` and lands on its API entry; every
tutorial page and one API page are screenshotted (into a temporary folder, or `$DOCS_SCREENSHOTS`). The built HTML
asks nothing of the network: no script, style, font or image from an http(s) URL.

Needs Debian's chromium and chromium-driver (`.ci/run` installs them where it can), selenium (the dev extra) and
mkdocs-material (the docs extra); the browser tests skip, saying which is missing, when they are not there."""
import fcntl, functools, http.server, importlib.util, json, os, re, shutil, sys, tempfile, threading
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = shutil.which('chromium') or '/usr/bin/chromium', shutil.which('chromedriver') or '/usr/bin/chromedriver'
missing = [name for name, ok in [('chromium', Path(CHROMIUM).exists()), ('chromedriver', Path(CHROMEDRIVER).exists()),
                                 ('selenium', importlib.util.find_spec('selenium') is not None),
                                 ('mkdocs-material', importlib.util.find_spec('material') is not None)] if not ok]
needs_browser = pytest.mark.skipif(bool(missing), reason=f'browser docs test needs {", ".join(missing)} (sudo apt-get '
                                   'install -y bubblewrap chromium chromium-driver; pip install -e ".[dev,docs]")')
needs_mkdocs = pytest.mark.skipif(importlib.util.find_spec('material') is None, reason='needs mkdocs-material (the docs extra)')
sys.path.insert(0, str(ROOT / 'tools'))
FIGURES = 'return Array.from(document.images).map(i => [i.complete && i.naturalWidth > 0, i.getAttribute("src")])'
NAV = 'return Array.from(document.querySelectorAll("nav.md-nav--primary a.md-nav__link[href]")).map(a => a.href)'


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    "The site built into a folder of this test worker's own and served on a free port of 127.0.0.1."
    from render_docs import render
    out = tmp_path_factory.mktemp('site') / '_docs'
    # the build's intermediate folders are shared: two xdist workers must not build at once
    with open(Path(tempfile.gettempdir()) / 'dataenvgym-docs-build.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pages = render(out)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield out, pages, f'http://127.0.0.1:{server.server_address[1]}/'
    server.shutdown(); server.server_close()


@pytest.fixture(scope='module')
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-sync',
                 '--disable-background-networking', '--disable-component-update', '--disable-dev-shm-usage',
                 f'--user-data-dir={tmp_path_factory.mktemp("chromium")}', '--window-size=1280,900']:
        opts.add_argument(flag)
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def _open(browser, url: str) -> list[str]:
    "Load `url`; returns its console errors."
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(url)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script('return document.readyState') == 'complete')
    return [e['message'] for e in browser.get_log('browser') if e['level'] == 'SEVERE']


def _screenshot(browser, path: Path):
    "The whole page (up to 12,000 pixels tall) as a PNG."
    height = min(browser.execute_script('return document.documentElement.scrollHeight'), 12000)
    browser.set_window_size(1280, max(height, 900))
    browser.save_screenshot(str(path))
    browser.set_window_size(1280, 900)


@needs_mkdocs
def test_site_loads_nothing_from_the_network(site):
    out, pages, _ = site
    remote = re.compile(r'<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]+"|url\(["\']?(?:https?:)?//')
    found = {p.relative_to(out).as_posix(): m.group(0) for p in out.rglob('*') if p.suffix in ('.html', '.css', '.js')
             for m in [remote.search(p.read_text(encoding='utf-8', errors='replace'))] if m}
    assert not found, found
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in pages}
    assert max(sizes.values()) < 400_000, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


@needs_browser
def test_navigation_reaches_every_page_with_its_figures(site, browser, tmp_path_factory):
    out, pages, url = site
    shots = Path(os.environ.get('DOCS_SCREENSHOTS') or tmp_path_factory.mktemp('docs-screenshots'))
    shots.mkdir(parents=True, exist_ok=True)
    expected = {url + p.relative_to(out).as_posix() for p in pages}
    seen, todo, problems = set(), [url + 'index.html'], []
    while todo:                                              # breadth-first along the navigation, from the front page
        page = todo.pop(0)
        if page in seen: continue
        seen.add(page)
        rel = page[len(url):]
        errors = _open(browser, page)
        figures = browser.execute_script(FIGURES)
        if errors: problems.append(f'{rel}: console errors {errors[:3]}')
        if bad := [src for ok, src in figures if not ok]: problems.append(f'{rel}: figures that did not decode {bad[:3]}')
        if rel.startswith('tutorials/') or rel == 'teaching.envs.html': _screenshot(browser, shots / rel.replace('/', '_').replace('.html', '.png'))
        todo += [link for link in (urldefrag(h)[0] for h in browser.execute_script(NAV))
                 if link.startswith(url) and link not in seen]
    assert not problems, '\n'.join(problems)
    assert expected <= seen, f'not reachable from the navigation: {sorted(expected - seen)}'
    tutorials = sorted(p.name for p in shots.glob('tutorials_*.png'))
    assert len(tutorials) == len(list((ROOT / 'nbs' / 'tutorials').glob('[!.]*.ipynb'))) >= 8, tutorials   # not a test's temporary copy
    assert (shots / 'teaching.envs.png').stat().st_size > 10_000
    print(f'screenshots in {shots}')


@needs_browser
def test_search_lands_on_the_api_entry(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    _, _, url = site
    assert not _open(browser, url + 'index.html')
    box = browser.find_element(By.CSS_SELECTOR, 'input.md-search__input')
    box.click()
    box.send_keys('SkillTreeEnv')
    hit = lambda b: [a for a in b.find_elements(By.CSS_SELECTOR, '.md-search-result a.md-search-result__link')
                     if urldefrag(a.get_attribute('href'))[1] == 'skilltreeenv']
    links = WebDriverWait(browser, 20).until(hit)
    links[0].click()
    WebDriverWait(browser, 10).until(lambda b: urldefrag(b.current_url)[1] == 'skilltreeenv')
    entry = browser.find_element(By.ID, 'skilltreeenv')
    assert entry.text.strip().startswith('SkillTreeEnv') and browser.current_url.startswith(url + 'teaching.envs.html')
    signature = browser.execute_script('return arguments[0].nextElementSibling.textContent', entry)
    assert re.match(r'(def|class) SkillTreeEnv\(', signature.strip()), signature[:200]


@needs_mkdocs
def test_pydantic_models_list_their_fields(site):
    "A pydantic model's API entry is a table of its fields (type, default, what it is), never `**data: Any`."
    out, _, _ = site
    config = (out / 'teaching.config.html').read_text(encoding='utf-8')
    for field in ('seed_per_subskill', 'seed_cache', 'what needs a GPU'):
        assert field in config, f'RunConfig entry lacks {field!r}'
    train = (out / 'lm.html').read_text(encoding='utf-8')
    assert 'num_generations' in train and 'lora_alpha' in train          # GRPOSettings, SFTSettings
    pages = ''.join(p.read_text(encoding='utf-8') for p in out.glob('*.html'))
    assert 'A base class for creating Pydantic models' not in pages     # pydantic's own docstring never leaks
    assert '**data' not in pages


class _Anchors(__import__('html.parser').parser.HTMLParser):
    "The ids, the links (`a href`) and the first `h1` of an HTML page."
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.h1, self._in_h1 = set(), [], '', False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'): self.ids.add(a['id'])
        if tag == 'a' and a.get('href') is not None: self.links.append(a['href'])
        if tag == 'h1' and not self.h1: self._in_h1 = True
    def handle_endtag(self, tag):
        if tag == 'h1': self._in_h1 = False
    def handle_data(self, data):
        if self._in_h1: self.h1 += data


def dead_links(out: Path) -> list[str]:
    "Every link between the site's pages whose page or anchor is not there: `page.html: target`."
    skip = ('search', 'assets', '404.html')                 # mkdocs' 404 page links from the site's root, wherever it is
    pages = {p.relative_to(out).as_posix(): p for p in out.rglob('*.html') if p.relative_to(out).parts[0] not in skip}
    parsed = {}
    for rel, p in pages.items(): parsed[rel] = _Anchors(); parsed[rel].feed(p.read_text(encoding='utf-8'))
    dead = []
    for rel, page in parsed.items():
        for href in page.links:
            if re.match(r'^[a-z][a-z0-9+.-]*:', href) or href.startswith('//'): continue    # http(s), mailto: not here
            target, anchor = urldefrag(urljoin(rel, href))
            target = target or rel
            if (out / target).is_dir(): target = (Path(target) / 'index.html').as_posix()
            if target not in parsed and not (out / target).exists(): dead.append(f'{rel}: {href}')
            elif anchor and target in parsed and anchor not in parsed[target].ids: dead.append(f'{rel}: {href}')
    return dead


@needs_mkdocs
def test_no_dead_link_or_anchor_and_every_page_titled(site):
    "Every link between pages lands on a page and an anchor that exist; every notebook page has its own title (`# name`)."
    from render_docs import front_matter, processed, sidebar
    out, pages, _ = site
    dead = dead_links(out)
    assert not dead, f'{len(dead)} dead links or anchors:\n' + '\n'.join(dead[:40])
    proc = processed()
    untitled = [rel for rel in sidebar(proc) if rel != 'index.ipynb'
                and not front_matter(json.loads((proc / rel).read_text(encoding='utf-8'))).get('title')]
    assert not untitled, f'notebooks without a title cell (# name, then > one line): {untitled}'
    for p in pages:
        page = _Anchors(); page.feed(p.read_text(encoding='utf-8'))
        assert page.h1.strip(' ¶\n'), f'{p.relative_to(out)} has no title'


@needs_mkdocs
def test_serve_and_gym_pages_have_an_entry_per_public_name(site):
    """The pages of modules that need the `serve` extra (their `show_doc` cells are not run: `skip_showdoc`) still have
    an entry, with its signature or field table and docstring, for each public function and class of `__all__`."""
    import ast
    out, _, _ = site
    checked = 0
    for module in ('serve', 'gyms', 'teaching.serve', 'repair.serve', 'repair.gym'):
        tree = ast.parse((ROOT / 'dataenvgym' / (module.replace('.', '/') + '.py')).read_text())
        public = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                      and any(getattr(t, 'id', '') == '__all__' for t in n.targets))
        names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in public]
        page = _Anchors(); page.feed((out / f'{module}.html').read_text(encoding='utf-8'))
        missing = [n for n in names if n.lower() not in page.ids]
        assert not missing, f'{module}: no API entry for {missing}'
        checked += len(names)
    assert checked > 10, checked
    serve = (out / 'serve.html').read_text(encoding='utf-8')
    assert 'make_app' in serve and 'per_client' in serve and 'An error the client caused' in serve


def test_home_page_links_the_quickstart_and_a_glossary_of_the_terms():
    "The home page links the quickstart (the first tutorial) and the glossary, which defines the words the docs use."
    glossary = ''.join(''.join(c['source']) for c in json.loads((ROOT / 'nbs' / 'glossary.ipynb').read_text())['cells'])
    for term in ('Teacher', 'Student', 'Skill', 'SKILL-LIST', 'SKILL-TREE', 'Rubric', 'Specialist', 'Episode', 'Seed',
                 'Gain in points'):
        assert f'**{term}**' in glossary or f'{term}**' in glossary, term
    assert sorted((ROOT / 'nbs' / 'tutorials').glob('[!.]*.ipynb'))[0].name == '00_quickstart.ipynb'
    readme = (ROOT / 'README.md').read_text()
    assert 'tutorials/quickstart.html' in readme and 'glossary.html' in readme
