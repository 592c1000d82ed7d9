"""The repository's URL is set once, in pyproject.toml (`[project.urls] Repository`, and `Documentation` for the docs
site); nbdev's source links read it from there. This tool writes it into the places that cannot read a setting: the
Colab badges and install cells of the tutorials (they run before the package is installed), `nbs/nbdev.yml` (Quarto)
and `CITATION.cff`.

Usage: python tools/repo_url.py [--check]   (--check lists what differs from the setting and exits 1, writing nothing)
"""
import re, sys, tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLUG = r'[\w.-]+/[\w.-]+'


def settings() -> dict[str, str]:
    "The repository and docs URLs, and the repository's `owner/name`, as pyproject.toml sets them."
    urls = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['urls']
    repo = urls['Repository'].rstrip('/')
    return {'repo': repo, 'docs': urls['Documentation'], 'slug': repo.removeprefix('https://github.com/')}


def rules(s: dict[str, str]) -> list[tuple[str, str]]:
    "(pattern, replacement): each place the URL is written, recognised by what surrounds it."
    return [(rf'colab\.research\.google\.com/github/{SLUG}/blob/', f'colab.research.google.com/github/{s["slug"]}/blob/'),
            (rf"git\+https://github\.com/{SLUG}'", f"git+{s['repo']}'"),
            (rf'repo-url: "https://github\.com/{SLUG}"', f'repo-url: "{s["repo"]}"'),
            (rf'repository-code: "https://github\.com/{SLUG}"', f'repository-code: "{s["repo"]}"')]


def files() -> list[Path]:
    return sorted((ROOT / 'nbs').rglob('*.ipynb')) + [ROOT / 'nbs' / 'nbdev.yml', ROOT / 'CITATION.cff']


def sync(check: bool = False) -> list[str]:
    "Write the setting everywhere (or, with `check`, only say where it differs); the files that differ(ed)."
    s, changed = settings(), []
    for path in files():
        if '.ipynb_checkpoints' in path.parts or not path.exists(): continue
        text = new = path.read_text(encoding='utf-8')
        for pattern, repl in rules(s): new = re.sub(pattern, repl, new)
        if new != text:
            changed.append(path.relative_to(ROOT).as_posix())
            if not check: path.write_text(new, encoding='utf-8')
    return changed


if __name__ == '__main__':
    check = '--check' in sys.argv[1:]
    changed = sync(check)
    if changed: print(('differ from pyproject.toml: ' if check else 'updated: ') + ', '.join(changed))
    sys.exit(1 if check and changed else 0)
