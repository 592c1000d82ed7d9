"""Test helper: an ASGI app served by uvicorn on a free 127.0.0.1 port, in a thread."""
import socket, threading, time

import uvicorn


def serve(app):
    "Start `app` on a free 127.0.0.1 port in a thread; (url, server)."
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=port, log_level='warning'))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.time() + 30
    while not server.started:
        assert time.time() < deadline, 'server did not start'
        time.sleep(0.05)
    return f'http://127.0.0.1:{port}', server


def scripted_chat_app(commands):
    """An OpenAI-compatible `/v1/chat/completions` whose model replays `commands`: its reply to a chat is the command
    after as many as the chat's assistant messages (`submit` once the script is spent). No tokens, no sampling. A request
    with `stream: true` (how verifiers 0.4's chat harness asks) gets the reply as server-sent chunks, and the usage as a
    last chunk when `stream_options.include_usage` asks for it."""
    import json
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def complete(request):
        body = await request.json()
        turn = sum(m.get('role') == 'assistant' for m in body.get('messages', []))
        text = commands[turn] if turn < len(commands) else 'submit'
        usage = {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2}
        head = {'id': f'scripted-{turn}', 'created': 0, 'model': body.get('model', 'scripted')}
        if not body.get('stream'):
            return JSONResponse({**head, 'object': 'chat.completion', 'usage': usage, 'choices': [
                {'index': 0, 'message': {'role': 'assistant', 'content': text}, 'finish_reason': 'stop'}]})
        chunk = {**head, 'object': 'chat.completion.chunk'}
        delta = {'role': 'assistant', 'content': text}
        events = [{**chunk, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]},
                  {**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]}]
        if (body.get('stream_options') or {}).get('include_usage'):
            events.append({**chunk, 'choices': [], 'usage': usage})
        return Response(''.join(f'data: {json.dumps(e)}\n\n' for e in events) + 'data: [DONE]\n\n',
                        media_type='text/event-stream')

    async def models(request):
        return JSONResponse({'object': 'list', 'data': [{'id': 'scripted', 'object': 'model', 'owned_by': 'test'}]})
    return Starlette(routes=[Route('/v1/chat/completions', complete, methods=['POST']), Route('/v1/models', models)])
