"""Config -> complete() -> new(name, delegate): how every GenericAPIServer of the chain is made
(k8s.io/apiserver/pkg/server/config.go)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..admission.interfaces import Chain
from ..apimachinery.equivalence import EquivalentResourceRegistry
from ..apimachinery.openapischema import NO_SCHEMAS, SchemaSource
from ..authentication.interfaces import RequestAuthenticator
from ..authorization.authorizer import Authorizer
from ..endpoints.discovery import DiscoveryManager
from ..endpoints.http import Handler
from ..endpoints.openapi import OpenAPIService
from ..flowcontrol.controller import Controller as FlowControl
from .filters.audit import (
    AuditBackend,
    PolicyRuleEvaluator,
    with_audit,
    with_audit_init,
    with_failed_authentication_audit,
)
from .filters.authentication import AuthenticationMetrics, with_authentication
from .filters.authorization import with_authorization
from .filters.cors import with_cors
from .filters.hsts import with_hsts
from .filters.httplog import with_httplog
from .filters.impersonation import with_impersonation
from .filters.maxinflight import with_max_in_flight_limit
from .filters.priority_and_fairness import with_priority_and_fairness
from .filters.recovery import with_panic_recovery
from .filters.requestinfo import with_request_info
from .filters.shutdown import (
    RequestWaitGroup,
    WatchTermination,
    with_retry_after,
    with_wait_group,
    with_watch_termination,
)
from .filters.timeout import with_timeout
from .metrics import Registry, with_metrics

if TYPE_CHECKING:
    from .generic_api_server import DelegationTarget, GenericAPIServer


@dataclass
class LifecycleSignals:
    """Shared by the whole chain: one shutdown for all (k8s lifecycle_signals.go)."""

    shutdown_initiated: asyncio.Event = field(default_factory=asyncio.Event)
    # Set after the shutdown delay: open watches end cleanly, in-flight requests drain.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Config:
    authenticator: RequestAuthenticator
    authorizer: Authorizer
    admission: Chain = field(default_factory=lambda: Chain([]))
    request_timeout: float = 60.0
    min_request_timeout: float = 1800.0
    shutdown_delay: float = 0.0
    shutdown_send_retry_after: bool = False  # --shutdown-send-retry-after
    livez_grace_period: float = 0.0  # --livez-grace-period
    shutdown_watch_termination_grace_period: float = 0.0  # --shutdown-watch-termination-grace-period
    cors_allowed_origins: list[str] = field(default_factory=list)  # --cors-allowed-origins
    hsts_directives: list[str] = field(default_factory=list)  # --strict-transport-security-directives
    enable_profiling: bool = True  # --profiling: /debug/pprof/ and /debug/flags/v
    non_long_running_requests: RequestWaitGroup = field(default_factory=RequestWaitGroup)
    watch_requests: WatchTermination = field(default_factory=WatchTermination)
    version: dict[str, str] = field(default_factory=dict)
    external_address: str = ""
    audit_backend: AuditBackend | None = None
    audit_policy: PolicyRuleEvaluator | None = None  # with no policy nothing is audited, as upstream
    discovery: DiscoveryManager = field(default_factory=DiscoveryManager)
    # What every installed group version serves, for admission's equivalent resources and conversions.
    equivalent_resources: EquivalentResourceRegistry = field(default_factory=EquivalentResourceRegistry)
    schemas: SchemaSource = NO_SCHEMAS
    openapi: OpenAPIService = field(default_factory=OpenAPIService)
    lifecycle: LifecycleSignals = field(default_factory=LifecycleSignals)
    metrics: Registry = field(default_factory=Registry)
    authentication_metrics: AuthenticationMetrics = field(default_factory=AuthenticationMetrics)
    # Run when the server has stopped (storage is closed here).
    destroy_functions: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Checks of /healthz and /readyz (not /livez) every server of the chain has: the KMS providers'.
    health_checks: list[Any] = field(default_factory=list)
    build_handler_chain: Callable[[Handler, Config], Handler] | None = None
    # API Priority and Fairness; without it, the max-in-flight limits (0: unlimited)
    flow_control: FlowControl | None = None
    max_requests_inflight: int = 0
    max_mutating_requests_inflight: int = 0
    # Test suites' filters (--enable-testing-endpoints), met after impersonation, before flow control.
    testing_filters: Callable[[Handler], Handler] | None = None

    def complete(self) -> CompletedConfig:
        if self.build_handler_chain is None:
            self.build_handler_chain = default_build_handler_chain
        self.discovery.server_address = self.discovery.server_address or self.external_address
        self.openapi.schemas = self.schemas
        if self.authentication_metrics.lines not in self.metrics.collectors:
            self.metrics.collectors.append(self.authentication_metrics.lines)
        return CompletedConfig(self)


@dataclass
class CompletedConfig:
    config: Config

    def __getattr__(self, name: str) -> Any:
        return getattr(self.config, name)

    def new(self, name: str, delegate: DelegationTarget) -> GenericAPIServer:
        from .generic_api_server import GenericAPIServer
        return GenericAPIServer(name, self, delegate)


def default_build_handler_chain(api_handler: Handler, c: Config) -> Handler:
    """Innermost first; a request meets them in the reverse order: audit init, recovery, request info,
    httplog, retry-after (shutting down), HSTS, metrics, watch termination, wait group, timeout, CORS,
    authentication (its failures audited), audit, impersonation, [testing filters], flow control (priority and fairness, or
    max-in-flight), authorization, then the director."""
    handler = with_authorization(api_handler, c.authorizer)
    if c.flow_control is not None:
        handler = with_priority_and_fairness(handler, c.flow_control)
    else:
        handler = with_max_in_flight_limit(handler, c.max_requests_inflight, c.max_mutating_requests_inflight)
    if c.testing_filters is not None:  # --enable-testing-endpoints: request history and fault injection
        handler = c.testing_filters(handler)
    handler = with_impersonation(handler, c.authorizer)
    handler = with_audit(handler, c.audit_backend, c.audit_policy)
    handler = with_authentication(handler, c.authenticator, c.authentication_metrics)
    handler = with_failed_authentication_audit(handler, c.audit_backend, c.audit_policy)
    handler = with_cors(handler, c.cors_allowed_origins)
    handler = with_timeout(handler, c.request_timeout)
    handler = with_wait_group(handler, c.non_long_running_requests)
    if c.shutdown_watch_termination_grace_period > 0:
        handler = with_watch_termination(handler, c.watch_requests)
    handler = with_metrics(handler, c.metrics)
    handler = with_hsts(handler, c.hsts_directives)
    if c.shutdown_send_retry_after:
        handler = with_retry_after(handler, c.lifecycle.stopping)
    handler = with_httplog(handler)
    handler = with_request_info(handler)
    return with_audit_init(with_panic_recovery(handler))
