"""The default profile's plugins as pure functions over node and pod dicts, and the FitError message
the framework builds from their reasons (kube-scheduler v1.34's wording)."""

from __future__ import annotations

from scheduler_fixtures import node, node_info, pod

from kube_apiserver.scheduler.framework.nodeinfo import NodeInfo
from kube_apiserver.scheduler.framework.plugins import (
    BalancedAllocation,
    Fit,
    InterPodAffinity,
    NodeAffinity,
    NodeName,
    NodePorts,
    NodeUnschedulable,
    PodTopologySpread,
    TaintToleration,
    default_plugins,
)
from kube_apiserver.scheduler.framework.runtime import FitError, Framework
from kube_apiserver.scheduler.framework.types import Code, CycleState

NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def run_filter(plugin, p, info: NodeInfo, nodes: list[NodeInfo] | None = None):  # noqa: ANN001, ANN201
    state = CycleState()
    status = plugin.pre_filter(state, p, nodes or [info])
    if status.code == Code.SKIP:
        return status
    return plugin.filter(state, p, info)


def scores(plugin, p, infos: list[NodeInfo]) -> dict[str, int]:  # noqa: ANN001
    state = CycleState()
    plugin.pre_filter(state, p, infos)
    plugin.pre_score(state, p, infos)
    out = {i.name: plugin.score(state, p, i) for i in infos}
    plugin.normalize_scores(state, p, out)
    return out


def test_node_unschedulable_and_node_name() -> None:
    cordoned = node_info(node("a", unschedulable=True))
    status = run_filter(NodeUnschedulable(), pod("p"), cordoned)
    assert (status.code, status.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) were unschedulable",),
    )
    tolerating = pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    assert run_filter(NodeUnschedulable(), tolerating, cordoned).code == Code.SUCCESS
    assert run_filter(NodeName(), pod("p", nodeName="b"), cordoned).reasons == (
        "node(s) didn't match the requested node name",
    )


def test_taint_toleration_filters_and_scores_prefer_no_schedule() -> None:
    tainted = node_info(node("a", taints=[NO_SCHEDULE]))
    status = run_filter(TaintToleration(), pod("p"), tainted)
    assert (status.code, status.reasons) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint(s)",),
    )
    tolerating = pod("p", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}])
    assert run_filter(TaintToleration(), tolerating, tainted).code == Code.SUCCESS
    prefer = node_info(node("b", taints=[{"key": "k", "effect": "PreferNoSchedule"}]))
    assert scores(TaintToleration(), pod("p"), [prefer, node_info(node("c"))]) == {"b": 0, "c": 100}


def test_node_affinity_node_selector_required_and_preferred() -> None:
    ssd = node_info(node("a", labels={"disk": "ssd"}))
    hdd = node_info(node("b", labels={"disk": "hdd"}))
    selecting = pod("p", nodeSelector={"disk": "ssd"})
    assert run_filter(NodeAffinity(), selecting, ssd).code == Code.SUCCESS
    assert run_filter(NodeAffinity(), selecting, hdd).reasons == (
        "node(s) didn't match Pod's node affinity/selector",
    )
    term = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]}
    required = pod(
        "p",
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        },
    )
    assert run_filter(NodeAffinity(), required, ssd).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    preferred = pod(
        "p",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": term}]
            }
        },
    )
    assert scores(NodeAffinity(), preferred, [ssd, hdd]) == {"a": 0, "b": 100}


def test_malformed_affinity_is_unschedulable_not_an_exception() -> None:
    bad = pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "nonsense"}})
    assert run_filter(NodeAffinity(), bad, node_info(node("a"))).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    bad_term = pod(
        "p",
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]},
                    }
                ]
            }
        },
    )
    status = InterPodAffinity().pre_filter(CycleState(), bad_term, [node_info(node("a"))])
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_fit_counts_requests_init_containers_overhead_and_pods() -> None:
    busy = node_info(node("a", cpu="2", memory="1Gi", pods="2"), pod("x", cpu="1500m", node_name="a"))
    status = run_filter(Fit(), pod("p", cpu="600m", memory="2Gi"), busy)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"))
    assert run_filter(Fit(), pod("p", cpu="500m"), busy).code == Code.SUCCESS
    init = pod(
        "p", cpu="100m", initContainers=[{"name": "i", "image": "b", "resources": {"requests": {"cpu": "1"}}}]
    )
    assert run_filter(Fit(), init, busy).reasons == ("Insufficient cpu",)
    overhead = pod("p", cpu="400m", overhead={"cpu": "200m"})
    assert run_filter(Fit(), overhead, busy).reasons == ("Insufficient cpu",)
    full = node_info(node("b", pods="1"), pod("x", node_name="b"))
    assert run_filter(Fit(), pod("p"), full).reasons == ("Too many pods",)


