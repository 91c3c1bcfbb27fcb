"""core/v1 resourcequotas and limitranges with the ResourceQuota and LimitRanger admission plugins and the
resource quota controller: kubectl create quota, status.used as pods come and go, Kubernetes' refusals
word for word, LimitRange defaults and bounds, scopes, and invalid objects."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import Server, wait_for

NS = "/api/v1/namespaces"


def namespace(server, name: str) -> str:
    created = server.request("POST", NS, {"metadata": {"name": name}})
    assert created.status == 201, created.body
    return f"{NS}/{name}"


def pod(name: str, requests: dict | None = None, limits: dict | None = None, **spec) -> dict:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    container = {"name": "c", "image": "nginx", "resources": resources}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def quota(name: str, hard: dict, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard, **spec}}


def limit_range(name: str, *limits: dict) -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(limits)}}


def wait_status(server, base: str, name: str, used: dict, timeout: float = 10) -> dict:
    """The quota once the controller (or admission) made status.used what is expected."""
    deadline = time.time() + timeout
    while True:
        got = server.request("GET", f"{base}/resourcequotas/{name}").json()
        if (got.get("status") or {}).get("used") == used:
            return got
        assert time.time() < deadline, got.get("status")
        time.sleep(0.05)


def forbidden(response, message: str) -> None:
    assert response.status == 403, response.body
    body = response.json()
    assert (body["reason"], body["message"]) == ("Forbidden", message)


def invalid(response, kind: str, name: str, causes: list[tuple[str, str]]) -> None:
    """422 Invalid with these (field, message) causes, in order, and Kubernetes' summary message."""
    assert response.status == 422, response.body
    body = response.json()
    assert body["reason"] == "Invalid" and body["details"]["kind"] == kind
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == causes
    listed = list(dict.fromkeys(f"{f}: {m}" for f, m in causes))  # the summary drops repeats
    summary = listed[0] if len(listed) == 1 else "[" + ", ".join(listed) + "]"
    assert body["message"] == f'{kind} "{name}" is invalid: {summary}'


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_quota_counts_pods_and_refuses_the_third(server):
    base = namespace(server, "quota-pods")
    run = server.kubectl("-n", "quota-pods", "create", "quota", "q", "--hard=pods=2,requests.cpu=1", "-v=8")
    assert "resourcequota/q created" in run.stdout
    assert "Content-Type: application/vnd.kubernetes.protobuf" in run.stderr  # kubectl sent protobuf
    got = wait_status(server, base, "q", {"pods": "0", "requests.cpu": "0"})
    assert got["spec"] == {"hard": {"pods": "2", "requests.cpu": "1"}}
    assert got["status"]["hard"] == got["spec"]["hard"]
    for name in ("a", "b"):
        assert server.request("POST", f"{base}/pods", pod(name, {"cpu": "300m"})).status == 201
    wait_status(server, base, "q", {"pods": "2", "requests.cpu": "600m"}, timeout=0)  # charged by admission
    forbidden(server.request("POST", f"{base}/pods", pod("c", {"cpu": "100m"})),
              'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2')
    table = server.kubectl("-n", "quota-pods", "get", "quota").stdout.splitlines()
    assert table[0].split() == ["NAME", "REQUEST", "LIMIT", "AGE"]
    assert table[1].split()[0] == "q" and table[1].split()[1:-1] == ["pods:", "2/2,", "requests.cpu:", "600m/1"]
    assert server.request("DELETE", f"{base}/pods/a").status == 200
    wait_status(server, base, "q", {"pods": "1", "requests.cpu": "300m"})  # the controller recomputed it
    assert server.request("POST", f"{base}/pods", pod("c", {"cpu": "100m"})).status == 201
    finished = server.request("GET", f"{base}/pods/b").json()
    finished["status"]["phase"] = "Succeeded"
    assert server.request("PUT", f"{base}/pods/b/status", finished).status == 200
    wait_status(server, base, "q", {"pods": "1", "requests.cpu": "100m"})  # a finished pod is not charged
    raised = server.request("PATCH", f"{base}/resourcequotas/q", json.dumps({"spec": {"hard": {"pods": "5"}}}),
                            {"Content-Type": "application/merge-patch+json"})
    assert raised.status == 200 and raised.json()["status"]["hard"] == {"pods": "2", "requests.cpu": "1"}
    deadline = time.time() + 10
    while server.request("GET", f"{base}/resourcequotas/q").json()["status"]["hard"] != {"pods": "5",
                                                                                       "requests.cpu": "1"}:
        assert time.time() < deadline
        time.sleep(0.05)


