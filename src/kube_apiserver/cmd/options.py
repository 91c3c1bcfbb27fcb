"""kube-apiserver's command line (cmd/kube-apiserver/app/options): the flag sections, parsing with pflag
semantics, --help/--version, and the "Misc" flags of kube-apiserver itself.

Usage (what cmd/app.py does):

    opts = ServerRunOptions.parse(sys.argv[1:])   # exits 0 for --help/--version, 1 on flag errors
    completed = opts.complete()                  # fills defaults, generates self-signed certs
    errors = completed.validate()                # every problem, aggregated
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn

from kube_apiserver import logs
from kube_apiserver.apimachinery.gostrconv import quote as go_quote
from kube_apiserver.cli.flagset import FlagSet, NamedFlagSets
from kube_apiserver.cli.parse import FlagError, parse_args
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.cli.usage import print_sections
from kube_apiserver.cli.values import PortRangeValue, VersionValue
from kube_apiserver.cmd.testing_clock import DeterministicOptions
from kube_apiserver.controllers.certificates.config import CSRSigningConfiguration
from kube_apiserver.controllers.endpointslice import config as endpointslice_config
from kube_apiserver.controllers.leaderelection import LeaderElectionConfiguration
from kube_apiserver.controllers.podautoscaler.config import HPAControllerConfiguration
from kube_apiserver.kubelet.config import NodesConfiguration
from kube_apiserver.server.options.admission import AdmissionOptions
from kube_apiserver.server.options.api_enablement import APIEnablementOptions
from kube_apiserver.server.options.audit import AuditOptions
from kube_apiserver.server.options.authentication import BuiltInAuthenticationOptions
from kube_apiserver.server.options.authorization import BuiltInAuthorizationOptions
from kube_apiserver.server.options.etcd import EtcdOptions
from kube_apiserver.server.options.features import FeatureOptions
from kube_apiserver.server.options.generic import GenericServerRunOptions
from kube_apiserver.server.options.logs import LogsOptions
from kube_apiserver.server.options.serving import SecureServingOptions
from kube_apiserver.version import raw_version_string, version_string

if TYPE_CHECKING:
    from kube_apiserver.cmd.completion import CompletedOptions

COMMAND_NAME = "kube-apiserver"
DESCRIPTION = """The Kubernetes API server validates and configures data
for the api objects which include pods, services, replicationcontrollers, and
others. The API Server services REST operations and provides the frontend to the
cluster's shared state through which all other components interact."""
DEFAULT_SERVICE_NODE_PORT_RANGE = PortRange(30000, 2768)


