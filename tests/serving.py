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
