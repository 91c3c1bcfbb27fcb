"""The names --controllers takes (kube-controller-manager's syntax: `*` for the defaults, `name` to enable,
`-name` to disable, v1.34's canonical names as well): a table of its own, so that checking the flag does not
import every controller."""

from __future__ import annotations

# kube-controller-manager's on-by-default controllers that are embedded, the scheduler (kube-scheduler,
# embedded: -scheduler leaves pods to a real one) and the simulated kubelets of --simulated-nodes and of nodes
# annotated kwok.x-k8s.io/node=fake.
DEFAULT_CONTROLLERS = (
    "garbagecollector", "namespace", "serviceaccount", "resourcequota", "pvc-protection", "pv-protection",
    "clusterrole-aggregation", "root-ca-cert-publisher", "replicaset", "replicationcontroller", "deployment",
    "statefulset", "daemonset", "job", "cronjob", "ttl-after-finished", "podgc", "endpoint", "endpointslice",
    "endpointslicemirroring", "disruption", "csrsigning", "csrapproving", "csrcleaner", "horizontalpodautoscaling",
    "nodelifecycle", "taint-eviction-controller", "scheduler", "node-simulator",
)
# Off by default, as in kube-controller-manager: kubeadm passes --controllers=*,bootstrapsigner,tokencleaner.
DISABLED_BY_DEFAULT = ("bootstrapsigner", "tokencleaner")
KNOWN_CONTROLLERS = frozenset(DEFAULT_CONTROLLERS + DISABLED_BY_DEFAULT)
# v1.34's canonical names (cmd/kube-controller-manager/names), which --controllers takes as the older ones.
CANONICAL_NAMES = {
    "garbage-collector-controller": "garbagecollector", "namespace-controller": "namespace",
    "serviceaccount-controller": "serviceaccount", "resourcequota-controller": "resourcequota",
    "persistentvolumeclaim-protection-controller": "pvc-protection",
    "persistentvolume-protection-controller": "pv-protection",
    "clusterrole-aggregation-controller": "clusterrole-aggregation",
    "root-ca-certificate-publisher-controller": "root-ca-cert-publisher",
    "replicaset-controller": "replicaset", "replicationcontroller-controller": "replicationcontroller",
    "deployment-controller": "deployment", "statefulset-controller": "statefulset",
    "daemonset-controller": "daemonset", "job-controller": "job", "cronjob-controller": "cronjob",
    "ttl-after-finished-controller": "ttl-after-finished", "pod-garbage-collector-controller": "podgc",
    "endpoints-controller": "endpoint", "endpointslice-controller": "endpointslice",
    "endpointslice-mirroring-controller": "endpointslicemirroring", "disruption-controller": "disruption",
    "certificatesigningrequest-signing-controller": "csrsigning",
    "certificatesigningrequest-approving-controller": "csrapproving",
    "certificatesigningrequest-cleaner-controller": "csrcleaner",
    "horizontal-pod-autoscaler-controller": "horizontalpodautoscaling",
    "node-lifecycle-controller": "nodelifecycle",
    "bootstrap-signer-controller": "bootstrapsigner", "token-cleaner-controller": "tokencleaner",
}


def _name(name: str) -> str:
    """A --controllers entry with a canonical name as the name this manager knows ("-x" kept negative)."""
    sign, bare = ("-", name[1:]) if name.startswith("-") else ("", name)
    return sign + CANONICAL_NAMES.get(bare, bare)


def enabled(names: list[str], controller: str) -> bool:
    names = [_name(n) for n in names]
    if f"-{controller}" in names:
        return False
    return controller in names or ("*" in names and controller in DEFAULT_CONTROLLERS)


def unknown_controllers(names: list[str]) -> list[str]:
    return [n for n in names if n != "*" and _name(n).lstrip("-") not in KNOWN_CONTROLLERS]