@dataclass
class ServerRunOptions:
    generic: GenericServerRunOptions = field(default_factory=GenericServerRunOptions)
    etcd: EtcdOptions = field(default_factory=EtcdOptions)
    secure_serving: SecureServingOptions = field(default_factory=SecureServingOptions)
    audit: AuditOptions = field(default_factory=AuditOptions)
    features: FeatureOptions = field(default_factory=FeatureOptions)
    authentication: BuiltInAuthenticationOptions = field(default_factory=BuiltInAuthenticationOptions)
    authorization: BuiltInAuthorizationOptions = field(default_factory=BuiltInAuthorizationOptions)
    api_enablement: APIEnablementOptions = field(default_factory=APIEnablementOptions)
    admission: AdmissionOptions = field(default_factory=AdmissionOptions)
    logs: LogsOptions = field(default_factory=LogsOptions)
    # "Misc" section: kube-apiserver's own flags.
    allow_privileged: bool = False
    event_ttl: float = 3600.0
    enable_aggregator_routing: bool = False
    # Not a kube-apiserver flag: /debug/testing/* for test suites (snapshots, faults, request history).
    enable_testing_endpoints: bool = False
    # Not kube-apiserver flags: --deterministic* for test suites (cmd/testing_clock.py).
    deterministic: DeterministicOptions = field(default_factory=DeterministicOptions)
    # Not a kube-apiserver flag: the kube-controller-manager controllers this server embeds.
    controllers: list[str] = field(default_factory=lambda: ["*"])
    # Not kube-apiserver flags either: kube-controller-manager's --leader-elect* for those controllers.
    leader_election: LeaderElectionConfiguration = field(default_factory=LeaderElectionConfiguration)
    # kube-controller-manager's --cluster-signing-* (csrsigning) and --horizontal-pod-autoscaler-* flags.
    csr_signing: CSRSigningConfiguration = field(default_factory=CSRSigningConfiguration)
    hpa: HPAControllerConfiguration = field(default_factory=HPAControllerConfiguration)
    # kube-controller-manager's --max-endpoints-per-slice and --mirroring-max-endpoints-per-subset.
    endpoint_slices: endpointslice_config.EndpointSliceConfiguration = field(
        default_factory=endpointslice_config.EndpointSliceConfiguration
    )
    # The simulated nodes (node-simulator) and kube-controller-manager's --node-monitor-grace-period.
    nodes: NodesConfiguration = field(default_factory=NodesConfiguration)
    # kube-controller-manager's --terminated-pod-gc-threshold (the podgc controller).
    terminated_pod_gc_threshold: int = 12500
    # Not a kube-apiserver flag: serving processes on one port (cmd/workers.py); 1 serves from this process,
    # 0 chooses (completion.py).
    workers: int = 0
    endpoint_reconciler_type: str = "lease"
    apiserver_count: int = 1
    service_cluster_ip_ranges: str = ""
    service_node_port_range: PortRange = DEFAULT_SERVICE_NODE_PORT_RANGE
    # "Global" section.
    show_help: bool = False
    version: str = "false"
    flag_sets: NamedFlagSets | None = field(default=None, repr=False, compare=False)

    def flags(self) -> NamedFlagSets:
        """The flag sections, in kube-apiserver's order, bound to this object's fields."""
        fss = NamedFlagSets()
        self.generic.add_flags(fss.flag_set("generic"))
        self.features.add_feature_gates_flag(fss.flag_set("generic"))
        self.etcd.add_flags(fss.flag_set("etcd"))
        self.secure_serving.add_flags(fss.flag_set("secure serving"))
        self.audit.add_flags(fss.flag_set("auditing"))
        self.features.add_flags(fss.flag_set("features"))
        self.authentication.add_flags(fss.flag_set("authentication"))
        self.authorization.add_flags(fss.flag_set("authorization"))
        self.api_enablement.add_flags(fss.flag_set("API enablement"))
        self.admission.add_flags(fss.flag_set("admission"))
        self.logs.add_flags(fss.flag_set("logs"))
        self._add_misc_flags(fss)
        self._add_global_flags(fss)
        return fss

    def _add_misc_flags(self, fss: NamedFlagSets) -> None:
        fs = fss.flag_set("misc")
        fs.bool_var(
            self,
            "allow_privileged",
            "allow-privileged",
            "If true, allow privileged containers. [default=false]",
        )
        fs.duration_var(self, "event_ttl", "event-ttl", "Amount of time to retain events.")
        fs.string_slice_var(
            self,
            "controllers",
            "controllers",
            "Embedded kube-controller-manager controllers to run (not a kube-apiserver flag). '*' enables all "
            "on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller "
            "named 'foo'. All controllers: bootstrapsigner, clusterrole-aggregation, cronjob, csrapproving, csrcleaner, "
            "csrsigning, "
            "daemonset, deployment, disruption, endpoint, endpointslice, endpointslicemirroring, garbagecollector, "
            "horizontalpodautoscaling, job, namespace, node-simulator, nodelifecycle, podgc, pv-protection, "
            "pvc-protection, replicaset, replicationcontroller, resourcequota, root-ca-cert-publisher, scheduler, "
            "serviceaccount, statefulset, taint-eviction-controller, tokencleaner, ttl-after-finished (v1.34's "
            "canonical names, such as deployment-controller, are accepted too). Disabled-by-default controllers: "
            "bootstrapsigner, tokencleaner. "
            "'--controllers=' runs none, as a bare kube-apiserver.",
        )
        self._add_leader_election_flags(fs)
        self._add_csr_signing_flags(fs)
        self._add_hpa_flags(fs)
        self._add_endpoint_slice_flags(fs)
        self._add_node_flags(fs)
        fs.int_var(self, "terminated_pod_gc_threshold", "terminated-pod-gc-threshold", _TERMINATED_POD_GC_HELP)
        fs.int_var(self, "apiserver_count", "apiserver-count", _APISERVER_COUNT_HELP)
        fs.int_var(self, "workers", "workers", _WORKERS_HELP)
        fs.string_var(self, "endpoint_reconciler_type", "endpoint-reconciler-type", _ENDPOINT_RECONCILER_HELP)
        fs.bool_var(
            self,
            "enable_aggregator_routing",
            "enable-aggregator-routing",
            "Turns on aggregator routing requests to endpoints IP rather than cluster IP.",
        )
        fs.bool_var(
            self,
            "enable_testing_endpoints",
            "enable-testing-endpoints",
            "Serve /debug/testing/* for test suites: store snapshots, fault injection and request history. "
            "Authorized as any non-resource URL (system:masters may use them). Never enable it in production.",
        )
        self.deterministic.add_flags(fs)
        fs.string_var(
            self, "service_cluster_ip_ranges", "service-cluster-ip-range", _SERVICE_CLUSTER_IP_RANGE_HELP
        )
        fs.var(
            PortRangeValue(self, "service_node_port_range"), "service-node-port-range", _NODE_PORT_RANGE_HELP
        )

    def _add_csr_signing_flags(self, fs: FlagSet) -> None:
        """kube-controller-manager's CSRSigningControllerOptions.AddFlags."""
        csr = self.csr_signing
        fs.string_var(csr, "cluster_signing_cert_file", "cluster-signing-cert-file", _SIGNING_CERT_HELP)
        fs.string_var(csr, "cluster_signing_key_file", "cluster-signing-key-file", _SIGNING_KEY_HELP)
        for attr, flag, signer in _SIGNERS:
            fs.string_var(
                csr,
                f"{attr}_cert_file",
                f"cluster-signing-{flag}-cert-file",
                f"Filename containing a PEM-encoded X509 CA certificate used to issue certificates for "
                f"the {signer} signer.  If specified, --cluster-signing-{{cert,key}}-file must not be set.",
            )
            fs.string_var(
                csr,
                f"{attr}_key_file",
                f"cluster-signing-{flag}-key-file",
                f"Filename containing a PEM-encoded RSA or ECDSA private key used to sign certificates "
                f"for the {signer} signer.  If specified, --cluster-signing-{{cert,key}}-file must not "
                "be set.",
            )
        fs.duration_var(csr, "cluster_signing_duration", "cluster-signing-duration", _SIGNING_DURATION_HELP)

    def _add_hpa_flags(self, fs: FlagSet) -> None:
        """kube-controller-manager's HPAControllerOptions.AddFlags."""
        fs.duration_var(
            self.hpa,
            "sync_period",
            "horizontal-pod-autoscaler-sync-period",
            "The period for syncing the number of pods in horizontal pod autoscaler.",
        )
        fs.float_var(
            self.hpa,
            "tolerance",
            "horizontal-pod-autoscaler-tolerance",
            "The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal "
            "pod autoscaler to consider scaling.",
        )
        fs.duration_var(
            self.hpa,
            "downscale_stabilization",
            "horizontal-pod-autoscaler-downscale-stabilization",
            "The period for which autoscaler will look backwards and not scale down below any "
            "recommendation it made during that period.",
        )
        fs.duration_var(
            self.hpa,
            "cpu_initialization_period",
            "horizontal-pod-autoscaler-cpu-initialization-period",
            "The period after pod start when CPU samples might be skipped.",
        )
        fs.duration_var(
            self.hpa,
            "initial_readiness_delay",
            "horizontal-pod-autoscaler-initial-readiness-delay",
            "The period after pod start during which readiness changes will be treated as initial readiness.",
        )

    def _add_endpoint_slice_flags(self, fs: FlagSet) -> None:
        """kube-controller-manager's EndpointSliceControllerOptions and EndpointSliceMirroringControllerOptions."""
        slices = self.endpoint_slices
        fs.int_var(slices, "max_endpoints_per_slice", "max-endpoints-per-slice",
                   endpointslice_config.MAX_ENDPOINTS_PER_SLICE_HELP)
        fs.int_var(slices, "mirroring_max_endpoints_per_subset", "mirroring-max-endpoints-per-subset",
                   endpointslice_config.MIRRORING_MAX_ENDPOINTS_PER_SUBSET_HELP)

    def _add_node_flags(self, fs: FlagSet) -> None:
        nodes = self.nodes
        fs.int_var(nodes, "simulated_nodes", "simulated-nodes", _SIMULATED_NODES_HELP)
        fs.duration_var(nodes, "pod_run_seconds", "simulated-pod-run-duration", _SIMULATED_RUN_HELP)
        fs.duration_var(nodes, "node_monitor_grace_period", "node-monitor-grace-period", _GRACE_PERIOD_HELP)

    def _add_leader_election_flags(self, fs: FlagSet) -> None:
        """kube-controller-manager's (component-base BindLeaderElectionFlags), for the embedded controllers."""
        le = self.leader_election
        fs.bool_var(le, "leader_elect", "leader-elect", _LEADER_ELECT_HELP)
        fs.duration_var(le, "lease_duration", "leader-elect-lease-duration", _LEASE_DURATION_HELP)
        fs.duration_var(le, "renew_deadline", "leader-elect-renew-deadline", _RENEW_DEADLINE_HELP)
        fs.duration_var(le, "retry_period", "leader-elect-retry-period", _RETRY_PERIOD_HELP)
        fs.string_var(
            le,
            "resource_name",
            "leader-elect-resource-name",
            "The name of resource object that is used for locking during leader election.",
        )
        fs.string_var(
            le,
            "resource_namespace",
            "leader-elect-resource-namespace",
            "The namespace of resource object that is used for locking during leader election.",
        )

    def _add_global_flags(self, fss: NamedFlagSets) -> None:
        fs = fss.flag_set("global")
        fs.bool_var(self, "show_help", "help", f"help for {COMMAND_NAME}", shorthand="h")
        fs.var(
            VersionValue(self, "version"),
            "version",
            "--version, --version=raw prints version information and quits; "
            "--version=vX.Y.Z... sets the reported version",
        )

    @classmethod
    def parse(cls, argv: list[str]) -> ServerRunOptions:
        """Parses the command line like kube-apiserver (cobra + pflag).

        Prints help or the version and raises SystemExit(0) for --help/--version; prints the usage and
        `Error: <msg>` to stderr and raises SystemExit(1) for a bad command line."""
        opts = cls()
        fss = opts.flags()
        opts.flag_sets = fss
        try:
            positional = parse_args(fss, argv)
        except FlagError as err:
            sys.stderr.write(usage_text(fss, terminal_columns()) + "\n")
            _exit_with_error(str(err))
        if opts.show_help:
            sys.stdout.write(help_text(fss, terminal_columns()))
            raise SystemExit(0)
        if any(positional):
            args = "[" + " ".join(go_quote(arg) for arg in positional) + "]"
            _exit_with_error(f"{go_quote(COMMAND_NAME)} does not take any arguments, got {args}")
        opts._print_version_if_requested()
        return opts

    def _print_version_if_requested(self) -> None:
        if self.version == "false":
            return
        sys.stdout.write((raw_version_string() if self.version == "raw" else version_string()) + "\n")
        raise SystemExit(0)

    def print_flags(self) -> None:
        """cliflag.PrintFlags: logs every flag's value at -v=1 (`FLAG: --name="value"`)."""
        fss = self.flag_sets or self.flags()
        for flag in sorted(fss.all_flags(), key=lambda f: f.name):
            logs.info_v(1, "FLAG: --%s=%s", flag.name, go_quote(flag.value.string()))

    def complete(self) -> CompletedOptions:
        """Fills defaults (data dir, cert dir, service IP, advertise address, self-signed certificates)."""
        from kube_apiserver.cmd.completion import complete

        return complete(self)