def test_fit_extended_resources_and_odd_quantities() -> None:
    gpu = node_info(node("a", **{"example.com/gpu": "1"}))
    wants = pod("p")
    wants["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": "2"},
        "limits": {"example.com/gpu": "2"},
    }
    assert run_filter(Fit(), wants, gpu).reasons == ("Insufficient example.com/gpu",)
    odd = pod("p")
    odd["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "lots", "memory": ["x"]}}
    assert run_filter(Fit(), odd, gpu).code == Code.SUCCESS  # malformed quantities count as absent


def test_least_allocated_and_balanced_allocation_scores() -> None:
    empty = node_info(node("a", cpu="4", memory="4Gi"))
    half = node_info(node("b", cpu="4", memory="4Gi"), pod("x", cpu="2", memory="1Gi", node_name="b"))
    p = pod("p", cpu="1", memory="1Gi")
    state = CycleState()
    fit = Fit()
    fit.pre_filter(state, p, [empty, half])
    # cpu (4000-1000)*100/4000=75, memory (4Gi-1Gi)*100/4Gi=75
    assert fit.score(state, p, empty) == 75
    assert fit.score(state, p, half) == (25 + 50) // 2
    balanced = BalancedAllocation()
    assert balanced.score(state, p, empty) == 100  # 1/4 cpu, 1/4 memory: even
    assert balanced.score(state, p, half) == int((1 - abs(0.75 - 0.5) / 2) * 100)


def test_node_ports_conflict_on_overlapping_host_ips() -> None:
    def with_port(name: str, port: int, ip: str = "", node_name: str = "") -> dict:
        p = pod(name, node_name=node_name)
        p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": port, "hostIP": ip}]
        return p

    taken = node_info(node("a"), with_port("x", 8080, "10.0.0.1", "a"))
    assert run_filter(NodePorts(), with_port("p", 8080), taken).reasons == (
        "node(s) didn't have free ports for the requested pod ports",
    )
    assert run_filter(NodePorts(), with_port("p", 8080, "10.0.0.2"), taken).code == Code.SUCCESS
    assert run_filter(NodePorts(), with_port("p", 8081), taken).code == Code.SUCCESS


def _anti(app: str, key: str = "kubernetes.io/hostname") -> dict:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}}
            ]
        }
    }


def test_inter_pod_affinity_required_terms() -> None:
    web_on_a = pod("w", labels={"app": "web"}, node_name="a")
    a = node_info(node("a", labels={"zone": "z1"}), web_on_a)
    b = node_info(node("b", labels={"zone": "z1"}))
    c = node_info(node("c", labels={"zone": "z2"}))
    nodes = [a, b, c]
    anti = pod("p", labels={"app": "web"}, affinity=_anti("web"))
    assert run_filter(InterPodAffinity(), anti, a, nodes).reasons == (
        "node(s) didn't match pod anti-affinity rules",
    )
    assert run_filter(InterPodAffinity(), anti, b, nodes).code == Code.SUCCESS
    zone_anti = pod("p", labels={"app": "web"}, affinity=_anti("web", "zone"))
    assert run_filter(InterPodAffinity(), zone_anti, b, nodes).code == Code.UNSCHEDULABLE
    assert run_filter(InterPodAffinity(), zone_anti, c, nodes).code == Code.SUCCESS
    affinity = pod(
        "p",
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}
                ]
            }
        },
    )
    assert run_filter(InterPodAffinity(), affinity, b, nodes).code == Code.SUCCESS
    assert run_filter(InterPodAffinity(), affinity, c, nodes).reasons == (
        "node(s) didn't match pod affinity rules",
    )
    # an existing pod's anti-affinity keeps matching pods off its node
    guarded = node_info(node("d"), pod("g", node_name="d", affinity=_anti("db")))
    assert run_filter(InterPodAffinity(), pod("p", labels={"app": "db"}), guarded).reasons == (
        "node(s) didn't satisfy existing pods anti-affinity rules",
    )


def test_inter_pod_affinity_first_pod_of_a_group_may_go_anywhere() -> None:
    self_affine = pod(
        "p",
        labels={"app": "web"},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                    }
                ]
            }
        },
    )
    assert run_filter(InterPodAffinity(), self_affine, node_info(node("a"))).code == Code.SUCCESS


def test_inter_pod_affinity_preferred_scoring() -> None:
    a = node_info(node("a"), pod("w", labels={"app": "web"}, node_name="a"))
    b = node_info(node("b"))
    preferring = pod(
        "p",
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}},
                        },
                    }
                ]
            }
        },
    )
    assert scores(InterPodAffinity(), preferring, [a, b]) == {"a": 100, "b": 0}


