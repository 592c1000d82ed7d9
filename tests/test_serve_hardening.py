"""The repair server under hostile and crowded use (issue 40): a fuzz of more than 2,000 malformed requests over every
route and the WebSocket, answered 4xx (never 500, never a dropped connection) with short errors while two other
sessions play their seeded episodes unchanged; 64 concurrent clients, 16 of them abandoning their sessions, all
served with `Retry-After` on every refusal and no lockout longer than the idle time; cross-origin and token checks.
One live uvicorn on 127.0.0.1 per test; every loop is bounded in count and time. Skipped without the `serve` extra."""
import asyncio, json, random, threading, time

import pytest

pytest.importorskip('openenv')
httpx = pytest.importorskip('httpx')
ws_sync = pytest.importorskip('websockets.sync.client')
ws_async = pytest.importorskip('websockets.asyncio.client')
from websockets.exceptions import ConnectionClosed  # noqa: E402
from serving import serve  # noqa: E402  (tests/serving.py)

from dataenvgym.repair.agents import HeuristicAgent
from dataenvgym.repair.env import RepairEnv
from dataenvgym.repair.serve import RepairClient, RepairCommand, make_app, _to_wire
from dataenvgym.serve import Settings

MAX_REPLY = 600                     # characters: an error never carries more than 200 of the input back
LIMIT = Settings().max_body


def ws_url(url: str) -> str: return url.replace('http', 'ws') + '/ws'


def in_process(seed: int, task: str = 'task_1_easy') -> list[dict]:
    env, agent = RepairEnv(task), HeuristicAgent()
    obs = env.reset(seed=seed); agent.begin(env)
    out = [_to_wire(obs).model_dump()]
    while not obs.done:
        obs = env.step(agent.act(obs)); out.append(_to_wire(obs).model_dump())
    return out


# ---- the malformed requests ----------------------------------------------------------------------------------------
HUGE_INT = '9' * 5000
BAD_VALUES = [-1, 2.5, True, [], {}, [1, [2]], {'a': {'b': 1}}, '', 'x' * 100_000, 2**64, -2**70]
RAW_VALUES = [HUGE_INT, '-' + HUGE_INT, '1e999999', 'NaN', '-Infinity', '[' * 2000 + ']' * 2000,
              '{"a":' * 1500 + '1' + '}' * 1500, '"\\ud800"']
FIELDS = {'/reset': ['seed', 'episode_id', 'task', 'session_id', 'bogus'],
          '/step': ['session_id', 'action', 'timeout_s', 'bogus'], '/close': ['session_id', 'bogus'],
          '/mcp': ['id', 'method', 'params']}
NOT_JSON = [b'{', b'{"seed": }', b'[1, 2]', b'"reset"', b'5', b'null', b'\xff\xfe\x00garbage', b'{"a": 1}}',
            b'[' * 20_000 + b']' * 20_000, b'{"a": ' * 20_000, b'\x00' * 1000, b'{"seed": 1, "seed": "x"}',
            b'{"x": "' + b'y' * (LIMIT + 10) + b'"}']
BAD_TYPES = [None, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
             'application/jsonx', 'text/json']


def malformed_http(rng: random.Random, n: int) -> list[tuple[str, str, bytes, dict]]:
    "`n` malformed requests (method, path, body, headers), drawn from every family above."
    out = []
    for i in range(n):
        kind = i % 6
        path = rng.choice(list(FIELDS))
        headers = {'content-type': 'application/json'}
        if kind == 0:                       # a wrong type in one field
            body = json.dumps({rng.choice(FIELDS[path]): rng.choice(BAD_VALUES)}).encode()
        elif kind == 1:                     # a huge number or deep nesting inside an object
            body = ('{"%s": %s}' % (rng.choice(FIELDS[path]), rng.choice(RAW_VALUES))).encode()
        elif kind == 2:                     # not a JSON object
            body = rng.choice(NOT_JSON)
        elif kind == 3:                     # the wrong content type (a valid body)
            body, ct = b'{}', rng.choice(BAD_TYPES)
            headers = {'content-type': ct} if ct else {}
        elif kind == 4:                     # a bad action on a made-up session
            action = rng.choice([{'message': rng.choice(BAD_VALUES)}, {'mesage': 'help'}, rng.choice(BAD_VALUES)])
            path, body = '/step', json.dumps({'session_id': 'f' * 32, 'action': action}).encode()
        else:                               # GET /state with a bad id, or a route that does not exist
            path = rng.choice(['/state?session_id=' + 'x' * rng.choice([0, 65, 5000]), '/state', '/state?session_id=%00',
                               '/x/tasks', '/num_tasks', '/task', '/task_range', '/list_environments'])
            out.append(('GET' if path.startswith('/state') else 'POST', path, b'{}', headers))
            continue
        out.append(('POST', path, body, headers))
    return out


