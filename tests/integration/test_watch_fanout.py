"""Watch fan-out over HTTP: 500 watch streams each get every event exactly once and in order, and what is
ready for one watcher goes out as one chunk rather than one per event."""

from __future__ import annotations

import asyncio
import json
import re
import ssl

from conftest import Server

NS_PATH = "/api/v1/namespaces/default/configmaps"


class Stream(asyncio.Protocol):
    """One watch: its chunked body decoded, and the chunks counted as they came."""

    def __init__(self, request: bytes):
        self.request = request
        self.raw = b""
        self.head: bytes | None = None
        self.chunks: list[bytes] = []
        self.changed = asyncio.Event()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.raw += data
        if self.head is None:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head, self.raw = self.raw[:end], self.raw[end + 4:]
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end], 16)
            if len(self.raw) < line_end + 2 + size + 2:
                return
            self.chunks.append(self.raw[line_end + 2:line_end + 2 + size])
            self.raw = self.raw[line_end + 2 + size + 2:]
            self.changed.set()

    def events(self) -> list[dict]:
        return [json.loads(line) for line in b"".join(self.chunks).splitlines()]


async def _open(server: Server, path: str, count: int) -> list[Stream]:
    loop = asyncio.get_running_loop()
    context = ssl.create_default_context(cafile=server.ca_file)
    request = f"GET {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode()
    streams: list[Stream] = []
    for first in range(0, count, 50):  # TLS handshakes in groups, as a client pool would open them
        batch = [Stream(request) for _ in range(first, min(first + 50, count))]
        await asyncio.gather(*(loop.create_connection(lambda s=s: s, "127.0.0.1", server.port, ssl=context)
                               for s in batch))
        streams.extend(batch)
    return streams


async def _until(condition, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.05)


def _create(server: Server, name: str, **labels: str) -> str:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}
    created = server.request("POST", NS_PATH, body)
    assert created.status == 201, created.body
    return created.json()["metadata"]["resourceVersion"]


def test_500_http_watchers_each_get_every_event_once_in_order(server):
    start = server.request("GET", NS_PATH).json()["metadata"]["resourceVersion"]
    path = f"{NS_PATH}?watch=1&resourceVersion={start}&labelSelector=fan%3D500"

    async def run() -> list[Stream]:
        streams = await _open(server, path, 500)
        await _until(lambda: all(s.head is not None for s in streams))
        assert all(s.head.startswith(b"HTTP/1.1 200") for s in streams)
        writes = [asyncio.to_thread(_create, server, f"fan500-{i:03d}", fan="500") for i in range(40)]
        await asyncio.gather(*writes)  # concurrent writes: the order is the storage's, not ours
        await _until(lambda: all(len(s.events()) >= 40 for s in streams))
        await asyncio.sleep(0.2)  # a duplicate would have arrived by now
        return streams

    streams = asyncio.run(run())
    first = [(e["type"], e["object"]["metadata"]["name"], int(e["object"]["metadata"]["resourceVersion"]))
             for e in streams[0].events()]
    assert sorted(name for _, name, _ in first) == [f"fan500-{i:03d}" for i in range(40)]
    assert {kind for kind, _, _ in first} == {"ADDED"}
    revisions = [rv for _, _, rv in first]
    assert revisions == sorted(set(revisions))  # in order, each once
    for stream in streams[1:]:
        assert [(e["type"], e["object"]["metadata"]["name"], int(e["object"]["metadata"]["resourceVersion"]))
                for e in stream.events()] == first


def test_events_ready_together_go_out_in_one_chunk(server):
    start = server.request("GET", NS_PATH).json()["metadata"]["resourceVersion"]
    names = [f"chunk-{i:02d}" for i in range(20)]
    for name in names:
        _create(server, name, chunk="one")

    async def run() -> Stream:
        # From before the creates: the cached events after `start` are ready at once.
        (stream,) = await _open(server, f"{NS_PATH}?watch=1&resourceVersion={start}&labelSelector=chunk%3Done", 1)
        await _until(lambda: len(stream.events()) >= len(names))
        return stream

    stream = asyncio.run(run())
    assert [e["object"]["metadata"]["name"] for e in stream.events()] == names
    assert len(stream.chunks) == 1, [len(c) for c in stream.chunks]
    assert re.match(rb"HTTP/1.1 200", stream.head) and b"transfer-encoding: chunked" in stream.head.lower()