def test_compute_quota_messages(server):
    base = namespace(server, "quota-compute")
    hard = {"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2", "limits.memory": "2Gi"}
    assert server.request("POST", f"{base}/resourcequotas", quota("compute", hard)).status == 201
    wait_status(server, base, "compute", {k: "0" for k in hard})
    forbidden(server.request("POST", f"{base}/pods", pod("bare")),
              'pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: c; limits.memory for: '
              'c; requests.cpu for: c; requests.memory for: c')
    first = pod("first", {"cpu": "600m", "memory": "512Mi"}, {"cpu": "1", "memory": "1Gi"})
    assert server.request("POST", f"{base}/pods", first).status == 201
    wait_status(server, base, "compute", {"requests.cpu": "600m", "requests.memory": "512Mi", "limits.cpu": "1",
                                          "limits.memory": "1Gi"}, timeout=0)
    second = pod("second", {"cpu": "600m", "memory": "600Mi"}, {"cpu": "1", "memory": "1Gi"})
    forbidden(server.request("POST", f"{base}/pods", second),
              'pods "second" is forbidden: exceeded quota: compute, requested: requests.cpu=600m,'
              'requests.memory=600Mi, used: requests.cpu=600m,requests.memory=512Mi, limited: requests.cpu=1,'
              'requests.memory=1Gi')


def test_object_counts_and_service_quotas(server):
    base = namespace(server, "quota-counts")
    # Every namespace holds kube-root-ca.crt (the root-ca-cert-publisher's), which counts as it does upstream.
    wait_for(lambda: server.request("GET", f"{base}/configmaps/kube-root-ca.crt").status == 200, timeout=10)
    hard = {"count/configmaps": "2", "secrets": "1", "services": "2", "services.nodeports": "1"}
    assert server.request("POST", f"{base}/resourcequotas", quota("objects", hard)).status == 201
    wait_status(server, base, "objects", {"count/configmaps": "1", "secrets": "0", "services": "0",
                                          "services.nodeports": "0"})
    assert server.request("POST", f"{base}/configmaps", {"metadata": {"name": "one"}}).status == 201
    forbidden(server.request("POST", f"{base}/configmaps", {"metadata": {"name": "two"}}),
              'configmaps "two" is forbidden: exceeded quota: objects, requested: count/configmaps=1, '
              'used: count/configmaps=2, limited: count/configmaps=2')
    two_ports = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81,
                                                                                                   "name": "b"}]}}
    two_ports["spec"]["ports"][0]["name"] = "a"
    forbidden(server.request("POST", f"{base}/services", two_ports),
              'services "np" is forbidden: exceeded quota: objects, requested: services.nodeports=2, '
              'used: services.nodeports=0, limited: services.nodeports=1')
    assert server.request("DELETE", f"{base}/configmaps/one").status == 200
    wait_status(server, base, "objects", {"count/configmaps": "1", "secrets": "0", "services": "0",
                                          "services.nodeports": "0"})


def test_quota_scopes(server):
    base = namespace(server, "quota-scopes")
    best_effort = quota("best-effort", {"pods": "1"}, scopes=["BestEffort"])
    high = quota("high", {"pods": "1"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})
    terminating = quota("terminating", {"pods": "0"}, scopes=["Terminating"])
    for body in (best_effort, high, terminating):
        assert server.request("POST", f"{base}/resourcequotas", body).status == 201
        wait_status(server, base, body["metadata"]["name"], {"pods": "0"})
    assert server.request("POST", f"{base}/pods", pod("be")).status == 201
    forbidden(server.request("POST", f"{base}/pods", pod("be2")),
              'pods "be2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1')
    assert server.request("POST", f"{base}/pods", pod("burstable", {"cpu": "10m"})).status == 201
    forbidden(server.request("POST", f"{base}/pods", pod("deadline", {"cpu": "10m"}, activeDeadlineSeconds=60)),
              'pods "deadline" is forbidden: exceeded quota: terminating, requested: pods=1, used: pods=0, '
              'limited: pods=0')
    assert server.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                          {"metadata": {"name": "high"}, "value": 1000}).status == 201
    assert server.request("POST", f"{base}/pods", pod("h1", {"cpu": "10m"}, priorityClassName="high")).status == 201
    forbidden(server.request("POST", f"{base}/pods", pod("h2", {"cpu": "10m"}, priorityClassName="high")),
              'pods "h2" is forbidden: exceeded quota: high, requested: pods=1, used: pods=1, limited: pods=1')
    assert server.request("GET", f"{base}/resourcequotas/best-effort").json()["status"]["used"] == {"pods": "1"}


