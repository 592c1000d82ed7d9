"""The package's layers (DESIGN.md):
core → rubrics → plotting → registry → sandbox → domains → students → teaching → repair → cli.

Three checks of the same rules: the import-linter contracts in `pyproject.toml` (static, imports inside functions
included), what importing each domain and repair module actually loads in a fresh interpreter, and an import graph
read from the source with `ast` that must have no cycle."""
import ast, importlib.util, json, subprocess, sys, tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PKG = ROOT / 'dataenvgym'
CONFIG = tomllib.loads((ROOT / 'pyproject.toml').read_text())['tool']['importlinter']


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob('*.py')) if p.name != '_modidx.py'}


def submodules(package: str) -> list[str]:
    "The modules of `package` (not the package itself)."
    return sorted(m for m in MODULES if m.startswith(package + '.'))


def _targets(node: ast.Import | ast.ImportFrom, importer: str) -> list[str]:
    "The modules of the package an import statement names (a `from` import's base and any submodule it imports)."
    if isinstance(node, ast.Import): names = [a.name for a in node.names]
    else:
        package = importer if MODULES[importer].name == '__init__.py' else importer.rpartition('.')[0]
        for _ in range(node.level - 1): package = package.rpartition('.')[0]
        base = '.'.join(p for p in [package if node.level else '', node.module or ''] if p)
        names = [base] + [f'{base}.{a.name}' for a in node.names]
    return [n for n in names if n in MODULES and n != importer]


