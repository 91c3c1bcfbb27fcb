"""Which embedded controllers run (--controllers, with kube-controller-manager's syntax: `*` for the
defaults, `name` to enable, `-name` to disable), started after the server is up and, with --leader-elect
(the default, as kube-controller-manager's), only while this server holds the kube-system/
kube-controller-manager Lease: of several replicas on one storage, one runs them."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from ..api.core.resourcequota.evaluators import new_evaluators
from ..apimachinery import errors
from ..client.informers import SharedInformerFactory
from ..client.record import EventBroadcaster, EventSource
from ..client.rest import Client
from ..kubelet.config import NodesConfiguration
from ..kubelet.simulator import NodeSimulator
from ..scheduler import Scheduler
from .bootstrap import BootstrapSignerController, TokenCleanerController
from .certificates.approver import CSRApprovingController
from .certificates.cleaner import CSRCleanerController
from .certificates.signer import CSRSigningConfiguration, CSRSigningController, load_authorities
from .clusterroleaggregation import ClusterRoleAggregationController
from .cronjob import COMPONENT as CRONJOB_COMPONENT
from .cronjob import CronJobController
from .daemonset import COMPONENT as DAEMONSET_COMPONENT
from .daemonset import DaemonSetsController
from .deployment import COMPONENT as DEPLOYMENT_COMPONENT
from .deployment import DeploymentController
from .discovery import ServerResources, chain_routes, local_resources
from .disruption import COMPONENT as DISRUPTION_COMPONENT
from .disruption import DisruptionController
from .endpoint import COMPONENT as ENDPOINT_COMPONENT
from .endpoint import EndpointController
from .endpointslice.config import EndpointSliceConfiguration
from .endpointslice.controller import COMPONENT as ENDPOINTSLICE_COMPONENT
from .endpointslice.controller import EndpointSliceController
from .endpointslice.mirroring import COMPONENT as MIRRORING_COMPONENT
from .endpointslice.mirroring import EndpointSliceMirroringController
from .garbagecollector import GarbageCollector
from .informer import Resource
from .job import COMPONENT as JOB_COMPONENT
from .job import JobController
from .leaderelection import LeaderElectionConfiguration, LeaderElector, StoreLeaseClient, new_identity
from .names import enabled
from .namespace import NamespaceController
from .nodelifecycle import (
    NODE_LIFECYCLE_COMPONENT,
    TAINT_EVICTION_COMPONENT,
    NodeLifecycleController,
    TaintEvictionController,
)
from .podautoscaler.config import HPAControllerConfiguration
from .podautoscaler.horizontal import HorizontalController
from .podgc import DEFAULT_TERMINATED_POD_GC_THRESHOLD, PodGCController
from .replicaset import REPLICA_SETS, REPLICATION_CONTROLLERS, ReplicaSetController
from .resourcequota import ResourceQuotaController
from .rootcacertpublisher import RootCACertPublisher
from .serviceaccount import ServiceAccountsController
from .statefulset import COMPONENT as STATEFULSET_COMPONENT
from .statefulset import StatefulSetController
from .ttlafterfinished import TTLAfterFinishedController
from .volumeprotection import PVCProtectionController, PVProtectionController

log = logging.getLogger("kube_apiserver.controllers")
RBAC_GROUP = "rbac.authorization.k8s.io"


def served_resources(group_versions: dict[tuple[str, str], dict[str, Any]]) -> list[Resource]:
    """Every main resource that can be listed, watched and deleted."""
    resources = []
    for (group, version), routes in group_versions.items():
        for path, route in routes.items():
            verbs = set(route.handlers)
            if "/" in path or not {"list", "watch", "delete", "update"} <= verbs:
                continue
            info = route.scope.info
            resources.append(Resource(group, version, info.resource, info.kind, info.namespaced, route.scope.storage))
    return resources


def _find(resources: list[Resource], resource: str) -> Any:
    """The core/v1 resource of that name, or None."""
    return next((r for r in resources if r.resource == resource and not r.group), None)


class ControllerManager:
    def __init__(self, names: list[str], group_versions: dict[tuple[str, str], dict[str, Any]],
                 server: Any, root_ca: str = "", leader_election: LeaderElectionConfiguration | None = None,
                 identity: str = "", candidates: str | None = None):
        """`root_ca`: the CA bundle root-ca-cert-publisher publishes (KCM's --root-ca-file). `server`: the
        server whose chain the controllers discover resources in (built-in and custom resources); the
        aggregator adds its aggregated servers' resources to `discovery`. `identity`: this replica's
        holder identity in the leader election Lease (hostname_uuid when empty). `candidates`: the
        storage admits only processes whose identities start with it (SQLite's lock: this one; --workers:
        the storage process's), so a lease held by another identity is stale."""
        self.names = names
        self.group_versions = group_versions
        self.root_ca = root_ca
        self.server = server
        self.discovery = ServerResources(local_resources(server, lambda: self.loopback))
        self.running: list[Any] = []
        self.loopback: Client | None = None  # the server's loopback client, which controllers write through
        self.leader_election = leader_election or LeaderElectionConfiguration(leader_elect=False)
        self.identity = identity or new_identity()
        self.elector: LeaderElector | None = None
        self.candidates = candidates
        self.informers: SharedInformerFactory | None = None
        self.events: EventBroadcaster | None = None
        self.nodes = NodesConfiguration()  # --simulated-nodes, --node-monitor-grace-period
        self.csr_signing = CSRSigningConfiguration()  # csrsigning's CA files (--cluster-signing-*)
        self.hpa = HPAControllerConfiguration()  # --horizontal-pod-autoscaler-*
        self.endpoint_slices = EndpointSliceConfiguration()  # --max-endpoints-per-slice, --mirroring-max-...
        self.terminated_pod_gc_threshold = DEFAULT_TERMINATED_POD_GC_THRESHOLD  # --terminated-pod-gc-threshold

    async def start(self) -> None:
        """Starts the controllers, or campaigns for the lease and starts them once it leads."""
        leases = self.group_versions.get(("coordination.k8s.io", "v1"), {}).get("leases")
        if not self.leader_election.leader_elect or leases is None:
            await self.start_controllers()
            return
        self.elector = LeaderElector(self.leader_election, StoreLeaseClient(leases.scope.storage), self.identity,
                                     self.start_controllers, self.stop_controllers,
                                     candidates=self.candidates)
        await self.elector.start()

    async def stop(self) -> None:
        if self.elector is not None:
            await self.elector.stop()  # stops the controllers first if it leads, then releases the lease
            self.elector = None
        await self.stop_controllers()

    async def start_controllers(self) -> None:
        for controller in self._new_controllers():
            await controller.start()
            self.running.append(controller)  # only what started is stopped
            log.info("Started %s controller", controller.name)
        if self.informers is not None:
            self.informers.start()

    async def stop_controllers(self) -> None:
        running, self.running = self.running, []
        for controller in running:
            await controller.stop()
        if self.informers is not None:
            await self.informers.stop()
            self.informers = None
        if self.events is not None:
            await self.events.stop()
            self.events = None

    def _shared(self) -> tuple[SharedInformerFactory, EventBroadcaster]:
        """The informers and the event broadcaster the workload controllers share (made on first use, for
        one term of leadership)."""
        assert self.loopback is not None
        if self.informers is None:
            self.informers = SharedInformerFactory(self.loopback)
        if self.events is None:
            self.events = EventBroadcaster(self.loopback)
            self.events.start()
        return self.informers, self.events

    def _new_controllers(self) -> list[Any]:
        new: list[Any] = []
        resources = self._with_client(served_resources(self.group_versions))
        core = self.group_versions.get(("", "v1"), {})
        if enabled(self.names, "garbagecollector"):
            new.append(GarbageCollector(lambda: self._with_client(served_resources(chain_routes(self.server)))))
        if enabled(self.names, "namespace") and "namespaces/finalize" in core:
            namespaces = _find(resources, "namespaces")
            new.append(NamespaceController(namespaces, self.discovery))
        if enabled(self.names, "serviceaccount"):
            accounts = _find(resources, "serviceaccounts")
            if accounts is not None:
                new.append(ServiceAccountsController(_find(resources, "namespaces"), accounts))
        quotas = _find(resources, "resourcequotas")
        if enabled(self.names, "resourcequota") and quotas is not None:
            new.append(ResourceQuotaController(quotas, resources, new_evaluators()))
        claims, pods, volumes = (_find(resources, r) for r in ("persistentvolumeclaims", "pods", "persistentvolumes"))
        if enabled(self.names, "pvc-protection") and claims is not None and pods is not None:
            new.append(PVCProtectionController(claims, pods))
        if enabled(self.names, "pv-protection") and volumes is not None:
            new.append(PVProtectionController(volumes))
        self._add_clusterrole_aggregation(resources, new)
        configmaps = _find(resources, "configmaps")
        if enabled(self.names, "root-ca-cert-publisher") and self.root_ca and configmaps is not None:
            new.append(RootCACertPublisher(_find(resources, "namespaces"), configmaps, self.root_ca))
        self._add_workload_controllers(new)
        self._add_batch_controllers(new)
        self._add_certificate_controllers(new)
        self._add_autoscaling_controllers(new)
        self._add_service_and_disruption_controllers(new)
        self._add_node_controllers(new)
        self._add_scheduler(new)
        return new

    def _add_scheduler(self, new: list[Any]) -> None:
        """The embedded kube-scheduler, leader-elected with the controllers."""
        if enabled(self.names, "scheduler"):
            assert self.loopback is not None
            informers, _ = self._shared()
            new.append(Scheduler(self.loopback, informers))

    def _add_workload_controllers(self, new: list[Any]) -> None:
        assert self.loopback is not None
        for name, kind in (("replicaset", REPLICA_SETS), ("replicationcontroller", REPLICATION_CONTROLLERS)):
            if enabled(self.names, name) and (kind.group, kind.version) in self.group_versions:
                informers, events = self._shared()
                recorder = events.new_recorder(EventSource(kind.component))
                new.append(ReplicaSetController(kind, self.loopback, informers, recorder))
        if enabled(self.names, "deployment") and ("apps", "v1") in self.group_versions:
            informers, events = self._shared()
            new.append(DeploymentController(self.loopback, informers,
                                            events.new_recorder(EventSource(DEPLOYMENT_COMPONENT))))
        if enabled(self.names, "statefulset") and ("apps", "v1") in self.group_versions:
            informers, events = self._shared()
            new.append(StatefulSetController(self.loopback, informers,
                                             events.new_recorder(EventSource(STATEFULSET_COMPONENT))))
        if enabled(self.names, "daemonset") and ("apps", "v1") in self.group_versions:
            informers, events = self._shared()
            new.append(DaemonSetsController(self.loopback, informers,
                                            events.new_recorder(EventSource(DAEMONSET_COMPONENT))))

    def _add_batch_controllers(self, new: list[Any]) -> None:
        """job, cronjob, ttl-after-finished, and podgc (which collects the pods they leave)."""
        assert self.loopback is not None
        batch = ("batch", "v1") in self.group_versions
        if enabled(self.names, "job") and batch:
            informers, events = self._shared()
            new.append(JobController(self.loopback, informers, events.new_recorder(EventSource(JOB_COMPONENT))))
        if enabled(self.names, "cronjob") and batch:
            informers, events = self._shared()
            new.append(CronJobController(self.loopback, informers,
                                         events.new_recorder(EventSource(CRONJOB_COMPONENT))))
        if enabled(self.names, "ttl-after-finished") and batch:
            informers, _ = self._shared()
            new.append(TTLAfterFinishedController(self.loopback, informers))
        if enabled(self.names, "podgc"):
            informers, _ = self._shared()
            new.append(PodGCController(self.loopback, informers, self.terminated_pod_gc_threshold))

    def _add_service_and_disruption_controllers(self, new: list[Any]) -> None:
        assert self.loopback is not None
        if enabled(self.names, "endpoint"):
            informers, events = self._shared()
            new.append(EndpointController(self.loopback, informers, events.new_recorder(EventSource(ENDPOINT_COMPONENT))))
        if enabled(self.names, "endpointslice") and ("discovery.k8s.io", "v1") in self.group_versions:
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource(ENDPOINTSLICE_COMPONENT))
            new.append(EndpointSliceController(self.loopback, informers, recorder,
                                               self.endpoint_slices.max_endpoints_per_slice))
        if enabled(self.names, "endpointslicemirroring") and ("discovery.k8s.io", "v1") in self.group_versions:
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource(MIRRORING_COMPONENT))
            new.append(EndpointSliceMirroringController(self.loopback, informers, recorder,
                                                        self.endpoint_slices.mirroring_max_endpoints_per_subset))
        if enabled(self.names, "disruption") and ("policy", "v1") in self.group_versions:
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource(DISRUPTION_COMPONENT))
            new.append(DisruptionController(self.loopback, informers, recorder, self._get_scale))

    async def _get_scale(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The /scale of a controller of any kind serving it, built-in or custom (the disruption
        controller's getScaleController); None when the kind has no scale or the object is gone."""
        group, _, version = api_version.rpartition("/")
        routes = chain_routes(self.server).get((group, version), {})  # custom resources' too
        for path, route in routes.items():
            if "/" in path or route.scope.info.kind != kind or f"{path}/scale" not in routes:
                continue
            assert self.loopback is not None
            try:
                return await self.loopback.resource(group, version, path).namespace(namespace).get(name, "scale")
            except errors.StatusError as err:
                if err.code == 404:
                    return None
                raise
        return None

    def _add_certificate_controllers(self, new: list[Any]) -> None:
        assert self.loopback is not None
        if ("certificates.k8s.io", "v1") not in self.group_versions:
            return
        if enabled(self.names, "csrsigning"):
            authorities = load_authorities(self.csr_signing)
            if authorities:
                informers, _ = self._shared()
                new.append(CSRSigningController(self.loopback, informers, authorities,
                                                self.csr_signing.cluster_signing_duration))
            else:
                log.info("Skipping CSR signer controller because no csr cert/key was specified")
        if enabled(self.names, "csrapproving"):
            informers, _ = self._shared()
            new.append(CSRApprovingController(self.loopback, informers))
        if enabled(self.names, "csrcleaner"):
            informers, _ = self._shared()
            csrs = informers.for_resource("certificates.k8s.io", "v1", "certificatesigningrequests")
            new.append(CSRCleanerController(self.loopback, csrs))
        if enabled(self.names, "bootstrapsigner"):
            new.append(BootstrapSignerController(self.loopback, self._shared()[0]))
        if enabled(self.names, "tokencleaner"):
            new.append(TokenCleanerController(self.loopback, self._shared()[0]))

    def _add_autoscaling_controllers(self, new: list[Any]) -> None:
        assert self.loopback is not None
        if enabled(self.names, "horizontalpodautoscaling") and ("autoscaling", "v2") in self.group_versions:
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource("horizontal-pod-autoscaler"))
            new.append(HorizontalController(self.loopback, informers, recorder, self.hpa))

    def _add_node_controllers(self, new: list[Any]) -> None:
        """nodelifecycle, taint-eviction-controller, and the simulated kubelets (node-simulator)."""
        assert self.loopback is not None
        if enabled(self.names, "nodelifecycle"):
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource(NODE_LIFECYCLE_COMPONENT))
            new.append(NodeLifecycleController(self.loopback, informers, recorder,
                                               self.nodes.node_monitor_grace_period))
        if enabled(self.names, "taint-eviction-controller"):
            informers, events = self._shared()
            recorder = events.new_recorder(EventSource(TAINT_EVICTION_COMPONENT))
            new.append(TaintEvictionController(self.loopback, informers, recorder))
        if enabled(self.names, "node-simulator"):
            informers, events = self._shared()
            new.append(NodeSimulator(self.loopback, informers, self.nodes, events))

    def _with_client(self, resources: list[Resource]) -> list[Resource]:
        """The resources with the loopback client their controllers write through."""
        return [replace(r, client=self.loopback) for r in resources]

    def _add_clusterrole_aggregation(self, resources: list[Resource], new: list[Any]) -> None:
        roles = next((r for r in resources if r.group == RBAC_GROUP and r.resource == "clusterroles"), None)
        if enabled(self.names, "clusterrole-aggregation") and roles is not None:
            new.append(ClusterRoleAggregationController(roles))
