"""OpenEnv's runtime checks against a running repair server, without Docker: a reset and steps, then the graders.

`openenv validate --url URL` is OpenEnv's legacy probe (health, schema, metadata, MCP): it never resets or steps an
environment. `openenv validate . --level runtime` does (it plays `validation/runtime.json` over the WebSocket route),
but only inside the image it builds from the `Dockerfile`, so it needs a Docker daemon (and the network, for the image's
`pip install`). This script plays the same plan with OpenEnv's own collector against a server you started
(`dataenvgym serve repair`), then runs OpenEnv's runtime graders on what it saw: rewards well formed and in the
manifest's range, every observation valid against `/schema`, the state's episode id and step count.

Usage: python tools/openenv_runtime_check.py [URL] [--hide-rfc3987-syntax]   (exit 0: every check passed)

The observation-schema grader evaluates in a fresh `python -I` limited to 3 s of CPU (5 s of wall time). There,
`import jsonschema` also imports `rfc3987-syntax` when it is installed (jupyter brings it, through
`jsonschema[format-nongpl]`; `dataenvgym[serve]` alone does not), and that import builds a Lark grammar for about 3 s
of CPU, so the grader fails ('exceeded its time budget') before it reads a line. Either validate from an environment
without it, or `pip install rfc3987` (GPL-3.0+: jsonschema then uses it instead, 0.2 s), or
`pip uninstall rfc3987-syntax` (jsonschema then skips the `iri` format, which this schema does not use), or pass
`--hide-rfc3987-syntax`: the grader's worker then runs with that one module unimportable.
"""
import argparse, importlib.util, subprocess, sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW_MODULE = 'rfc3987_syntax'


def without_module(cmd, module: str = SLOW_MODULE):
    "`cmd` (`python -I script.py`) run with `module` unimportable (code guarded by `except ImportError` goes without it)."
    if not (isinstance(cmd, list) and len(cmd) == 3 and cmd[1] == '-I' and str(cmd[2]).endswith('.py')): return cmd
    shim = (f'import runpy, sys; sys.modules[{module!r}] = None; '   # None in sys.modules: import raises ImportError
            f'sys.argv = [{str(cmd[2])!r}]; runpy.run_path({str(cmd[2])!r}, run_name="__main__")')
    return [cmd[0], '-I', '-c', shim]


def slow_schema_worker() -> bool:
    "Whether the schema grader's `import jsonschema` would import rfc3987-syntax (it does when `rfc3987` is absent)."
    return importlib.util.find_spec(SLOW_MODULE) is not None and importlib.util.find_spec('rfc3987') is None


def runtime_checks(url: str, root: Path = ROOT, hide_slow_module: bool = False) -> dict[str, tuple[str, list]]:
    "Play `root`'s runtime plan on the server at `url`, run OpenEnv's runtime graders: `{check: (status, evidence)}`."
    from openenv.validation.graders import Subject
    from openenv.validation.graders.runtime import ObservationSchemaGrader, RewardWellFormedGrader, StateContractGrader
    from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
    from openenv.validation.runtime.collector import collect_runtime_evidence
    from openenv.validation.runtime.contracts import load_runtime_plan
    manifest = OpenEnvYamlParser().parse(root)
    plan = load_runtime_plan(root, manifest.execution)
    evidence = collect_runtime_evidence(url, plan, episode_timeout_s=manifest.resources.episode_timeout_s)
    ops = [e.operation for e in evidence.exchanges]
    checks = {'runtime.episode': ('pass' if evidence.failure_reason is None else 'fail',
                                  [f'{ops.count("reset")} reset, {ops.count("step")} steps',
                                   *([evidence.failure_reason] if evidence.failure_reason else [])])}
    subject = replace(Subject(root=root, manifest=manifest, image_ref=None, running=None, outputs_dir=root / 'outputs'),
                      runtime_evidence=evidence)
    real_run = subprocess.run
    if hide_slow_module: subprocess.run = lambda cmd, *a, **kw: real_run(without_module(cmd), *a, **kw)
    try:
        for grader in (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader()):
            result = grader.run(subject)
            checks[grader.check_id] = (result.status.value, list(result.evidence))
    finally: subprocess.run = real_run
    return checks


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('url', nargs='?', default='http://127.0.0.1:8000')
    p.add_argument('--hide-rfc3987-syntax', action='store_true',
                   help="run the schema grader's worker with rfc3987_syntax unimportable")
    args = p.parse_args(argv)
    if slow_schema_worker() and not args.hide_rfc3987_syntax:
        print('note: rfc3987-syntax is installed (and rfc3987 is not): the observation-schema grader will likely run '
              'out of its 3 s CPU budget; see this script\'s docstring (or pass --hide-rfc3987-syntax)')
    checks = runtime_checks(args.url, hide_slow_module=args.hide_rfc3987_syntax)
    for name, (status, evidence) in checks.items(): print(f'{status.upper():5} {name}: {"; ".join(evidence)[:300]}')
    return 0 if all(s == 'pass' for s, _ in checks.values()) else 1


if __name__ == '__main__':
    sys.exit(main())
