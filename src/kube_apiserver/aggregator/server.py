"""The aggregator, the outermost link (k8s.io/kube-aggregator pkg/apiserver/apiserver.go): it serves
apiregistration.k8s.io/v1 APIServices, answers /apis and /apis/<group> from them, and sends each
APIService's /apis/<group>/<version> either down the chain (local) or to the aggregated API server
behind its service (remote). Its controllers register the chain's own group versions, keep every
APIService's Available condition, and fetch the aggregated servers' discovery."""

from __future__ import annotations

import logging
from typing import Any

from ..admission.webhook.serviceresolution import RouteTable, ServiceLookup
from ..endpoints.http import Handler, Request, Response
from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer
from ..storage.factory import StorageFactory
from . import apiservice
from .autoregister import AutoRegisterController, AvailableHealthCheck, register_delegates
from .available import LocalAvailableController, RemoteAvailableController
from .crdregistration import CRD_GROUP, CRDRegistrationController
from .discovery import AggregatedDiscovery, APIGroupHandler, APIsHandler
from .helpers import GROUP, LEGACY_API_SERVICE_NAME, name_to_group_version, proxy_path, spec_of
from .lister import APIServiceLister
from .proxy import ProxyHandler
from .remote import RemoteDiscovery
from .transport import Transport

log = logging.getLogger("kube_apiserver.aggregator")
Object = dict[str, Any]


def chain_routes(delegate: Any) -> RouteTable:
    """Every group version served down the chain (kube-apiserver's, then apiextensions')."""
    routes: RouteTable = {}
    while delegate is not None and hasattr(delegate, "restful"):
        for key, value in delegate.restful.group_versions.items():
            routes.setdefault(key, value)
        delegate = getattr(delegate, "delegate", None)
    return routes


