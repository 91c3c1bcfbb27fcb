"""The remote availability checks before discovery (remote_available_controller.go): their reasons and
messages, in the controller's order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.admission.webhook.serviceresolution import ResolveError
from kube_apiserver.aggregator.available import RemoteAvailableController, Unavailable


class Lookup:
    services = slices = endpoints = None

    def __init__(self, service: dict | None, slices: list[dict] | None = None):
        self._service, self._slices = service, slices or []

    async def service(self, namespace: str, name: str) -> dict | None:
        return self._service

    async def endpoint_slices(self, namespace: str, name: str) -> list[dict]:
        return self._slices

    async def resolve_endpoint(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        raise ResolveError(f'no endpoints available for service "{name}"')


class Lister:
    def add_handler(self, handler: Any) -> None:
        pass


API_SERVICE = {"metadata": {"name": "v1beta1.metrics.k8s.io"},
               "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "service": {
                   "namespace": "kube-system", "name": "metrics-server", "port": 443}}}
SERVICE = {"spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443}]}}
READY_SLICE = {"endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": True}}],
               "ports": [{"name": "https", "port": 4443}]}


def check(service: dict | None, slices: list[dict] | None = None) -> Unavailable:
    controller = RemoteAvailableController(Lister(), None, Lookup(service, slices), None)  # type: ignore[arg-type]
    with pytest.raises(Unavailable) as failure:
        asyncio.run(controller.check(API_SERVICE))
    return failure.value


@pytest.mark.parametrize(("service", "slices", "reason", "message"), [
    (None, None, "ServiceNotFound", 'service/metrics-server in "kube-system" is not present'),
    ({"spec": {"type": "ClusterIP", "ports": [{"port": 8443}]}}, None, "ServicePortError",
     'service/metrics-server in "kube-system" is not listening on port 443'),
    (SERVICE, [], "EndpointsNotFound", 'cannot find endpointslices for service/metrics-server in "kube-system"'),
    (SERVICE, [{**READY_SLICE, "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": False}}]}],
     "MissingEndpoints", 'endpointslices for service/metrics-server in "kube-system" have no addresses with port '
                         'name "https"'),
    (SERVICE, [{**READY_SLICE, "ports": [{"name": "metrics", "port": 4443}]}], "MissingEndpoints",
     'endpointslices for service/metrics-server in "kube-system" have no addresses with port name "https"'),
    (SERVICE, [READY_SLICE], "FailedDiscoveryCheck", 'no endpoints available for service "metrics-server"'),
    ({"spec": {"type": "ExternalName", "externalName": "x.example.com"}}, None, "FailedDiscoveryCheck",
     'no endpoints available for service "metrics-server"'),
])
def test_checks(service, slices, reason, message):
    failure = check(service, slices)
    assert (failure.status, failure.reason, failure.message) == ("False", reason, message)
    assert failure.retry == (reason == "FailedDiscoveryCheck")


def test_the_first_successful_discovery_attempt_is_enough():
    """The five attempts run at once; a slow or hung one does not hold the check once one succeeded."""
    controller = RemoteAvailableController(Lister(), None, Lookup(SERVICE, [READY_SLICE]), None)  # type: ignore[arg-type]
    started, cancelled = [], []

    async def attempt(api_service: dict, namespace: str, name: str, port: int) -> str:
        started.append(name)
        if len(started) == 2:
            return ""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return "never"

    controller._attempt = attempt  # type: ignore[method-assign]

    async def main() -> None:
        await asyncio.wait_for(controller.check(API_SERVICE), 5)

    asyncio.run(main())
    assert len(started) == 5 and len(cancelled) == 4  # the others are not left running
