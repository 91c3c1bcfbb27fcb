"""Replicas (or --workers) starting together race to create the `kubernetes` Service: the loser's create fails
on the cluster IP the winner allocated before writing the Service, and it reads the Service again for a moment
instead of reporting an error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.controlplane import kubernetesservice
from kube_apiserver.controlplane.kubernetesservice import KubernetesServiceConfig, KubernetesServiceController


class RacingServices:
    """The winner's Service appears after `reads_before` more reads."""

    def __init__(self, reads_before: int):
        self.reads_before = reads_before
        self.strategy = self

    def default(self, obj: dict[str, Any]) -> None:
        pass

    async def get(self, ctx: Any, name: str) -> dict[str, Any]:
        if self.reads_before > 0:
            self.reads_before -= 1
            raise errors.not_found("services", "", name)
        return {"metadata": {"name": name}}

    async def create(self, ctx: Any, obj: dict[str, Any]) -> dict[str, Any]:
        raise errors.StatusError(422, "Invalid", "failed to allocate IP 10.0.0.1: provided IP is already allocated")


def controller(services: RacingServices) -> KubernetesServiceController:
    ctl = KubernetesServiceController(None, KubernetesServiceConfig("10.0.0.1", "192.0.2.1", lambda: 6443))  # type: ignore[arg-type]
    ctl._store = lambda group, resource: services  # type: ignore[method-assign,assignment,return-value]
    return ctl


def test_a_create_that_lost_the_cluster_ip_finds_the_winners_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubernetesservice, "RACE_READ_INTERVAL", 0.001)
    asyncio.run(controller(RacingServices(reads_before=4)).ensure_service())  # the first read, then 3 more


def test_the_error_stands_when_no_service_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubernetesservice, "RACE_READ_INTERVAL", 0.001)
    with pytest.raises(errors.StatusError):
        asyncio.run(controller(RacingServices(reads_before=10_000)).ensure_service())


class UnreachableServices(RacingServices):
    async def get(self, ctx: Any, name: str) -> dict[str, Any]:
        from kube_apiserver.storage.kv import StorageUnavailableError

        raise StorageUnavailableError("etcd: failed to connect to all addresses")


def test_a_sync_with_the_store_out_of_reach_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    """etcd gone as the server starts: the first sync's error escaped and failed the bootstrap-controller hook
    (with a traceback), so the Service was never reconciled again. As UpdateKubernetesService's errors, it is
    logged and tried at the next interval."""
    import logging

    with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
        asyncio.run(controller(UnreachableServices(0)).sync())
    assert [r.getMessage() for r in caplog.records] == [
        "unable to sync kubernetes service: etcd: failed to connect to all addresses"]
