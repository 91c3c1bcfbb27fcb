"""ServerRunOptions.complete() (cmd/kube-apiserver/app/options/completion.go) and the completed options.

Completion never raises for bad input: problems found while completing (an unparsable service CIDR, a
cert directory that can't be written) are kept and reported by validate() together with all others.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field

from kube_apiserver.apimachinery.goos import os_error_message
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.cmd import validation
from kube_apiserver.cmd.cores import usable_cores
from kube_apiserver.cmd.datadir import credentials_lock
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.service_ip import IPNetwork, ServiceIPRanges, service_ip_ranges
from kube_apiserver.cmd.testing_clock import DeterministicOptions
from kube_apiserver.controllers.certificates.config import CSRSigningConfiguration
from kube_apiserver.controllers.endpointslice.config import EndpointSliceConfiguration
from kube_apiserver.controllers.leaderelection import LeaderElectionConfiguration
from kube_apiserver.controllers.names import unknown_controllers
from kube_apiserver.controllers.podautoscaler.config import HPAControllerConfiguration
from kube_apiserver.kubelet.config import NodesConfiguration
from kube_apiserver.server import certs
from kube_apiserver.server.options.admission import AdmissionOptions
from kube_apiserver.server.options.api_enablement import APIEnablementOptions
from kube_apiserver.server.options.audit import AuditOptions
from kube_apiserver.server.options.authentication import BuiltInAuthenticationOptions
from kube_apiserver.server.options.authorization import BuiltInAuthorizationOptions
from kube_apiserver.server.options.etcd import STORAGE_TYPE_ETCD3, EtcdOptions
from kube_apiserver.server.options.features import FeatureOptions
from kube_apiserver.server.options.generic import GenericServerRunOptions
from kube_apiserver.server.options.logs import LogsOptions
from kube_apiserver.server.options.serving import SecureServingOptions, is_unspecified

# DNS names kube-apiserver puts in its self-signed certificate (certs.py adds the rest of the base set).
SELF_SIGNED_DNS = ["kubernetes.default.svc", "kubernetes.default", "kubernetes"]


@dataclass
class CompletedOptions:
    generic: GenericServerRunOptions
    etcd: EtcdOptions
    secure_serving: SecureServingOptions
    features: FeatureOptions
    authentication: BuiltInAuthenticationOptions
    authorization: BuiltInAuthorizationOptions
    api_enablement: APIEnablementOptions
    admission: AdmissionOptions
    logs: LogsOptions
    allow_privileged: bool
    event_ttl: float
    enable_aggregator_routing: bool
    controllers: list[str]
    service_node_port_range: PortRange
    service_ip_ranges: ServiceIPRanges
    completion_errors: list[str] = field(default_factory=list)
    audit: AuditOptions = field(default_factory=AuditOptions)
    leader_election: LeaderElectionConfiguration = field(default_factory=LeaderElectionConfiguration)
    endpoint_reconciler_type: str = "lease"
    apiserver_count: int = 1
    workers: int = 1
    csr_signing: CSRSigningConfiguration = field(default_factory=CSRSigningConfiguration)
    hpa: HPAControllerConfiguration = field(default_factory=HPAControllerConfiguration)
    endpoint_slices: EndpointSliceConfiguration = field(default_factory=EndpointSliceConfiguration)
    nodes: NodesConfiguration = field(default_factory=NodesConfiguration)
    terminated_pod_gc_threshold: int = 12500
    enable_testing_endpoints: bool = False
    deterministic: DeterministicOptions = field(default_factory=DeterministicOptions)

    # Shortcuts to the values the server needs most.
    @property
    def data_dir(self) -> str:
        return self.etcd.data_dir

    @property
    def bind_address(self) -> str:
        return self.secure_serving.bind_address or "0.0.0.0"

    @property
    def secure_port(self) -> int:
        return self.secure_serving.bind_port

    @property
    def cert_file(self) -> str:
        return self.secure_serving.tls_cert_file

    @property
    def key_file(self) -> str:
        return self.secure_serving.tls_private_key_file

    @property
    def ca_file(self) -> str:
        return self.secure_serving.ca_file

    @property
    def advertise_address(self) -> str:
        return self.generic.advertise_address or "127.0.0.1"

    @property
    def service_cluster_ip_ranges(self) -> list[IPNetwork]:
        return self.service_ip_ranges.cidrs

    @property
    def primary_service_cluster_ip_range(self) -> IPNetwork | None:
        return self.service_ip_ranges.primary

    @property
    def secondary_service_cluster_ip_range(self) -> IPNetwork | None:
        return self.service_ip_ranges.secondary

    @property
    def api_server_service_ip(self) -> str | None:
        return self.service_ip_ranges.api_server_service_ip

    @property
    def verbosity(self) -> int:
        return self.logs.verbosity

    def validate(self) -> list[str]:
        """Every problem with the options (kube-apiserver's Validate() order), [] when they are usable."""
        errors = list(self.completion_errors)
        errors += self.generic.validate()
        errors += self.etcd.validate()
        errors += validation.validate_api_priority_and_fairness(
            self.features.enable_priority_and_fairness, self.api_enablement.runtime_config
        )
        errors += self.secure_serving.validate()
        errors += self.audit.validate()
        errors += self.authentication.validate()
        errors += self.authorization.validate()
        errors += self.admission.validate()
        errors += self.api_enablement.validate()
        errors += self.deterministic.validate()
        errors += [
            f"--controllers: unknown controller {name!r}" for name in unknown_controllers(self.controllers)
        ]
        errors += self.leader_election.validate()
        errors += self.csr_signing.validate() + self.hpa.validate() + self.endpoint_slices.validate()
        errors += self.nodes.validate()
        errors += self._validate_workers()
        errors += validation.validate_endpoint_reconciler(self.endpoint_reconciler_type, self.apiserver_count)
        errors += validation.validate_cluster_ip_flags(self.service_ip_ranges)
        errors += validation.validate_public_ip_service_cluster_ip_range_ip_families(
            self.service_ip_ranges, self.generic.advertise_address
        )
        return errors


    def _validate_workers(self) -> list[str]:
        if self.workers < 1:
            return [f"--workers must not be negative, got {self.workers}"]
        if self.workers == 1:
            return []
        # Each worker has its own clock, fault switches and request history: a test could not drive them.
        return [f"--workers={self.workers} and {flag} cannot be used together" for flag, used in (
            ("--deterministic", self.deterministic.enabled),
            ("--enable-testing-endpoints", self.enable_testing_endpoints)) if used]


AUTO_WORKERS_MAX = 4  # each worker holds a watch cache of every object: more cores than this, ask for them


def _workers(s: ServerRunOptions) -> int:
    """--workers, 0 chosen: on the embedded store, a process per core, as kube-apiserver's runtime runs a
    thread per core. One process where a test drives the server's clock, faults and history (one process's),
    where there is one core, and on etcd: there each worker would be a replica with etcd watches of its own,
    and replicas are laid out by whoever runs them (docs/replicas.md)."""
    if s.workers:
        return s.workers  # (a negative count stays, for validate() to report)
    if s.deterministic.enabled or s.enable_testing_endpoints or s.etcd.storage_backend == STORAGE_TYPE_ETCD3:
        return 1
    return min(usable_cores(), AUTO_WORKERS_MAX)


def _self_signed_alternates(c: CompletedOptions) -> tuple[list[str], list[str]]:
    dns, ips = list(SELF_SIGNED_DNS), [c.advertise_address]
    if c.api_server_service_ip:
        ips.append(c.api_server_service_ip)
    if not is_unspecified(c.secure_serving.bind_address):
        ips.append(str(c.secure_serving.bind_address))
    host = c.generic.external_host
    if host:
        try:
            ips.append(str(ipaddress.ip_address(host)))
        except ValueError:
            dns.append(host)
    return dns, ips


def _maybe_generate_certs(c: CompletedOptions) -> None:
    if c.completion_errors:
        return  # the SANs would be wrong; validate() reports the cause
    dns, ips = _self_signed_alternates(c)
    try:
        c.secure_serving.maybe_default_with_self_signed_certs(dns, ips)
    except OSError as err:
        c.completion_errors.append(f"unable to generate self signed cert: {os_error_message(err)}")


def _maybe_generate_service_account_key(c: CompletedOptions) -> None:
    try:
        c.authentication.complete(c.data_dir)
    except OSError as err:
        c.completion_errors.append(f"unable to generate service account signing key: {os_error_message(err)}")


def complete(s: ServerRunOptions) -> CompletedOptions:
    """Fills defaults in place (like Go's Complete) and returns the completed view."""
    s.etcd.complete()
    s.secure_serving.complete(s.etcd.data_dir)
    ranges = service_ip_ranges(s.service_cluster_ip_ranges)
    ipv6 = ranges.primary is not None and ranges.primary.version == 6
    s.generic.default_advertise_address(s.secure_serving, ipv6=ipv6)
    s.generic.default_external_host()
    s.authorization.complete()
    s.authentication.apply_authorization(s.authorization.types())
    s.features.complete()
    completed = CompletedOptions(
        generic=s.generic,
        etcd=s.etcd,
        secure_serving=s.secure_serving,
        features=s.features,
        authentication=s.authentication,
        authorization=s.authorization,
        api_enablement=s.api_enablement,
        admission=s.admission,
        logs=s.logs,
        allow_privileged=s.allow_privileged,
        event_ttl=s.event_ttl,
        enable_aggregator_routing=s.enable_aggregator_routing,
        controllers=list(s.controllers),
        service_node_port_range=s.service_node_port_range,
        service_ip_ranges=ranges,
        completion_errors=list(ranges.errors),
        audit=s.audit,
        leader_election=s.leader_election,
        endpoint_reconciler_type=s.endpoint_reconciler_type,
        apiserver_count=s.apiserver_count,
        workers=_workers(s),
        csr_signing=s.csr_signing,
        hpa=s.hpa,
        endpoint_slices=s.endpoint_slices,
        nodes=s.nodes,
        terminated_pod_gc_threshold=s.terminated_pod_gc_threshold,
        enable_testing_endpoints=s.enable_testing_endpoints,
        deterministic=s.deterministic,
    )
    with credentials_lock(completed.data_dir):
        _maybe_generate_certs(completed)
        _maybe_generate_service_account_key(completed)
    _default_signing_ca(completed)
    return completed


def _default_signing_ca(c: CompletedOptions) -> None:
    """csrsigning signs with the CA the server generated for its serving certificate, when no
    --cluster-signing-* file was given (given --client-ca-file of that CA, its client certificates
    authenticate here)."""
    ca_cert = os.path.join(c.secure_serving.cert_dir, certs.CA_CERT)
    ca_key = os.path.join(c.secure_serving.cert_dir, certs.CA_KEY)
    if c.secure_serving.ca_file == ca_cert and os.path.exists(ca_key):
        c.csr_signing.default_to(ca_cert, ca_key)
