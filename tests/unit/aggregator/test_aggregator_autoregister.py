"""Auto-registration's decisions (autoregister_controller.go checkAPIService) over an in-memory store."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kube_apiserver.aggregator.apiservice import INFO, APIServiceStrategy
from kube_apiserver.aggregator.autoregister import (
    MANAGED_LABEL,
    AutoRegisterController,
    AvailableHealthCheck,
    register_delegates,
    served_group_versions,
)
from kube_apiserver.apimachinery import errors


class FakeStore:
    """Writes land in the lister at once, as the informer would bring them."""

    def __init__(self, lister: FakeLister):
        self.lister, self.strategy, self.calls = lister, APIServiceStrategy(INFO), []

    async def create(self, ctx: Any, obj: dict) -> dict:
        self.calls.append(("create", obj["metadata"]["name"]))
        obj["metadata"]["uid"] = "uid-" + obj["metadata"]["name"]
        self.lister.items[obj["metadata"]["name"]] = obj
        return obj

    async def delete(self, ctx: Any, name: str, options: Any = None) -> tuple[dict, bool]:
        self.calls.append(("delete", name))
        if options.preconditions_uid != self.lister.items[name]["metadata"].get("uid"):
            raise errors.conflict("apiservices", "apiregistration.k8s.io", name, "uid")
        return self.lister.items.pop(name), True

    async def update(self, ctx: Any, name: str, info: Any) -> tuple[dict, bool]:
        self.calls.append(("update", name))
        obj = await info.transform(ctx, self.lister.items[name])
        self.lister.items[name] = obj
        return obj, False


class FakeLister:
    def __init__(self, *items: dict):
        self.items = {i["metadata"]["name"]: copy.deepcopy(i) for i in items}
        self.handlers: list[Any] = []

    def add_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def get(self, name: str) -> dict | None:
        return self.items.get(name)

    async def start(self) -> None:
        pass


def stored(name: str, managed: str | None, priority: int = 17800) -> dict:
    version, _, group = name.partition(".")
    labels = {MANAGED_LABEL: managed} if managed else {}
    return {"metadata": {"name": name, "uid": "uid-" + name, "labels": labels},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": priority, "versionPriority": 15}}


def run(controller: AutoRegisterController, *names: str) -> None:
    async def main() -> None:
        await controller.run()
        await controller.stop()  # the test drives the syncs itself
        for name in names:
            await controller.check_api_service(name)
    asyncio.run(main())


@pytest.fixture
def setup():
    def make(*existing: dict) -> tuple[AutoRegisterController, FakeStore, FakeLister]:
        lister = FakeLister(*existing)
        store = FakeStore(lister)
        return AutoRegisterController(lister, store), store, lister  # type: ignore[arg-type]
    return make


def test_builtins_are_created_once_and_corrected_at_start(setup):
    controller, store, lister = setup(stored("v1.apps", "onstart", priority=1))
    registered = register_delegates(controller, ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1",
                                                 "/apis/batch/v1", "/apis/example.com/v1", "/healthz"])
    assert [o["metadata"]["name"] for o in registered] == ["v1.", "v1.apps", "v1.batch"]
    run(controller, "v1.", "v1.apps", "v1.batch")
    assert store.calls == [("create", "v1."), ("update", "v1.apps"), ("create", "v1.batch")]
    assert lister.items["v1.apps"]["spec"]["groupPriorityMinimum"] == 17800
    assert lister.items["v1."]["metadata"]["labels"] == {MANAGED_LABEL: "onstart"}
    lister.items["v1.apps"]["spec"]["versionPriority"] = 3  # someone edits it after start: left alone
    asyncio.run(controller.check_api_service("v1.apps"))
    assert store.calls[-1] == ("create", "v1.batch")


def test_stale_and_foreign_apiservices(setup):
    controller, store, lister = setup(stored("v1beta1.gone", "onstart"), stored("v1.user.io", None),
                                      stored("v1.crd.io", "true"))
    run(controller, "v1beta1.gone", "v1.user.io", "v1.crd.io")
    assert store.calls == [("delete", "v1beta1.gone"), ("delete", "v1.crd.io")]
    assert set(lister.items) == {"v1.user.io"}
    lister.items["v1.late.io"] = stored("v1.late.io", "onstart")  # another server's, created after start
    asyncio.run(controller.check_api_service("v1.late.io"))
    assert "v1.late.io" in lister.items


def test_register_and_unregister_local(setup):
    controller, store, lister = setup()
    register_delegates(controller, ["/apis/apps/v1"])
    controller.register_local("stable.example.com", "v1")
    controller.register_local("apps", "v1")  # built-in: stays as registered at start
    run(controller, "v1.stable.example.com", "v1.apps")
    crd = lister.items["v1.stable.example.com"]
    assert crd["metadata"]["labels"] == {MANAGED_LABEL: "true"}
    assert (crd["spec"]["groupPriorityMinimum"], crd["spec"]["versionPriority"]) == (1000, 100)
    assert lister.items["v1.apps"]["spec"]["groupPriorityMinimum"] == 17800
    controller.unregister_local("stable.example.com", "v1")
    controller.unregister_local("apps", "v1")
    asyncio.run(controller.check_api_service("v1.stable.example.com"))
    assert "v1.stable.example.com" not in lister.items and "v1.apps" in lister.items


def test_served_group_versions_and_health_check():
    assert served_group_versions(["/api/v1", "/apis/a.io", "/apis/a.io/v1", "/apis/a.io/v1/x", "/version"]) == [
        ("", "v1"), ("a.io", "v1")]
    lister = FakeLister()
    check = AvailableHealthCheck("autoregister-completion", [stored("v1.apps", "onstart"), stored("v1.", "onstart")],
                                 lister)  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"^missing APIService: \[v1\. v1\.apps\]$"):
        asyncio.run(check.check())
    for handler in lister.handlers:
        handler("ADDED", {**stored("v1.apps", "onstart"), "status": {"conditions": [
            {"type": "Available", "status": "True"}]}})
    with pytest.raises(Exception, match=r"^missing APIService: \[v1\.\]$"):
        asyncio.run(check.check())
