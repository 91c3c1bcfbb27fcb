"""A start, up to /readyz 200, loads nothing only some requests need (bench/startup.py measures the time);
the HTTP server answers upgrade requests as plain HTTP, as it does when no websocket library is installed."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import textwrap

# Imported only when a webhook, proxy or aggregated API is called, an upgrade is asked for, or a CRD is
# written or served.
NOT_AT_START = ["aiohttp", "yarl", "wsproto", "kubernetes_validate", "jsonschema",
                "kube_apiserver.apiextensions.validation.crd", "kube_apiserver.apiextensions.schema.structural",
                "kube_apiserver.apimachinery.protobuf_messages"]
# Starts the server in a fresh interpreter, waits for /readyz 200, then lists the modules whose code ran.
SCRIPT = textwrap.dedent("""
    import asyncio, json, ssl, sys, types, urllib.request
    from kube_apiserver.cmd.options import ServerRunOptions
    from kube_apiserver.cmd.server import run

    async def main():
        completed = ServerRunOptions.parse(["--data-dir", sys.argv[1], "--secure-port", "6443"]).complete()
        completed.secure_serving.bind_port = 0
        stop, started = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(run(completed, stop, started))
        await started.wait()
        with open(completed.data_dir + "/admin.kubeconfig") as f:
            port = next(line for line in f if "server:" in line).rsplit(":", 1)[1].strip()
        tls = ssl.create_default_context(cafile=completed.ca_file)
        while True:
            try:
                status = await asyncio.to_thread(
                    lambda: urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=tls).status)
            except OSError:
                status = 0
            if status == 200:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await task
        print(json.dumps([n for n, m in sys.modules.items() if type(m) is types.ModuleType]))

    asyncio.run(main())
""")


def test_a_start_loads_nothing_only_some_requests_need(tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    assert "kube_apiserver.controlplane.rbac" in loaded  # it did start
    assert not loaded & set(NOT_AT_START)


def test_an_upgrade_request_is_answered_as_plain_http(server):
    tls = ssl.create_default_context(cafile=server.ca_file)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw, \
            tls.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
        conn.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                     b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        head = conn.recv(4096).split(b"\r\n", 1)[0]
    assert head == b"HTTP/1.1 200 OK"
