"""The kube-apiserver link of the chain: installs the built-in groups and runs the bootstrap
controller (k8s pkg/controlplane/instance.go)."""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass, field

from ..api import core
from ..api.core.service import ServiceNetwork
from ..api.core.service.network import DEFAULT_CIDR
from ..api.core.service.repair import ServiceRepairController
from ..api.groups import installed_groups
from ..apimachinery.clock import current_ids
from ..authentication.review import TokenReviewer
from ..cli.portrange import PortRange
from ..client.rest import Client
from ..controllers.certificates.config import CSRSigningConfiguration
from ..controllers.endpointslice.config import EndpointSliceConfiguration
from ..controllers.leaderelection import LeaderElectionConfiguration
from ..controllers.manager import ControllerManager
from ..controllers.podautoscaler.config import HPAControllerConfiguration
from ..kubelet.config import NodesConfiguration
from ..server.config import CompletedConfig
from ..server.generic_api_server import DelegationTarget, GenericAPIServer
from ..server.healthz import HealthChecker
from ..server.serving import SecureServingInfo
from ..serviceaccount import openid
from ..serviceaccount.issuer import TokenConfig
from ..storage.factory import StorageFactory
from .bootstrap import SystemNamespacesController
from .clusterauthenticationtrust import ClusterAuthenticationInfo, ClusterAuthenticationTrustController
from .identitylease import IdentityLeaseController, IdentityLeaseGarbageCollector
from .kubernetesservice import INTERVAL_SECONDS, KubernetesServiceConfig, KubernetesServiceController
from .reconcilers import DEFAULT_ENDPOINT_RECONCILER_TTL, LEASE, new_endpoint_reconciler

log = logging.getLogger("kube_apiserver.controlplane")


@dataclass
class ExtraConfig:
    storage: StorageFactory
    service_cluster_ip_range: str = "10.0.0.0/24"
    api_server_service_ip: str = "10.0.0.1"
    advertise_address: str = "127.0.0.1"
    secure_port: int = 6443
    controllers: list[str] = field(default_factory=lambda: ["*"])
    service_node_port_range: PortRange = field(default_factory=lambda: PortRange(30000, 2768))
    # The listener: its port is the real one once serving, even when asked for port 0.
    serving: SecureServingInfo | None = None
    # The service account token issuer: serviceaccounts/token and the OpenID discovery documents.
    service_accounts: TokenConfig | None = None
    # What TokenReview asks (the server's own token authenticators).
    token_reviewer: TokenReviewer | None = None
    # The CA bundle that verifies this server, published in every namespace as kube-root-ca.crt.
    root_ca: str = ""
    # --leader-elect*: the embedded controllers run on the replica holding their Lease.
    leader_election: LeaderElectionConfiguration = field(default_factory=LeaderElectionConfiguration)
    # --endpoint-reconciler-type and --apiserver-count; the TTL and interval are kube-apiserver's constants.
    endpoint_reconciler_type: str = LEASE
    apiserver_count: int = 1
    endpoint_reconciler_ttl: float = DEFAULT_ENDPOINT_RECONCILER_TTL
    endpoint_reconciler_interval: float = INTERVAL_SECONDS
    # The APIServerIdentity feature: this replica's identity Lease, named after its hostname.
    identity_lease: bool = True
    hostname: str = field(default_factory=socket.gethostname)
    # The storage admits no other process (SQLite's data dir lock): this replica is the only candidate.
    exclusive_storage: bool = False
    # --workers: this worker's name among the storage process's ("<generation>-<index>"; "" otherwise)
    worker: str = ""
    # The loopback client the embedded controllers write (and their informers watch) through.
    loopback: Client | None = None
    # csrsigning's CA files and durations, the horizontalpodautoscaling controller's periods.
    csr_signing: CSRSigningConfiguration = field(default_factory=CSRSigningConfiguration)
    hpa: HPAControllerConfiguration = field(default_factory=HPAControllerConfiguration)
    # --max-endpoints-per-slice, --mirroring-max-endpoints-per-subset.
    endpoint_slices: EndpointSliceConfiguration = field(default_factory=EndpointSliceConfiguration)
    # --simulated-nodes and the node lifecycle's grace period.
    nodes: NodesConfiguration = field(default_factory=NodesConfiguration)
    # --terminated-pod-gc-threshold (podgc).
    terminated_pod_gc_threshold: int = 12500
    # The client CA and front-proxy configuration published in kube-system/extension-apiserver-authentication.
    authentication_info: ClusterAuthenticationInfo = field(default_factory=ClusterAuthenticationInfo)

    def service_network(self) -> ServiceNetwork:
        return ServiceNetwork(self.service_cluster_ip_range or DEFAULT_CIDR, self.service_node_port_range)

    def public_port(self) -> int:
        return self.serving.port if self.serving is not None and self.serving.port else self.secure_port

    def external_address(self) -> str:
        host = f"[{self.advertise_address}]" if ":" in self.advertise_address else self.advertise_address
        return f"{host}:{self.public_port()}"