def malformed_frames(rng: random.Random, n: int) -> list:
    "`n` malformed WebSocket frames."
    frames = []
    for i in range(n):
        kind = i % 5
        if kind == 0: frames.append(json.dumps({'type': rng.choice(['reset', 'step']), 'data': {
            rng.choice(['seed', 'task', 'message', 'episode_id', 'bogus']): rng.choice(BAD_VALUES)}}))
        elif kind == 1: frames.append('{"type": "reset", "data": {"seed": %s}}' % rng.choice(RAW_VALUES))
        elif kind == 2: frames.append(rng.choice(NOT_JSON[:-1] + [b'\x00binary']).decode('latin-1')
                                      if rng.random() < 0.7 else b'\x00binary')
        elif kind == 3: frames.append(json.dumps({'type': rng.choice(BAD_VALUES[:9]), 'data': {}}))
        else: frames.append(json.dumps({'type': 'step', 'data': rng.choice(BAD_VALUES)}))
    return [f for f in frames if f != ''] or ['x']


def assert_refused(status: int, text: str, what) -> None:
    "A 4xx with a short reason (or, from /mcp, a JSON-RPC error: what `openenv validate` asks of it)."
    rpc_error = what[0] == '/mcp' and status == 200 and 'error' in json.loads(text)
    assert 400 <= status < 500 or rpc_error, (status, text[:300], str(what)[:100])
    assert len(text) < MAX_REPLY, (text[:300], str(what)[:100])


def test_two_thousand_malformed_requests_get_4xx_and_other_episodes_are_unchanged():
    "2,400 malformed requests (HTTP and WebSocket) between the steps of two live episodes: 0 answers of 500."
    rng = random.Random(40)
    requests, frames = malformed_http(rng, 1800), malformed_frames(rng, 600)
    url, server = serve(make_app(max_concurrent_envs=6))
    expected = in_process(3)
    try:
        with httpx.Client(base_url=url, timeout=30) as http, \
                ws_sync.connect(ws_url(url), max_size=2**24) as fuzz_ws, \
                RepairClient(base_url=url).sync() as witness_ws:
            reply = http.post('/reset', json={'seed': 3, 'task': 'task_1_easy'}).json()
            sid, http_out = reply['session_id'], [{**reply['observation'], 'reward': reply['reward'], 'done': reply['done']}]
            r = witness_ws.reset(seed=3, task='task_1_easy')
            ws_out, agents = [r.observation.model_dump()], [HeuristicAgent(), HeuristicAgent()]
            for a in agents: a.begin(None)
            chunks, statuses, answered = len(expected), [], 0
            for step in range(chunks):
                for method, path, body, headers in requests[step::chunks]:
                    res = http.request(method, path, content=body, headers=headers)
                    assert_refused(res.status_code, res.text, (path, body[:80])); statuses.append(res.status_code)
                for frame in frames[step::chunks]:
                    fuzz_ws.send(frame)
                    msg = fuzz_ws.recv(timeout=30)
                    assert json.loads(msg)['type'] == 'error' and len(msg) < MAX_REPLY, (str(frame)[:80], msg[:300])
                    answered += 1
                if step + 1 < chunks:       # the two witnesses take their next step
                    obs = _to_wire(RepairEnv().reset(seed=0)).model_validate(http_out[-1])
                    res = http.post('/step', json={'session_id': sid, 'action': {'message': agents[0].act(obs)}}).json()
                    http_out.append({**res['observation'], 'reward': res['reward'], 'done': res['done']})
                    r = witness_ws.step(RepairCommand(message=agents[1].act(r.observation)))
                    ws_out.append(r.observation.model_dump())
            assert http.get('/health').status_code == 200
        assert len(statuses) + answered >= 2000 and 500 not in statuses, (len(statuses), answered)
        assert {415, 413, 404, 400} <= set(statuses), sorted(set(statuses))
        assert http_out == expected and ws_out == expected                 # neither episode was touched
    finally:
        server.should_exit = True


# ---- capacity ------------------------------------------------------------------------------------------------------
CAPACITY, IDLE_S, GOOD, DEADLINE_S = 16, 2.0, 48, 90   # + 3 s of slack: measured 1.4-2.0 s on two busy cores


