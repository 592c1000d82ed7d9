"""The rendered docs in a real browser: every page (tutorials included) loads in headless Chromium with no console
error, every figure on it is present and decoded, and each tutorial page, and each figure on it, is screenshotted into `_docs/screenshots/`.

Needs Debian's chromium and chromium-driver (`.ci/run` installs them where it can) and selenium (the dev extra); the
test skips, saying which is missing, when they are not there."""
import functools, http.server, importlib.util, shutil, sys, threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = shutil.which('chromium') or '/usr/bin/chromium', shutil.which('chromedriver') or '/usr/bin/chromedriver'
missing = [name for name, ok in [('chromium', Path(CHROMIUM).exists()), ('chromedriver', Path(CHROMEDRIVER).exists()),
                                 ('selenium', importlib.util.find_spec('selenium') is not None)] if not ok]
pytestmark = pytest.mark.skipif(bool(missing), reason=f'browser docs test needs {", ".join(missing)} '
                                                      '(apt-get install chromium chromium-driver; pip install selenium)')
sys.path.insert(0, str(ROOT / 'tools'))


@pytest.fixture(scope='module')
def site():
    "The docs rendered into `_docs/` and served on 127.0.0.1."
    from render_docs import render
    out = ROOT / '_docs'
    pages = render(out)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    handler = functools.partial(Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield out, pages, f'http://127.0.0.1:{server.server_address[1]}'
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


FIGURES = 'return Array.from(document.images).map(i => [i.complete && i.naturalWidth > 0, i.naturalWidth, i.naturalHeight])'


def test_every_page_loads_with_its_figures(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    out, pages, url = site
    shots = out / 'screenshots'
    shots.mkdir(exist_ok=True)
    problems, tutorials = [], 0
    for page in pages:
        rel = page.relative_to(out).as_posix()
        browser.get(f'{url}/{rel}')
        WebDriverWait(browser, 60).until(lambda b: b.execute_script('return document.readyState') == 'complete')
        errors = [e['message'] for e in browser.get_log('browser') if e['level'] == 'SEVERE']
        figures = browser.execute_script(FIGURES)
        if errors: problems.append(f'{rel}: console errors {errors[:3]}')
        if not all(ok for ok, *_ in figures): problems.append(f'{rel}: {sum(not ok for ok, *_ in figures)} figure(s) did not load')
        if rel.startswith('tutorials/'):
            tutorials += 1
            if not figures: problems.append(f'{rel}: a tutorial page with no figure')
            height = min(browser.execute_script('return document.body.scrollHeight'), 12000)
            browser.set_window_size(1280, height)
            browser.save_screenshot(str(shots / f'{page.stem}.png'))
            browser.set_window_size(1280, 900)
            for k, img in enumerate(browser.find_elements(By.TAG_NAME, 'img')):     # each figure on its own, as rendered
                if img.size['height'] > 40: img.screenshot(str(shots / f'{page.stem}-figure{k}.png'))
    assert not problems, '\n'.join(problems)
    assert len(pages) >= 15 and tutorials == len(list((ROOT / 'nbs' / 'tutorials').glob('*.ipynb')))