def test_pod_topology_spread_do_not_schedule() -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    a = node_info(node("a", labels={"zone": "z1"}), pod("w", labels={"app": "web"}, node_name="a"))
    b = node_info(node("b", labels={"zone": "z2"}))
    unlabelled = node_info(node("c"))
    nodes = [a, b, unlabelled]
    p = pod("p", labels={"app": "web"}, topologySpreadConstraints=spread)
    assert run_filter(PodTopologySpread(), p, a, nodes).reasons == (
        "node(s) didn't match pod topology spread constraints",
    )
    assert run_filter(PodTopologySpread(), p, b, nodes).code == Code.SUCCESS
    assert run_filter(PodTopologySpread(), p, unlabelled, nodes).reasons == (
        "node(s) didn't match pod topology spread constraints (missing required label)",
    )


def test_fit_error_message_is_upstreams() -> None:
    nodes = [
        node_info(node("a", taints=[NO_SCHEDULE])),
        node_info(node("b", cpu="1")),
        node_info(node("c", cpu="1")),
    ]
    framework = Framework(default_plugins())
    try:
        framework.find_nodes_that_fit(pod("p", cpu="2"), nodes)
    except FitError as err:
        message = str(err)
    assert message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )


def test_fit_error_with_preemption_policy_never() -> None:
    framework = Framework(default_plugins())
    p = pod("p", nodeSelector={"disk": "none"}, preemptionPolicy="Never")
    try:
        framework.find_nodes_that_fit(p, [node_info(node("a"))])
    except FitError as err:
        message = str(err)
    assert message == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    )


def test_a_plugin_that_raises_fails_the_pod_not_the_framework() -> None:
    class Broken(NodeName):
        def filter(self, state, pod, node):  # noqa: ANN001, ANN201
            raise KeyError("boom")

    framework = Framework([Broken()])
    try:
        framework.find_nodes_that_fit(pod("p"), [node_info(node("a"))])
    except RuntimeError as err:
        assert "boom" in str(err)
    else:
        raise AssertionError("no error")


def test_pod_topology_spread_scores_fewer_matching_pods_higher() -> None:
    web = {"app": "web"}
    a = node_info(
        node("a", labels={"zone": "z1"}),
        pod("w1", labels=web, node_name="a"),
        pod("w2", labels=web, node_name="a"),
    )
    b = node_info(node("b", labels={"zone": "z1"}), pod("w3", labels=web, node_name="b"))
    c = node_info(node("c", labels={"zone": "z2"}))
    soft = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": web},
        }
    ]
    p = pod("p", labels=web, topologySpreadConstraints=soft)
    # z1 holds 3 matching pods, z2 none: weight log(2+2) each; scores 3*1.386=4 and 0; normalized (4+0-s)*100/4
    assert scores(PodTopologySpread(), p, [a, b, c]) == {"a": 0, "b": 0, "c": 100}


def test_pod_topology_spread_system_defaults_spread_a_controllers_pods_by_hostname() -> None:
    from kube_apiserver.apimachinery.labels import selector_from_set

    web = {"app": "web"}
    a = node_info(node("a"), pod("w1", labels=web, node_name="a"), pod("w2", labels=web, node_name="a"))
    b = node_info(node("b"), pod("w3", labels=web, node_name="b"))
    c = node_info(node("c"))
    plugin = PodTopologySpread(lambda _: selector_from_set(web))
    got = scores(plugin, pod("p", labels=web), [a, b, c])
    assert got["c"] > got["b"] > got["a"]
    no_owner = PodTopologySpread()  # no Service nor controller selects it: no default constraints
    assert no_owner.pre_score(CycleState(), pod("p", labels=web), [a, b, c]).code == Code.SKIP


def test_a_pod_pinned_by_match_fields_is_filtered_on_its_node_only() -> None:
    """NodeAffinity's PreFilterResult (a DaemonSet's pods): the other nodes are not filtered and count as
    not satisfying the plugin."""
    pinned = pod(
        "p",
        cpu="2",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                    ]
                }
            }
        },
    )
    nodes = [node_info(node("a")), node_info(node("b", cpu="1")), node_info(node("c"))]
    try:
        Framework(default_plugins()).find_nodes_that_fit(pinned, nodes)
    except FitError as err:
        message = str(err)
    assert message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    big_b = [nodes[0], node_info(node("b"))]
    _, feasible, _ = Framework(default_plugins()).find_nodes_that_fit(pinned, big_b)
    assert [n.name for n in feasible] == ["b"]