async def play_http(url: str, seed: int, log: dict) -> list[dict]:
    "Reset (retrying while refused, as `Retry-After` says), two steps, close; the observations."
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        while True:
            r = await http.post('/reset', json={'seed': seed})
            if r.status_code == 200: break
            assert r.status_code == 503 and r.headers.get('retry-after', '').isdigit(), (r.status_code, r.text)
            log['refusals'].append(int(r.headers['retry-after']))
            assert time.monotonic() < log['deadline'], 'never admitted'
            await asyncio.sleep(min(int(r.headers['retry-after']), 0.2))
        log['admitted'].append(time.monotonic())
        sid, out = r.json()['session_id'], [r.json()['observation']]
        for cmd in ('inspect_dataset', 'submit'):
            r = await http.post('/step', json={'session_id': sid, 'action': {'message': cmd}})
            assert r.status_code == 200, r.text
            out.append(r.json()['observation'])
        assert (await http.post('/close', json={'session_id': sid})).json()['closed']
    return out


async def play_ws(url: str, seed: int, log: dict) -> list[dict]:
    "The same over a WebSocket: connect (retrying while refused with `retry_after`), reset, two steps."
    while True:
        async with ws_async.connect(ws_url(url)) as ws:
            try: await ws.send(json.dumps({'type': 'reset', 'data': {'seed': seed}}))
            except ConnectionClosed: pass                 # refused: the reason is waiting to be read
            msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if msg['type'] == 'observation':
                log['admitted'].append(time.monotonic())
                out = [msg['data']['observation']]
                for cmd in ('inspect_dataset', 'submit'):
                    await ws.send(json.dumps({'type': 'step', 'data': {'message': cmd}}))
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    assert reply['type'] == 'observation', reply
                    out.append(reply['data']['observation'])
                return out
        assert msg['data']['code'] == 'CAPACITY_REACHED' and msg['data']['retry_after'] >= 1, msg
        log['refusals'].append(msg['data']['retry_after'])
        assert time.monotonic() < log['deadline'], 'never admitted'
        await asyncio.sleep(min(msg['data']['retry_after'], 0.2))


async def crowd(url: str, log: dict) -> list[list[dict]]:
    "The well-behaved clients, half over HTTP and half over WebSocket, all at once (one thread: fair to the server)."
    return await asyncio.wait_for(asyncio.gather(*[(play_ws if i % 2 else play_http)(url, 100 + i, log)
                                                   for i in range(GOOD)]), DEADLINE_S + 30)


def reference(seed: int) -> list[dict]:
    env = RepairEnv()
    obs = [env.reset(seed=seed)] + [env.step(c) for c in ('inspect_dataset', 'submit')]
    return [json.loads(json.dumps(_to_wire(o).model_dump(exclude={'reward', 'done'}))) for o in obs]


def watch_until_gone(live: dict, held: set, log: dict) -> None:
    "Record in `log['freed']` when none of the `held` sessions is live any more (polled every 20 ms, bounded)."
    while time.monotonic() < log['deadline']:
        if not held & set(live): log['freed'] = time.monotonic(); return
        time.sleep(0.02)


def test_64_clients_16_abandoning_are_all_served_without_lockout():
    "16 clients take every place and abandon it (8 HTTP, 8 silent WebSockets); 48 more all finish their episodes."
    app = make_app(max_concurrent_envs=CAPACITY, idle_s=IDLE_S)
    url, server = serve(app)
    silent = []
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            for seed in range(8): assert http.post('/reset', json={'seed': seed}).status_code == 200
        for seed in range(8):
            ws = ws_sync.connect(ws_url(url)).__enter__(); silent.append(ws)
            ws.send(json.dumps({'type': 'reset', 'data': {'seed': seed}})); assert 'observation' in ws.recv(timeout=30)
        abandoned, live = time.monotonic(), app.state.server.sessions.live
        held = set(live)
        assert len(held) == CAPACITY
        log = {'refusals': [], 'admitted': [], 'deadline': abandoned + DEADLINE_S}
        watcher = threading.Thread(target=watch_until_gone, args=(live, held, log), daemon=True); watcher.start()
        got = asyncio.run(crowd(url, log))
        watcher.join(timeout=5)
        for i, g in enumerate(got): assert g == reference(100 + i), f'client {i} played another episode'
        assert log['refusals'] and all(1 <= r <= IDLE_S + 1 for r in log['refusals']), log['refusals'][:10]
        freed, first = log['freed'] - abandoned, min(log['admitted']) - abandoned
        print(f'abandoned places freed after {freed:.2f} s; first client admitted after {first:.2f} s; '
              f'{len(log["refusals"])} refusals; all {GOOD} done after {time.monotonic() - abandoned:.1f} s')
        assert freed <= IDLE_S + 3.0, f'abandoned sessions held their places for {freed:.1f} s (idle time {IDLE_S} s)'
        for ws in silent:                # the silent WebSockets were told why they were closed
            assert json.loads(ws.recv(timeout=5))['data']['code'] == 'IDLE_TIMEOUT'
    finally:
        for ws in silent: ws.close()
        server.should_exit = True


