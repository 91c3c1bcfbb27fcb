"""The Priority and RuntimeClass admission plugins, on by default: a new pod's priority and preemption policy
come from its PriorityClass (or the global default), its overhead and scheduling constraints from its
RuntimeClass, with Kubernetes' refusals when the pod contradicts them or names a class that does not exist."""

from __future__ import annotations

import time

PODS = "/api/v1/namespaces/default/pods"
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
MERGE = {"Content-Type": "application/merge-patch+json"}


def pod(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def create_pod(server, name: str, **spec) -> dict:
    created = server.request("POST", PODS, pod(name, **spec))
    assert created.status == 201, created.body
    return created.json()["spec"]


def refused(server, name: str, **spec) -> str:
    resp = server.request("POST", PODS, pod(name, **spec))
    assert resp.status == 403, resp.body
    assert resp.json()["reason"] == "Forbidden" and resp.json()["details"] == {"name": name, "kind": "pods"}
    return resp.json()["message"]


def priority_class(server, name: str, value: int, **fields) -> None:
    body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}
    created = server.request("POST", CLASSES, body)
    assert created.status == 201, created.body


def test_pods_without_a_class_get_priority_zero(server):
    spec = create_pod(server, "plain")
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in spec


def test_named_classes_resolve_system_ones_included(server):
    spec = create_pod(server, "critical", priorityClassName="system-node-critical")
    assert spec["priority"] == 2000001000 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    priority_class(server, "batch-low", 10, preemptionPolicy="Never")
    spec = create_pod(server, "batch", priorityClassName="batch-low")
    assert (spec["priority"], spec["preemptionPolicy"]) == (10, "Never")
    # repeating the resolved values is fine
    assert create_pod(server, "batch-2", priorityClassName="batch-low", priority=10)["priority"] == 10


def test_unknown_or_contradicted_classes_are_refused(server):
    assert refused(server, "nope", priorityClassName="nope") == (
        'pods "nope" is forbidden: no PriorityClass with name nope was found')
    assert refused(server, "guess", priority=7) == (
        'pods "guess" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority '
        "admission controller computed 0 from the given PriorityClass name")
    priority_class(server, "never-preempts", 5, preemptionPolicy="Never")
    assert refused(server, "preempt", priorityClassName="never-preempts", preemptionPolicy="PreemptLowerPriority") == (
        'pods "preempt" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be '
        "provided in pod spec; priority admission controller computed Never from the given PriorityClass name")


def test_updates_keep_the_resolved_priority(server):
    created = server.request("GET", f"{PODS}/critical").json()
    del created["spec"]["priority"], created["spec"]["preemptionPolicy"]
    created["metadata"]["labels"] = {"updated": "yes"}
    replaced = server.request("PUT", f"{PODS}/critical", created)
    assert replaced.status == 200, replaced.body
    assert replaced.json()["spec"]["priority"] == 2000001000
    assert replaced.json()["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_the_global_default_class(server):
    priority_class(server, "cluster-default", 1000, globalDefault=True)
    second = server.request("POST", CLASSES, {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "another-default"},
        "value": 1, "globalDefault": True})
    assert second.status == 403
    assert second.json()["message"] == ('priorityclasses.scheduling.k8s.io "another-default" is forbidden: '
                                        "PriorityClass cluster-default is already marked as default. Only one default "
                                        "can exist")
    deadline = time.time() + 10  # the plugin reads classes from the watch cache, as Kubernetes' informer does
    while (spec := create_pod(server, f"defaulted-{int(time.time() * 1000)}"))["priority"] != 1000:
        assert time.time() < deadline, spec
    assert spec["priorityClassName"] == "cluster-default"
    assert server.request("DELETE", f"{CLASSES}/cluster-default").status == 200


def runtime_class(server, name: str, **fields) -> None:
    body = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "kata",
            **fields}
    created = server.request("POST", RUNTIME_CLASSES, body)
    assert created.status == 201, created.body


def test_runtime_class_overhead_and_scheduling_are_applied(server):
    runtime_class(server, "sandboxed", overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                  scheduling={"nodeSelector": {"sandbox": "true"},
                              "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"},
                                              {"key": "dedicated", "operator": "Equal", "value": "web",
                                               "effect": "NoSchedule"}]})
    spec = create_pod(server, "sandboxed", runtimeClassName="sandboxed", nodeSelector={"zone": "a"},
                      tolerations=[{"operator": "Exists", "key": "dedicated"}])
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"zone": "a", "sandbox": "true"}
    # after the pod's own (DefaultTolerationSeconds ran first), the class's: not the dedicated one, which the
    # pod's broader toleration covers
    assert [(t["key"], t.get("effect")) for t in spec["tolerations"]] == [
        ("dedicated", None), ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"), ("sandbox", "NoSchedule")]
    same = create_pod(server, "same-overhead", runtimeClassName="sandboxed",
                      overhead={"cpu": "0.25", "memory": "120Mi"})  # the same quantities, written otherwise
    assert same["overhead"] == {"cpu": "250m", "memory": "120Mi"}


def test_runtime_class_refusals(server):
    assert refused(server, "no-class", runtimeClassName="missing") == (
        'pods "no-class" is forbidden: pod rejected: RuntimeClass "missing" not found')
    assert refused(server, "other-overhead", runtimeClassName="sandboxed", overhead={"cpu": "1"}) == (
        'pods "other-overhead" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s defined '
        "Overhead")
    assert refused(server, "own-overhead", overhead={"cpu": "1"}) == (
        'pods "own-overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass '
        "defined Overhead")
    assert refused(server, "conflict", runtimeClassName="sandboxed", nodeSelector={"sandbox": "false"}) == (
        'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; '
        "pod.spec.nodeSelector[sandbox] = false")
    runtime_class(server, "plain-runc")
    spec = create_pod(server, "plain-runc", runtimeClassName="plain-runc")
    assert "overhead" not in spec and "nodeSelector" not in spec
