"""GenericAPIServer: one link of the server chain (k8s.io/apiserver/pkg/server/genericapiserver.go).

Each server has its own REST container and non-REST mux behind a director; what neither claims goes
to the delegate's unprotected handler (no second authentication). Hooks and health checks of the
delegates are merged into the outer server, which is the one that runs."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

import orjson

from ..apimachinery import errors
from ..apimachinery.openapischema import SchemaSource
from ..endpoints.discovery import GroupVersionDiscovery
from ..endpoints.handlers.responses import write_status_error
from ..endpoints.http import Handler, Request, Response
from ..endpoints.installer import APIGroupVersion
from ..endpoints.openapi_v2 import OpenAPIV2Service
from . import healthz
from .api_group_info import APIGroupInfo
from .config import CompletedConfig
from .handler import APIServerHandler
from .hooks import Hook, Hooks
from .metrics import metrics_handler
from .profiling import Profiling
from .restful import APIContainer
from .serving import SecureServingInfo, serve

log = logging.getLogger("kube_apiserver.server")


class DelegationTarget(Protocol):
    hooks: Hooks
    healthz_checks: list[healthz.HealthChecker]
    livez_checks: list[healthz.HealthChecker]
    readyz_checks: list[healthz.HealthChecker]

    def unprotected_handler(self) -> Handler: ...

    def listed_paths(self) -> list[str]: ...


class EmptyDelegate:
    """The end of the chain: everything that reaches it is 404 NotFound."""

    def __init__(self) -> None:
        self.hooks = Hooks()
        self.healthz_checks: list[healthz.HealthChecker] = []
        self.livez_checks: list[healthz.HealthChecker] = []
        self.readyz_checks: list[healthz.HealthChecker] = []

    def unprotected_handler(self) -> Handler:
        async def not_found(req: Request) -> Response:
            return write_status_error(req, errors.route_not_found())
        return not_found

    def listed_paths(self) -> list[str]:
        return []


class GenericAPIServer:
    def __init__(self, name: str, config: CompletedConfig, delegate: DelegationTarget):
        self.name = name
        self.config = config
        self.delegate = delegate
        self.restful = APIContainer(config.discovery)
        self.handler = APIServerHandler(name, self.restful, delegate.unprotected_handler(),
                                        lambda h: config.build_handler_chain(h, config.config))
        self.hooks = Hooks()
        self.hooks.merge(delegate.hooks)
        self.healthz_checks = list(delegate.healthz_checks)
        self.livez_checks = list(delegate.livez_checks)
        self.readyz_checks = list(delegate.readyz_checks)
        for check in getattr(config, "health_checks", ()):  # addHealthChecksWithoutLivez: once, however many servers chain
            if check not in self.healthz_checks:
                self.healthz_checks.append(check)
                self.readyz_checks.append(check)

    def unprotected_handler(self) -> Handler:
        return self.handler.director

    def listed_paths(self) -> list[str]:
        paths = set(self.handler.non_restful_mux.listed_paths()) | self.restful.root_paths
        return sorted(paths | set(self.delegate.listed_paths()))

    # ---- installing APIs ----

    def install_api_groups(self, *infos: APIGroupInfo) -> None:
        for info in infos:
            for version, storage in info.versioned_storage.items():
                self.install_group_version(info.group, version, storage)
        if any(info.group for info in infos):
            self.restful.root_paths.add("/apis")

    def install_group_version(self, group: str, version: str, storage: dict[str, Any],
                              schemas: SchemaSource | None = None, **scope_options: Any) -> None:
        """Routes, discovery and OpenAPI for one group version; installing it again replaces it (custom
        resources come and go while the server runs)."""
        options = {"admission": self.config.admission, "min_request_timeout": self.config.min_request_timeout,
                   "stopping": self.config.lifecycle.stopping, **scope_options}
        gv = APIGroupVersion(group, version, storage, options, schemas or self.config.schemas)
        routes = gv.install()
        self.restful.add_group_version(group, version, routes)
        self.config.equivalent_resources.register(group, version, {key: r.scope for key, r in routes.items()})
        self.config.discovery.add(GroupVersionDiscovery(group, version, gv.api_resources(routes)))
        self.config.openapi.add(group, version, routes, schemas)

    def remove_group_version(self, group: str, version: str) -> None:
        self.restful.remove_group_version(group, version)
        self.config.equivalent_resources.unregister(group, version)
        self.config.discovery.remove(group, version)
        self.config.openapi.remove(group, version)

    def install_legacy_api_group(self, info: APIGroupInfo) -> None:
        self.install_api_groups(info)
        self.restful.root_paths.add("/api")

    # ---- hooks and checks ----

    def add_post_start_hook(self, name: str, hook: Hook) -> None:
        self.hooks.add_post_start_hook(name, hook)

    def add_pre_shutdown_hook(self, name: str, hook: Hook) -> None:
        self.hooks.add_pre_shutdown_hook(name, hook)

    def add_health_checks(self, *checks: healthz.HealthChecker) -> None:
        """Checks for all three endpoints (k8s AddHealthChecks)."""
        self.healthz_checks.extend(checks)
        self.livez_checks.extend(checks)
        self.readyz_checks.extend(checks)

    def add_readyz_checks(self, *checks: healthz.HealthChecker) -> None:
        self.readyz_checks.extend(checks)

    # ---- running ----

    def prepare_run(self) -> PreparedGenericAPIServer:
        mux = self.handler.non_restful_mux
        hook_checks = [hook.health_check() for hook in self.hooks.post_start.values()]
        lifecycle = self.config.lifecycle

        async def shutdown_check() -> None:
            if lifecycle.shutdown_initiated.is_set():
                raise healthz.HealthCheckError("process is shutting down")

        shutdown = healthz.HealthChecker("shutdown", shutdown_check)
        healthz.install_handler(mux, "/healthz", lambda: [healthz.PING, *self.healthz_checks])
        live_hook_checks = [_delayed(check, self.config.livez_grace_period) for check in hook_checks]
        healthz.install_handler(mux, "/livez", lambda: [healthz.PING, *self.livez_checks, *live_hook_checks])
        healthz.install_handler(mux, "/readyz",
                                lambda: [healthz.PING, *self.readyz_checks, *hook_checks, shutdown])
        mux.handle("/version", _json_handler(self.config.version))
        mux.handle("/version/", _json_handler(self.config.version))
        mux.handle("/metrics", metrics_handler(self.config.metrics))
        if self.config.enable_profiling:
            Profiling().install(mux)
        mux.handle("/openapi/v3", self.config.openapi.serve_root)
        mux.handle_prefix("/openapi/v3/", self.config.openapi.serve_document)
        mux.handle("/openapi/v2", OpenAPIV2Service(self.config.openapi).serve)
        mux.handle("/", self._index)
        return PreparedGenericAPIServer(self)

    async def _index(self, req: Request) -> Response:
        body = orjson.dumps({"paths": self.listed_paths()}, option=orjson.OPT_INDENT_2)
        return Response(200, body)


def _delayed(check: healthz.HealthChecker, grace: float) -> healthz.HealthChecker:
    """delayedHealthCheck (--livez-grace-period): a boot-sequence check of /livez passes until `grace`
    seconds after the server is prepared, so a slow start is not taken for a dead server."""
    if grace <= 0:
        return check
    loop = asyncio.get_running_loop()
    start_checking = loop.time() + grace

    async def delayed() -> None:
        if loop.time() >= start_checking:
            await check.check()

    return healthz.HealthChecker(check.name, delayed)


def _json_handler(doc: dict) -> Handler:
    body = orjson.dumps(doc, option=orjson.OPT_INDENT_2)

    async def serve_json(req: Request) -> Response:
        return Response(200, body)
    return serve_json


class PreparedGenericAPIServer:
    def __init__(self, server: GenericAPIServer):
        self.server = server

    @staticmethod
    async def _drain(config: Any) -> None:
        """InFlightRequestsDrained: the non-long-running requests, and the watches within their grace."""
        grace = config.shutdown_watch_termination_grace_period
        waits = [config.non_long_running_requests.wait(max(config.request_timeout, 1.0))]
        if grace > 0:
            waits.append(config.watch_requests.wait(grace))
        await asyncio.gather(*waits)

    async def run(self, serving: SecureServingInfo, stop: asyncio.Event,
                  started: asyncio.Event | None = None) -> None:
        """Serve until `stop`, then shut down as kube-apiserver does: readyz fails first, wait the
        shutdown delay, pre-shutdown hooks, end watches and drain requests, then destroy storage."""
        server, config = self.server, self.server.config
        http = await serve(server.handler, serving)
        serving.port = http.port  # the real one when asked for port 0
        log.info("Serving securely on %s:%d", serving.host, http.port)
        await server.hooks.run_post_start_hooks()
        if started is not None:
            started.set()
        await stop.wait()
        config.lifecycle.shutdown_initiated.set()
        if config.shutdown_delay:
            await asyncio.sleep(config.shutdown_delay)
        await server.hooks.stop_post_start_hooks()
        await server.hooks.run_pre_shutdown_hooks()
        grace = config.shutdown_watch_termination_grace_period
        if grace > 0:
            config.watch_requests.start_draining(grace)  # before the watches hear of it: each end waits its turn
        config.lifecycle.stopping.set()  # not accepting new requests
        drained = asyncio.ensure_future(self._drain(config))
        if config.shutdown_send_retry_after:
            await drained  # still listening, answering 429, until what is in flight is done
        await http.shutdown()
        await drained
        for destroy in config.destroy_functions:
            await destroy()
        log.info("Stopped serving")