def test_per_client_limit_and_retry_after():
    url, server = serve(make_app(settings=Settings(capacity=4, per_client=2, idle_s=30)))
    try:
        with httpx.Client(base_url=url, timeout=30, headers={'x-client-id': 'greedy'}) as http:
            assert [http.post('/reset', json={}).status_code for _ in range(3)] == [200, 200, 429]
            r = http.post('/reset', json={})
            assert r.headers['retry-after'].isdigit() and 'the most one client may' in r.json()['detail']
            assert httpx.post(url + '/reset', json={}, headers={'x-client-id': 'other'}).status_code == 200
    finally:
        server.should_exit = True


# ---- localhost safety ----------------------------------------------------------------------------------------------
def test_a_cross_origin_text_plain_request_is_refused_by_default():
    "What a web page can send without a CORS preflight: a text/plain POST, a WebSocket; refused, no session opened."
    url, server = serve(make_app(max_concurrent_envs=1))
    try:
        evil = {'origin': 'https://evil.example', 'content-type': 'text/plain'}
        for path in ('/reset', '/step', '/close', '/mcp'):
            r = httpx.post(url + path, content=b'{}', headers=evil)
            assert r.status_code == 403 and 'origin' in r.json()['detail'], (path, r.text)
        r = httpx.post(url + '/reset', content=b'{}', headers={'content-type': 'text/plain'})     # no Origin either
        assert r.status_code == 415
        with pytest.raises(Exception, match='403'):
            ws_sync.connect(ws_url(url), additional_headers={'Origin': 'https://evil.example'})
        r = httpx.post(url + '/reset', json={}, headers={'origin': url})                  # the server's own page
        assert r.status_code == 200                                                       # (the one place is taken now)
    finally:
        server.should_exit = True
    url, server = serve(make_app(settings=Settings(capacity=2, allow_origins=('https://app.example',))))
    try:
        assert httpx.post(url + '/reset', json={}, headers={'origin': 'https://app.example'}).status_code == 200
        with ws_sync.connect(ws_url(url), additional_headers={'Origin': 'https://app.example'}) as ws:
            ws.send(json.dumps({'type': 'state'})); assert json.loads(ws.recv(timeout=30))['type'] == 'state'
    finally:
        server.should_exit = True


def test_a_token_is_required_when_set():
    url, server = serve(make_app(settings=Settings(capacity=2, token='s3cret')))
    try:
        assert httpx.get(url + '/health').status_code == 200
        for headers in ({}, {'authorization': 'Bearer wrong'}, {'authorization': 's3cret'}):
            r = httpx.post(url + '/reset', json={}, headers=headers)
            assert r.status_code == 401 and r.headers['www-authenticate'] == 'Bearer', r.text
        assert httpx.post(url + '/reset', json={}, headers={'authorization': 'Bearer s3cret'}).status_code == 200
        with pytest.raises(Exception, match='403'): ws_sync.connect(ws_url(url))
        with RepairClient(base_url=url, headers={'Authorization': 'Bearer s3cret'}).sync() as client:
            assert client.reset(seed=1).observation.metadata['seed'] == 1
    finally:
        server.should_exit = True


# ---- the command ---------------------------------------------------------------------------------------------------
def test_dataenvgym_serve_sets_what_the_flags_say(monkeypatch, capsys):
    "`dataenvgym serve repair|teaching`: flags over environment variables; beyond localhost only with a token."
    import uvicorn
    from dataenvgym import cli
    monkeypatch.setenv('DATAENVGYM_IDLE_S', '9')
    monkeypatch.setenv('DATAENVGYM_PER_CLIENT', '3')
    ran = []
    monkeypatch.setattr(uvicorn, 'run', lambda app, host, port: ran.append((app, host, port)))
    assert cli.main(['serve', 'repair', '--port', '8123', '--idle-s', '2.5', '--token', 't',
                     '--allow-origin', 'https://a.example', '--allow-origin', 'https://b.example']) == 0
    app, host, port = ran[-1]
    s = app.state.server.settings
    assert (host, port, s.capacity, s.per_client, s.idle_s, s.token) == ('127.0.0.1', 8123, 16, 3, 2.5, 't')
    assert s.allow_origins == ('https://a.example', 'https://b.example')
    assert cli.main(['serve', 'teaching', '--env', 'skill-tree', '--capacity', '2']) == 0
    assert ran[-1][0].state.server.settings.capacity == 2
    assert cli.main(['serve', 'repair', '--host', '0.0.0.0']) == 2
    assert 'needs --token' in capsys.readouterr().err
    assert cli.main(['serve', 'repair', '--idle-s', 'nan']) == 2 and 'positive' in capsys.readouterr().err
