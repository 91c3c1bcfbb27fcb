"""The etcd client when members are out of reach: an outage is logged once, not once per retry of every call
and watch, and what fails for it is a StorageUnavailableError (a ConnectionError), logged in one line by the
watch caches and the leader election's release."""

from __future__ import annotations

import asyncio
import logging

import grpc
import grpc.aio

from kube_apiserver.storage.etcd3.client import Client
from kube_apiserver.storage.etcd3.kv import EtcdError, EtcdUnavailableError, _rpc_error
from kube_apiserver.storage.kv import StorageUnavailableError

LOGGER = "kube_apiserver.storage.etcd3"


def messages(caplog) -> list[tuple[str, str]]:  # noqa: ANN001
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_an_outage_of_the_one_endpoint_is_logged_once_until_it_answers(caplog):
    """A watch cache per resource reopens its watch every 0.2 s: one line per retry was 6,252 lines in the
    20 s a stopping server waited for a killed etcd."""

    async def main() -> None:
        client = Client(["http://127.0.0.1:1"])
        loop = asyncio.get_running_loop()
        try:
            with caplog.at_level(logging.INFO, logger=LOGGER):
                for _ in range(100):
                    client.failover(client.channel)
                await asyncio.sleep(0.01)
                sent = loop.time()
                client.answered(sent)
                client.answered(sent)
                client.failover(client.channel)
        finally:
            await client.close()

    asyncio.run(main())
    assert messages(caplog) == [
        ("WARNING", "etcd: endpoint http://127.0.0.1:1 is unavailable; retrying"),
        ("INFO", "etcd: endpoint http://127.0.0.1:1 answers"),
        ("WARNING", "etcd: endpoint http://127.0.0.1:1 is unavailable; retrying"),
    ]


def test_a_call_sent_before_the_outage_began_does_not_end_it(caplog):
    """A dying member answers some calls in flight after failing others: such an answer said "answers", and
    the next failure said "unavailable" again (three lines for one outage, seen in the integration test)."""

    async def main() -> None:
        client = Client(["http://127.0.0.1:1"])
        loop = asyncio.get_running_loop()
        try:
            with caplog.at_level(logging.INFO, logger=LOGGER):
                in_flight = loop.time()
                await asyncio.sleep(0.01)
                client.failover(client.channel)
                client.answered(in_flight)
                client.failover(client.channel)
        finally:
            await client.close()

    asyncio.run(main())
    assert messages(caplog) == [("WARNING", "etcd: endpoint http://127.0.0.1:1 is unavailable; retrying")]


def test_a_failover_names_the_next_endpoint_once(caplog):
    async def main() -> None:
        client = Client(["http://127.0.0.1:1", "http://127.0.0.1:2"])
        try:
            with caplog.at_level(logging.INFO, logger=LOGGER):
                first = client.channel
                client.failover(first)
                client.failover(first)  # another caller that failed on the first: already moved on
                assert client.channel is not first
                client.failover(client.channel)
                assert client.channel is first
        finally:
            await client.close()

    asyncio.run(main())
    assert messages(caplog) == [
        ("WARNING", "etcd: endpoint http://127.0.0.1:1 is unavailable; trying http://127.0.0.1:2")]


def test_an_unavailable_etcd_fails_as_the_store_out_of_reach():
    unavailable = _rpc_error(grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                                                  grpc.aio.Metadata(), "failed to connect to all addresses"))
    assert isinstance(unavailable, EtcdUnavailableError)
    assert isinstance(unavailable, StorageUnavailableError) and isinstance(unavailable, ConnectionError)
    assert str(unavailable) == "etcd: failed to connect to all addresses"
    refused = _rpc_error(grpc.aio.AioRpcError(grpc.StatusCode.INVALID_ARGUMENT, grpc.aio.Metadata(),
                                              grpc.aio.Metadata(), "etcdserver: request is too large"))
    assert type(refused) is EtcdError and not isinstance(refused, ConnectionError)