def test_dry_run_is_not_charged_and_concurrent_creates_never_exceed(server):
    base = namespace(server, "quota-race")
    assert server.request("POST", f"{base}/resourcequotas", quota("q", {"pods": "4"})).status == 201
    wait_status(server, base, "q", {"pods": "0"})
    assert server.request("POST", f"{base}/pods?dryRun=All", pod("dry")).status == 201
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda i: server.request("POST", f"{base}/pods", pod(f"p{i}")).status, range(10)))
    assert sorted(codes) == [201] * 4 + [403] * 6
    wait_status(server, base, "q", {"pods": "4"}, timeout=0)


@pytest.mark.usefixtures("kubectl_available")
def test_limit_range_defaults_and_bounds(server):
    base = namespace(server, "limits")
    container = {"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}, "min": {"cpu": "50m"},
                 "defaultRequest": {"memory": "64Mi"}, "maxLimitRequestRatio": {"cpu": "4"}}
    created = server.request("POST", f"{base}/limitranges", limit_range("bounds", container))
    assert created.status == 201, created.body
    assert created.json()["spec"]["limits"] == [{  # SetDefaults_LimitRangeItem
        "type": "Container", "max": {"cpu": "1", "memory": "1Gi"}, "min": {"cpu": "50m"},
        "default": {"cpu": "1", "memory": "1Gi"}, "defaultRequest": {"cpu": "1", "memory": "64Mi"},
        "maxLimitRequestRatio": {"cpu": "4"}}]
    got = server.request("POST", f"{base}/pods", pod("defaulted")).json()
    assert got["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1", "memory": "64Mi"},
                                                         "limits": {"cpu": "1", "memory": "1Gi"}}
    assert got["metadata"]["annotations"] == {"kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory "
                                              "request for container c; cpu, memory limit for container c"}
    assert got["status"]["qosClass"] == "Burstable"
    forbidden(server.request("POST", f"{base}/pods", pod("big", limits={"cpu": "2"})),
              'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
    forbidden(server.request("POST", f"{base}/pods", pod("small", {"cpu": "10m", "memory": "100Mi"})),
              'pods "small" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, cpu max '
              'limit to request ratio per Container is 4, but provided ratio is 100.000000]')
    table = server.kubectl("-n", "limits", "get", "limits").stdout.splitlines()
    assert table[0].split() == ["NAME", "CREATED", "AT"] and table[1].split()[0] == "bounds"
    pod_limits = limit_range("per-pod", {"type": "Pod", "max": {"memory": "1Gi"}})
    assert server.request("POST", f"{base}/limitranges", pod_limits).status == 201
    two = pod("two", {"memory": "600Mi"}, {"memory": "600Mi"})
    two["spec"]["containers"].append({"name": "d", "image": "nginx", "resources": {"limits": {"memory": "600Mi"}}})
    forbidden(server.request("POST", f"{base}/pods", two),
              'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi')


def test_claims_within_limit_range_and_storage_quota(server):
    base = namespace(server, "quota-claims")
    hard = {"persistentvolumeclaims": "2", "requests.storage": "5Gi",
            "gold.storageclass.storage.k8s.io/requests.storage": "1Gi"}
    assert server.request("POST", f"{base}/resourcequotas", quota("storage", hard)).status == 201
    bounds = limit_range("claims", {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                                    "max": {"storage": "4Gi"}})
    assert server.request("POST", f"{base}/limitranges", bounds).status == 201
    wait_status(server, base, "storage", {k: "0" for k in hard})

    def claim(name: str, size: str, **spec) -> dict:
        return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                     "resources": {"requests": {"storage": size}}, **spec}}

    claims = f"{base}/persistentvolumeclaims"
    forbidden(server.request("POST", claims, claim("small", "500Mi")), 'persistentvolumeclaims "small" is '
              "forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi")
    forbidden(server.request("POST", claims, claim("big", "10Gi")), 'persistentvolumeclaims "big" is forbidden: '
              "maximum storage usage per PersistentVolumeClaim is 4Gi, but request is 10Gi")
    forbidden(server.request("POST", claims, claim("gold", "2Gi", storageClassName="gold")),
              'persistentvolumeclaims "gold" is forbidden: exceeded quota: storage, requested: '
              "gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: "
              "gold.storageclass.storage.k8s.io/requests.storage=0, limited: "
              "gold.storageclass.storage.k8s.io/requests.storage=1Gi")
    assert server.request("POST", claims, claim("data", "3Gi")).status == 201
    forbidden(server.request("POST", claims, claim("more", "3Gi")),
              'persistentvolumeclaims "more" is forbidden: exceeded quota: storage, requested: requests.storage=3Gi, '
              "used: requests.storage=3Gi, limited: requests.storage=5Gi")


