"""installer.implements: the verbs a storage is routed for follow from the REST interfaces it implements,
decided as isinstance() against the runtime-checkable Protocols decides it (without its per-call walk)."""

from __future__ import annotations

import asyncio

import pytest

from inprocess import in_process_server
from kube_apiserver.endpoints.installer import _MEMBERS, implements
from kube_apiserver.registry import rest


class Everything:
    connect_verbs = ("GET",)

    async def get(self, *a): ...
    async def list(self, *a): ...
    async def watch(self, *a): ...
    async def create(self, *a): ...
    async def update(self, *a): ...
    async def delete(self, *a): ...
    async def delete_collection(self, *a): ...
    async def connect(self, *a): ...


class GetOnly:
    async def get(self, *a): ...


class UpdateDisabled(Everything):
    update = None  # a method set to None: not implemented, as isinstance() says


class Proxy:
    """A storage wrapper answering its inner storage's attributes."""

    def __init__(self, inner: object):
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@pytest.mark.parametrize(
    "storage",
    [Everything(), GetOnly(), UpdateDisabled(), Proxy(GetOnly()), object()],
    ids=["everything", "get-only", "update-none", "proxy", "nothing"],
)
@pytest.mark.parametrize("protocol", list(_MEMBERS), ids=lambda p: p.__name__)
def test_implements_agrees_with_isinstance(storage, protocol):
    assert implements(storage, protocol) == isinstance(storage, protocol)


def test_every_served_storage_is_routed_as_isinstance_would_route_it(tmp_path):
    async def storages() -> list[object]:
        async with in_process_server(str(tmp_path)) as cluster:
            routes = cluster.server.delegate.restful.group_versions  # the kube-apiserver's built-in groups
            return [r.scope.storage for resources in routes.values() for r in resources.values()]

    served = asyncio.run(storages())
    assert len(served) > 100
    for storage in served:
        for protocol in _MEMBERS:
            assert implements(storage, protocol) == isinstance(storage, protocol), (storage, protocol)
    assert any(implements(s, rest.Connecter) for s in served)  # pods/exec, pods/log...