class APIAggregator:
    def __init__(self, config: CompletedConfig, delegate: DelegationTarget, storage: StorageFactory,
                 proxy_client_cert: tuple[str, str] | None = None):
        self.server = config.new("kube-aggregator", delegate)
        self.delegate_handler = delegate.unprotected_handler()
        self.server.install_api_groups(apiservice.new_api_group_info(storage))
        self.server.restful.root_paths.discard("/apis")  # /apis is answered from the APIServices
        routes = self.server.restful.group_versions[(GROUP, "v1")]
        self.store = routes["apiservices"].scope.storage
        status_store = routes["apiservices/status"].scope.storage
        served = chain_routes(delegate)
        # The proxy client certificate is the aggregator's identity to aggregated servers: they trust the
        # X-Remote-* headers of a client the request-header CA vouches for.
        self.lookup, self.transport = ServiceLookup(served), Transport(proxy_client_cert)
        self.lister = APIServiceLister(self.store)
        self.proxy_handlers: dict[str, ProxyHandler] = {}
        self.group_handlers: dict[str, APIGroupHandler] = {}
        self.handled_versions: dict[str, set[str]] = {}
        self.remote_discovery = RemoteDiscovery()
        aggregated = AggregatedDiscovery(config.discovery, self.lister, self.remote_discovery.snapshot)
        self.apis_handler = APIsHandler(self.lister, aggregated)
        self.mux = self.server.handler.non_restful_mux
        self.mux.handle("/apis", self.apis_handler)
        self.mux.not_found = self.route  # APIService paths first, then the delegate
        self.lister.add_handler(self._on_api_service)  # the APIService registration controller
        self.local_available = LocalAvailableController(self.lister, status_store)
        self.remote_available = RemoteAvailableController(self.lister, status_store, self.lookup, self.transport)
        self.auto_registration = AutoRegisterController(self.lister, self.store)
        registered = register_delegates(self.auto_registration, delegate.listed_paths())
        crd_route = served.get((CRD_GROUP, "v1"), {}).get("customresourcedefinitions")
        self.crd_registration = None if crd_route is None else \
            CRDRegistrationController(crd_route.scope.storage, self.auto_registration)
        self._add_hooks()
        # Connections to aggregated servers close with storage, after in-flight requests have drained.
        config.destroy_functions.append(self.transport.close)
        self.server.add_health_checks(
            AvailableHealthCheck("autoregister-completion", registered, self.lister).health_checker())

    def _add_hooks(self) -> None:
        add = self.server.add_post_start_hook
        add("start-kube-aggregator-informers", self.lister.start)
        add("apiservice-registration-controller", self.lister.start)
        add("apiservice-status-local-available-controller", self.local_available.run)
        add("apiservice-status-remote-available-controller", self.remote_available.run)
        add("apiservice-discovery-controller", self._run_discovery)
        add("kube-apiserver-autoregistration", self._run_autoregistration)
        self.server.add_pre_shutdown_hook("stop-kube-aggregator-controllers", self.stop)

    async def _run_discovery(self) -> None:
        await self.lister.start()
        await self.remote_discovery.run()

    async def _run_autoregistration(self) -> None:
        """The CRDs that exist are registered first, so the first sync does not delete their APIServices."""
        if self.crd_registration is not None:
            await self.crd_registration.run()
        await self.auto_registration.run()

    async def stop(self) -> None:
        for controller in (self.auto_registration, self.crd_registration, self.local_available,
                           self.remote_available, self.remote_discovery, self.lister):
            if controller is not None:
                await controller.stop()

    # ---- the API the apiextensions server (or anything serving new group versions) calls ----

    def register_local(self, group: str, version: str) -> None:
        """A group version the chain now serves (a CRD's): it gets a local APIService, listed in /apis."""
        self.auto_registration.register_local(group, version)

    def unregister_local(self, group: str, version: str) -> None:
        self.auto_registration.unregister_local(group, version)

    # ---- AddAPIService / RemoveAPIService ----

    def _on_api_service(self, event_type: str, obj: Object) -> None:
        if event_type == "DELETED":
            self.remove_api_service(obj["metadata"]["name"])
        elif event_type != "RESYNC":
            self.add_api_service(obj)

    def add_api_service(self, obj: Object) -> None:
        name = obj["metadata"]["name"]
        handler = self.proxy_handlers.get(name)
        if handler is not None:
            handler.update_api_service(obj)
            self.remote_discovery.add_api_service(obj, handler)
            return
        handler = ProxyHandler(self.delegate_handler, self.transport, self.lookup, obj)
        self.remote_discovery.add_api_service(obj, handler)
        self.proxy_handlers[name] = handler
        self.mux.handle(proxy_path(obj), handler)
        if name == LEGACY_API_SERVICE_NAME:
            return
        group, version = spec_of(obj).get("group", ""), spec_of(obj).get("version", "")
        if group in self.handled_versions:
            self.handled_versions[group].add(version)
            return
        self.handled_versions[group] = {version}
        self.group_handlers[group] = APIGroupHandler(group, self.lister, self.delegate_handler)
        self.mux.handle(f"/apis/{group}", self.group_handlers[group])

    def remove_api_service(self, name: str) -> None:
        self.remote_discovery.remove_api_service(name)
        group, version = name_to_group_version(name)
        self.mux.exact.pop("/api" if name == LEGACY_API_SERVICE_NAME else f"/apis/{group}/{version}", None)
        self.proxy_handlers.pop(name, None)
        versions = self.handled_versions.get(group)
        if name == LEGACY_API_SERVICE_NAME or versions is None:
            return
        versions.discard(version)
        if not versions:
            del self.handled_versions[group]
            self.group_handlers.pop(group, None)
            self.mux.exact.pop(f"/apis/{group}", None)

    # ---- routing what the mux does not hold exactly ----

    def _handler_for(self, path: str) -> Handler | None:
        if path == "/apis/":
            return self.apis_handler
        parts = path.split("/")
        if parts[1:2] == ["api"]:
            return self.proxy_handlers.get(LEGACY_API_SERVICE_NAME)
        if parts[1:2] != ["apis"] or len(parts) < 3:
            return None
        if len(parts) == 3 or (len(parts) == 4 and not parts[3]):  # /apis/<group>[/]
            return self.group_handlers.get(parts[2])
        return self.proxy_handlers.get(f"{parts[3]}.{parts[2]}")

    async def route(self, req: Request) -> Response:
        handler = self._handler_for(req.path)
        return await (handler or self.delegate_handler)(req)


def new_aggregator_server(config: CompletedConfig, delegate: DelegationTarget, storage: StorageFactory,
                          proxy_client_cert: tuple[str, str] | None = None) -> GenericAPIServer:
    aggregator = APIAggregator(config, delegate, storage, proxy_client_cert)
    server = aggregator.server
    server.aggregator = aggregator  # type: ignore[attr-defined]  # reachable from the chain's head
    return server