def test_invalid_resource_quotas(server):
    base = namespace(server, "quota-invalid")
    bad = quota("bad", {"pods": "-1", "foo": "1", "services": "1500m", "storage": "1Gi"})
    invalid(server.request("POST", f"{base}/resourcequotas", bad), "ResourceQuota", "bad", [
        ("spec.hard[foo]", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
        ("spec.hard[foo]", 'Invalid value: "foo": must be a standard resource for quota'),
        ("spec.hard[pods]", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("spec.hard[services]", 'Invalid value: "1500m": must be an integer'),
        ("spec.hard[storage]", 'Invalid value: "storage": must be a standard resource for quota')])
    scopes = quota("scopes", {"pods": "1", "services": "1"}, scopes=["BestEffort", "NotBestEffort"])
    invalid(server.request("POST", f"{base}/resourcequotas", scopes), "ResourceQuota", "scopes", [
        ("spec.scopes", 'Invalid value: ["BestEffort","NotBestEffort"]: unsupported scope applied to resource'),
        ("spec.scopes", 'Invalid value: ["BestEffort","NotBestEffort"]: unsupported scope applied to resource'),
        ("spec.scopes", 'Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes')])
    selector = quota("selector", {"pods": "1"}, scopeSelector={"matchExpressions": [
        {"scopeName": "BestEffort", "operator": "In", "values": ["x"]}]})
    invalid(server.request("POST", f"{base}/resourcequotas", selector), "ResourceQuota", "selector", [
        ("spec.scopeSelector.matchExpressions.operator",
         'Invalid value: "In": must be \'Exists\' when scope is any of ResourceQuotaScopeTerminating, '
         'ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or '
         'ResourceQuotaScopeCrossNamespacePodAffinity')])
    assert server.request("POST", f"{base}/resourcequotas", quota("ok", {"pods": "1"}, scopes=["Terminating"])) \
        .status == 201
    change = {"spec": {"scopes": ["NotTerminating"]}}
    patched = server.request("PATCH", f"{base}/resourcequotas/ok", json.dumps(change),
                             {"Content-Type": "application/merge-patch+json"})
    invalid(patched, "ResourceQuota", "ok", [("spec.scopes", 'Invalid value: ["NotTerminating"]: field is immutable')])
    malformed = server.request("POST", f"{base}/resourcequotas", quota("m", {"pods": "two"}))
    assert malformed.status == 400 and "quantities must match the regular expression" in malformed.json()["message"]


def test_invalid_limit_ranges(server):
    base = namespace(server, "limits-invalid")
    bad = limit_range("bad", {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"},
                              "maxLimitRequestRatio": {"memory": "500m"}},
                      {"type": "Pod", "default": {"cpu": "1"}}, {"type": "Container"},
                      {"type": "Volume"}, {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}})
    invalid(server.request("POST", f"{base}/limitranges", bad), "LimitRange", "bad", [
        ("spec.limits[0].min[cpu]", 'Invalid value: "2": min value 2 is greater than max value 1'),
        ("spec.limits[0].defaultRequest[cpu]", 'Invalid value: "1": min value 2 is greater than default request '
                                               'value 1'),
        ("spec.limits[0].default[cpu]", 'Invalid value: "2": min value 2 is greater than default value 1'),
        ("spec.limits[0].maxLimitRequestRatio[memory]", 'Invalid value: "500m": ratio 500m is less than 1'),
        ("spec.limits[1].default", "Forbidden: may not be specified when `type` is 'Pod'"),
        ("spec.limits[2].type", 'Duplicate value: "Container"'),
        ("spec.limits[3].type", 'Invalid value: "Volume": must be a standard limit type or fully qualified'),
        ("spec.limits[4].limits", "Required value: either minimum or maximum storage value is required, but "
                                  "neither was provided")])


def test_admission_plugins_can_be_disabled(tmp_path):
    server = Server(str(tmp_path), ["--disable-admission-plugins=ResourceQuota,LimitRanger",
                                    "--controllers=*,-resourcequota"]).start()
    try:
        base = namespace(server, "unlimited")
        assert server.request("POST", f"{base}/resourcequotas", quota("q", {"pods": "0"})).status == 201
        bounds = limit_range("lr", {"type": "Container", "max": {"cpu": "1"}})
        assert server.request("POST", f"{base}/limitranges", bounds).status == 201
        created = server.request("POST", f"{base}/pods", pod("free", limits={"cpu": "2"}))
        assert created.status == 201 and "annotations" not in created.json()["metadata"]
        assert server.request("GET", f"{base}/resourcequotas/q").json()["status"] == {}
    finally:
        server.stop()