def terminal_columns() -> int:
    """Width used to wrap --help: the terminal's, or 0 (no wrapping) when stdout is not a terminal."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else 0


def usage_text(fss: NamedFlagSets, cols: int) -> str:
    return f"Usage:\n  {COMMAND_NAME} [flags]\n" + print_sections(fss, cols)


def help_text(fss: NamedFlagSets, cols: int) -> str:
    return f"{DESCRIPTION}\n\n" + usage_text(fss, cols)


def _exit_with_error(message: str) -> NoReturn:
    sys.stderr.write(f"Error: {message}\n")
    raise SystemExit(1)


_SERVICE_CLUSTER_IP_RANGE_HELP = (
    "A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP "
    "ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed. Defaults to 10.0.0.0/24."
)
_NODE_PORT_RANGE_HELP = (
    "A port range to reserve for services with NodePort visibility.  This must not overlap with the "
    "ephemeral port range on nodes.  Example: '30000-32767'. Inclusive at both ends of the range."
)
_WORKERS_HELP = (
    "Processes serving the API on the one port (not a kube-apiserver flag). Above 1, this process keeps the "
    "embedded storage (SQLite or memory) and serves it to that many worker processes, each a whole server "
    "as a replica is; it accepts the port's connections and hands each to the worker holding the fewest: "
    "requests use every core. On etcd, each worker is a replica of its own. 1 serves from this process. "
    "0, the default, is one worker per core this process may use, at most 4, on SQLite or memory storage; "
    "and 1 on one core, on etcd, or with --deterministic or --enable-testing-endpoints."
)
_APISERVER_COUNT_HELP = (
    "The number of apiservers running in the cluster, must be a positive number. (In use when "
    "--endpoint-reconciler-type=master-count is enabled.)"
)
_ENDPOINT_RECONCILER_HELP = (
    "Use an endpoint reconciler (master-count, lease, none) master-count is deprecated, and will be removed "
    "in a future version."
)
_SIGNING_CERT_HELP = (
    "Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If "
    "specified, no more specific --cluster-signing-* flag may be specified. (Default here: the CA this server "
    "generates for its serving certificate, when it generates one.)"
)
_SIGNING_KEY_HELP = (
    "Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If "
    "specified, no more specific --cluster-signing-* flag may be specified."
)
_SIGNING_DURATION_HELP = (
    "The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs "
    "by setting spec.expirationSeconds."
)
_SIGNERS = (
    ("kubelet_serving", "kubelet-serving", "kubernetes.io/kubelet-serving"),
    ("kubelet_client", "kubelet-client", "kubernetes.io/kube-apiserver-client-kubelet"),
    ("kube_apiserver_client", "kube-apiserver-client", "kubernetes.io/kube-apiserver-client"),
    ("legacy_unknown", "legacy-unknown", "kubernetes.io/legacy-unknown"),
)
_TERMINATED_POD_GC_HELP = (
    "Number of terminated pods that can exist before the terminated pod garbage collector starts "
    "deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled."
)
_SIMULATED_NODES_HELP = (
    "Not a kube-apiserver flag: how many simulated nodes (sim-node-0 ... sim-node-N-1) the node-simulator "
    "controller registers and runs; it also runs any Node annotated kwok.x-k8s.io/node=fake. Their pods get "
    "a status, but no container runs."
)
_SIMULATED_RUN_HELP = (
    "Not a kube-apiserver flag: how long the containers of a simulated pod that does not restart them "
    "(restartPolicy Never or OnFailure, as Jobs' pods) run before exiting; the pod annotation "
    "simulated.kube-apiserver.io/run-seconds overrides it."
)
_GRACE_PERIOD_HELP = (
    "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N "
    "times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet "
    "to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and "
    "HTTP2_READ_IDLE_TIMEOUT_SECONDS"
)
_LEADER_ELECT_HELP = (
    "Start a leader election client and gain leadership before executing the main loop. Enable this when "
    "running replicated components for high availability. (kube-controller-manager's flag: the embedded "
    "controllers run on the replica that leads.)"
)
_LEASE_DURATION_HELP = (
    "The duration that non-leader candidates will wait after observing a leadership renewal until attempting "
    "to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that "
    "a leader can be stopped before it is replaced by another candidate. This is only applicable if leader "
    "election is enabled."
)
_RENEW_DEADLINE_HELP = (
    "The interval between attempts by the acting master to renew a leadership slot before it stops leading. "
    "This must be less than the lease duration. This is only applicable if leader election is enabled."
)
_RETRY_PERIOD_HELP = (
    "The duration the clients should wait between attempting acquisition and renewal of a leadership. This "
    "is only applicable if leader election is enabled."
)