class Instance:
    def __init__(self, generic: CompletedConfig, extra: ExtraConfig, delegate: DelegationTarget):
        self.generic_api_server = generic.new("kube-apiserver", delegate)
        self.extra = extra
        self.generic_api_server.install_legacy_api_group(core.new_api_group_info(
            extra.storage, extra.service_network(), extra.service_accounts))
        self._install_issuer_discovery()
        groups = installed_groups()
        dependencies = {"token_reviewer": extra.token_reviewer, "authorizer": generic.authorizer}
        self.generic_api_server.install_api_groups(*(
            group.new_api_group_info(extra.storage, **{name: dependencies[name] for name in
                                                       getattr(group, "DEPENDENCIES", ())})
            for group in groups))
        for group in groups:
            hooks = getattr(group, "post_start_hooks", None)
            for hook_name, hook in (hooks(self.generic_api_server.restful.group_versions) if hooks else {}).items():
                self.generic_api_server.add_post_start_hook(hook_name, hook)
                if hasattr(hook, "stop"):  # a hook that keeps working after it is done stops before shutdown
                    self.generic_api_server.add_pre_shutdown_hook(f"stop-{hook_name}", hook.stop)
        self.generic_api_server.add_health_checks(HealthChecker("etcd", self._storage_check),
                                                  HealthChecker("log", _log_check))
        namespaces = SystemNamespacesController(self.generic_api_server.restful)
        self.generic_api_server.add_post_start_hook("start-system-namespaces-controller", namespaces.start)
        self.generic_api_server.add_pre_shutdown_hook("stop-system-namespaces-controller", namespaces.stop)
        reconciler = new_endpoint_reconciler(extra.endpoint_reconciler_type, extra.storage.store,
                                             extra.apiserver_count, extra.endpoint_reconciler_ttl)
        kubernetes = KubernetesServiceController(self.generic_api_server.restful, KubernetesServiceConfig(
            extra.api_server_service_ip, extra.advertise_address, extra.public_port, reconciler,
            extra.endpoint_reconciler_interval))
        self.generic_api_server.add_post_start_hook("bootstrap-controller", kubernetes.start)
        self.generic_api_server.add_pre_shutdown_hook("stop-bootstrap-controller", kubernetes.stop)
        self.generic_api_server.kubernetes_service = kubernetes  # type: ignore[attr-defined]  # tests stop its renewals
        self._add_service_repair()
        self._add_identity_lease()
        self._add_cluster_authentication_trust()
        identity = f"{extra.hostname}_{current_ids().uid('identity', '', extra.hostname)}"  # seeded: --deterministic
        candidates = identity if extra.exclusive_storage else None
        if extra.worker:  # the live candidates are this generation's workers
            identity = f"{extra.hostname}_{extra.worker}"
            candidates = identity.rsplit("-", 1)[0] + "-"
        controllers = ControllerManager(extra.controllers, self.generic_api_server.restful.group_versions,
                                        self.generic_api_server, extra.root_ca, extra.leader_election,
                                        identity, candidates)
        controllers.loopback = extra.loopback
        controllers.csr_signing, controllers.hpa = extra.csr_signing, extra.hpa
        controllers.endpoint_slices = extra.endpoint_slices
        controllers.nodes = extra.nodes
        controllers.terminated_pod_gc_threshold = extra.terminated_pod_gc_threshold
        self.generic_api_server.controllers = controllers  # type: ignore[attr-defined]  # the aggregator adds to its discovery
        self.generic_api_server.add_post_start_hook("start-embedded-controllers", controllers.start)
        self.generic_api_server.add_pre_shutdown_hook("stop-embedded-controllers", controllers.stop)

    def _add_identity_lease(self) -> None:
        """The identity lease controller and the collector of expired identity leases (upstream's hooks)."""
        route = self.generic_api_server.restful.group_versions.get(("coordination.k8s.io", "v1"), {}).get("leases")
        if not self.extra.identity_lease or route is None:
            return
        identity = IdentityLeaseController(route.scope.storage, self.extra.hostname)
        collector = IdentityLeaseGarbageCollector(route.scope.storage)
        server = self.generic_api_server
        server.add_post_start_hook("start-kube-apiserver-identity-lease-controller", identity.start)
        server.add_pre_shutdown_hook("stop-kube-apiserver-identity-lease-controller", identity.stop)
        server.add_post_start_hook("start-kube-apiserver-identity-lease-garbage-collector", collector.start)
        server.add_pre_shutdown_hook("stop-kube-apiserver-identity-lease-garbage-collector", collector.stop)

    def _add_cluster_authentication_trust(self) -> None:
        configmaps = self.generic_api_server.restful.group_versions[("", "v1")]["configmaps"].scope.storage
        trust = ClusterAuthenticationTrustController(configmaps, self.extra.authentication_info)
        self.generic_api_server.add_post_start_hook("start-cluster-authentication-info-controller", trust.start)
        self.generic_api_server.add_pre_shutdown_hook("stop-cluster-authentication-info-controller", trust.stop)

    def _add_service_repair(self) -> None:
        """The cluster IP and node port repair controllers, on every replica (upstream's hook)."""
        services = self.generic_api_server.restful.group_versions[("", "v1")]["services"].scope.storage
        repair = ServiceRepairController(services, services.allocators)
        self.generic_api_server.service_repair = repair  # type: ignore[attr-defined]  # tests run it
        self.generic_api_server.add_post_start_hook("start-service-ip-repair-controllers", repair.start)
        self.generic_api_server.add_pre_shutdown_hook("stop-service-ip-repair-controllers", repair.stop)

    def _install_issuer_discovery(self) -> None:
        """The OpenID discovery documents of an https issuer (skipped, with the reason logged, otherwise)."""
        config = self.extra.service_accounts
        if config is None or not config.issuer:
            return
        why = openid.issuer_error(config.issuer)
        if why:
            log.error("Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. "
                      "Endpoints will not be enabled. Error: %s", why)
            return
        server = openid.OpenIDMetadataServer(config.issuer, config.public_keys, self.extra.external_address)
        mux = self.generic_api_server.handler.non_restful_mux
        mux.handle(openid.OPENID_CONFIG_PATH, server.serve_configuration)
        mux.handle(openid.JWKS_PATH, server.serve_keys)

    async def _storage_check(self) -> None:
        # --etcd-healthcheck-timeout's default: a store that does not answer fails the check, not hangs it
        async with asyncio.timeout(STORAGE_HEALTHCHECK_TIMEOUT):
            await self.extra.storage.store.current_revision()


STORAGE_HEALTHCHECK_TIMEOUT = 2.0


async def _log_check() -> None:
    return None


def new_instance(generic: CompletedConfig, extra: ExtraConfig, delegate: DelegationTarget) -> GenericAPIServer:
    return Instance(generic, extra, delegate).generic_api_server