def import_graph() -> dict[str, set[str]]:
    "Module → the package's modules it imports anywhere in its source (top level, functions, `TYPE_CHECKING`)."
    return {m: {t for node in ast.walk(ast.parse(p.read_text())) if isinstance(node, (ast.Import, ast.ImportFrom))
                for t in _targets(node, m)} for m, p in MODULES.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    "One import cycle of `graph` as a path `[a, b, ..., a]`, or None (depth-first search)."
    state, stack = {}, []
    def visit(m):
        state[m] = 'open'; stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 'open': return stack[stack.index(n):] + [n]
            if n not in state and (cycle := visit(n)): return cycle
        state[m] = 'done'; stack.pop()
    for m in sorted(graph):
        if m not in state and (cycle := visit(m)): return cycle


def loaded_by(module: str) -> list[str]:
    "The package's modules in `sys.modules` after importing `module` in a fresh interpreter."
    code = (f'import sys, json, {module}; '
            'print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "dataenvgym")))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_graph_reader_sees_every_kind_of_import():
    "The `ast` reader resolves relative imports, `from pkg import module`, and imports inside functions."
    graph = import_graph()
    assert 'dataenvgym.repair.tasks' in graph['dataenvgym.repair.env']         # `from .tasks import ...`
    assert 'dataenvgym.repair.train' in graph['dataenvgym.cli']                # inside a function
    assert find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert find_cycle({'a': {'b'}, 'b': set()}) is None


def test_no_import_cycle():
    "No module imports, directly or through others, a module that imports it back."
    graph = import_graph()
    assert (cycle := find_cycle(graph)) is None, 'import cycle: ' + ' -> '.join(cycle)
    def part(m): return m.split('.')[1] if '.' in m else m     # the top-level part: core, domains, teaching, ...
    top = {}
    for m, deps in graph.items():
        if m != 'dataenvgym': top.setdefault(part(m), set()).update(part(d) for d in deps if part(d) != part(m))
    assert (cycle := find_cycle(top)) is None, 'import cycle between parts of the package: ' + ' -> '.join(cycle)


def test_the_sandbox_loads_only_core():
    "Importing the sandbox loads nothing of the package but core."
    assert set(loaded_by('dataenvgym.sandbox')) <= {'dataenvgym', 'dataenvgym.gyms', 'dataenvgym.core', 'dataenvgym.sandbox',
                                                'dataenvgym.sandbox_boot'}


@pytest.mark.parametrize('module', submodules('dataenvgym.domains'))
def test_a_domain_loads_only_core_and_domains(module):
    "Importing a domain loads (besides core and the sandbox) nothing of teaching, repair, plotting, the registry, students or the cli."
    allowed = {'dataenvgym', 'dataenvgym.gyms', 'dataenvgym.core', 'dataenvgym.sandbox', 'dataenvgym.sandbox_boot',
               'dataenvgym.sandbox_grader', 'dataenvgym.domains'}   # gyms: ids only
    extra = [m for m in loaded_by(module) if m not in allowed and not m.startswith('dataenvgym.domains.')]
    assert not extra, f'importing {module} loads {extra}'


@pytest.mark.parametrize('module', submodules('dataenvgym.repair'))
def test_repair_loads_no_domain_student_or_teaching(module):
    "Importing any repair module loads nothing of domains, students, teaching or the cli."
    if module.endswith(('.serve', '.gym')) and importlib.util.find_spec('openenv') is None:
        pytest.skip(f'{module} needs the `serve` extra (openenv, gymnasium)')
    bad = tuple(f'dataenvgym.{p}' for p in ('domains', 'students', 'teaching', 'cli', 'testing'))
    extra = [m for m in loaded_by(module) if m.startswith(bad)]
    assert not extra, f'importing {module} loads {extra}'


# they build concrete domains and students by name (build), or import presets, which do (config, paper, estimate)
COMPOSERS = {f'dataenvgym.teaching.{m}' for m in ('presets', 'config', 'build', 'paper', 'estimate')}

def test_teaching_contract_names_every_teaching_module_but_the_presets():
    "A new teaching module falls under the contract that keeps concrete domains and students out of teaching."
    contract = next(c for c in CONFIG['contracts'] if c['id'] == 'teaching')
    assert sorted(contract['source_modules']) == [m for m in submodules('dataenvgym.teaching') if m not in COMPOSERS]


def test_layers_cover_the_whole_package():
    "Every top-level module or package sits in a layer of the layers contract."
    contract = next(c for c in CONFIG['contracts'] if c['id'] == 'layers')
    named = {part.strip() for layer in contract['layers'] for part in layer.replace('|', ':').split(':')}
    parts = {m.split('.')[1] for m in MODULES if m != 'dataenvgym'}
    assert parts <= named, f'not in a layer: {sorted(parts - named)}'


def test_import_linter_contracts(capsys):
    "`lint-imports` keeps every contract of `pyproject.toml`."
    pytest.importorskip('importlinter', reason='import-linter is in the `dev` extra')
    from importlinter.cli import lint_imports
    rc = lint_imports(config_filename=str(ROOT / 'pyproject.toml'), no_cache=True, no_logo=True)
    assert rc == 0, capsys.readouterr().out[-6000:]


def _architecture_namespace() -> tuple[dict, dict]:
    "The architecture page's code run afresh (in `nbs/`, as the docs run it), and the page itself."
    nb = json.loads((ROOT / 'nbs' / 'architecture.ipynb').read_text())
    ns, cwd = {}, Path.cwd()
    try:
        import os; os.chdir(ROOT / 'nbs')
        for c in nb['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] == 'code' and 'Markdown(' not in src: exec(src, ns)
    finally: os.chdir(cwd)
    return ns, nb


def test_architecture_page_is_current():
    "The layer table saved on the architecture page is what the import contract and the sources give today."
    ns, nb = _architecture_namespace()
    saved = [''.join(o['data']['text/markdown']) for c in nb['cells'] for o in c.get('outputs', [])
             if 'text/markdown' in o.get('data', {})]
    assert saved == [ns['architecture_table']()], 're-run nbs/architecture.ipynb (jupyter nbconvert --execute --inplace)'
    contract = next(c for c in CONFIG['contracts'] if c['id'] == 'layers')
    assert [l for l in ns['LAYERS']] == [[p.strip() for p in l.split(':')] for l in contract['layers']]
    assert 'ignore_imports' not in contract, 'the layers contract has no exceptions'
