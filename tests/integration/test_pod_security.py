"""The PodSecurity admission plugin, on by default: namespace labels pod-security.kubernetes.io/* select the
baseline or restricted Pod Security Standard; enforce refuses pods with Kubernetes' exact message, warn adds
Warning headers (also for workloads with pod templates), invalid labels are refused, and tightening a
namespace's enforce level warns about the pods already there."""

from __future__ import annotations

import http.client
import json
import ssl

import pytest

from conftest import Server

ENFORCE, WARN = "pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/warn"
ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"
MERGE = {"Content-Type": "application/merge-patch+json"}
RESTRICTED_VIOLATIONS = (
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
    'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
    '"Localhost")')
PRIVILEGED_C = 'privileged (container "c" must not set securityContext.privileged=true)'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """As --allow-privileged=true (kubeadm's setting): pod validation lets privileged containers reach admission."""
    srv = Server(str(tmp_path_factory.mktemp("podsecurity")), ["--allow-privileged=true"]).start()
    yield srv
    srv.stop()


def namespace(server, name: str, labels: dict[str, str]) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
    created = server.request("POST", "/api/v1/namespaces", body)
    assert created.status == 201, created.body


def pod(name: str, container_context: dict | None = None, **spec) -> dict:
    container = {"name": "c", "image": "nginx"}
    if container_context is not None:
        container["securityContext"] = container_context
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def restricted_pod(name: str) -> dict:
    return pod(name, {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
               securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}})


def send(server, method: str, path: str, body: dict) -> tuple[int, dict, list[str]]:
    """status, body and every Warning header (the fixture's response keeps only the last of a repeated header)."""
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=30,
                                       context=ssl.create_default_context(cafile=server.ca_file))
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    conn.request(method, path, json.dumps(body), {"Authorization": f"Bearer {server.token}",
                                                  "Content-Type": content_type})
    resp = conn.getresponse()
    data, headers = json.loads(resp.read()), resp.getheaders()
    conn.close()
    return resp.status, data, [value for key, value in headers if key.lower() == "warning"]


def warning(text: str) -> str:
    return '299 - "' + text.replace('"', '\\"') + '"'


def test_enforce_refuses_a_violating_pod_with_kubernetes_message(server):
    namespace(server, "psa-restricted", {ENFORCE: "restricted"})
    refused = server.request("POST", "/api/v1/namespaces/psa-restricted/pods", pod("p"))
    assert refused.status == 403
    assert refused.json()["message"] == (f'pods "p" is forbidden: violates PodSecurity "restricted:latest": '
                                         f"{RESTRICTED_VIOLATIONS}")
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["details"] == {"name": "p", "kind": "pods"}
    status, _, warnings = send(server, "POST", "/api/v1/namespaces/psa-restricted/pods", restricted_pod("ok"))
    assert status == 201 and warnings == []


def test_baseline_enforce_allows_unprivileged_pods_and_refuses_privileged_ones(server):
    namespace(server, "psa-baseline", {ENFORCE: "baseline"})
    path = "/api/v1/namespaces/psa-baseline/pods"
    assert server.request("POST", path, pod("plain")).status == 201
    refused = server.request("POST", path, pod("priv", {"privileged": True}, hostNetwork=True)).json()
    assert refused["message"] == ('pods "priv" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
                                  f"(hostNetwork=true), {PRIVILEGED_C}")


def test_warn_level_adds_a_warning_header_and_admits(server):
    namespace(server, "psa-warn", {WARN: "baseline"})
    status, created, warnings = send(server, "POST", "/api/v1/namespaces/psa-warn/pods",
                                     pod("w", {"privileged": True}))
    assert status == 201, created
    assert warnings == [warning(f'would violate PodSecurity "baseline:latest": {PRIVILEGED_C}')]


def test_enforce_implies_warn_and_workloads_only_warn(server):
    namespace(server, "psa-workloads", {ENFORCE: "restricted"})
    template = {"metadata": {"labels": {"app": "d"}}, "spec": pod("x")["spec"]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template}}
    status, _, warnings = send(server, "POST", "/apis/apps/v1/namespaces/psa-workloads/deployments", deployment)
    assert status == 201
    assert warnings == [warning(f'would violate PodSecurity "restricted:latest": {RESTRICTED_VIOLATIONS}')]
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
               "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                   "spec": {**restricted_pod("x")["spec"], "restartPolicy": "Never"}}}}}}
    status, _, warnings = send(server, "POST", "/apis/batch/v1/namespaces/psa-workloads/cronjobs", cronjob)
    assert status == 201 and warnings == []


def test_unlabelled_namespaces_are_privileged_kube_system_included(server):
    for ns in ("default", "kube-system"):
        status, body, warnings = send(server, "POST", f"/api/v1/namespaces/{ns}/pods",
                                      pod(f"priv-{ns}", {"privileged": True}, hostPID=True))
        assert status == 201, body
        assert warnings == []


def test_invalid_labels_are_refused_on_create_and_update(server):
    body = {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "psa-invalid",
                         "labels": {ENFORCE: "bogus", "pod-security.kubernetes.io/warn-version": "1.25"}}}
    refused = server.request("POST", "/api/v1/namespaces", body)
    assert refused.status == 422
    assert refused.json()["message"] == (
        'Namespace "psa-invalid" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: '
        '"bogus": must be one of privileged, baseline, restricted, '
        'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"]')
    namespace(server, "psa-relabel", {})
    patched = server.request("PATCH", "/api/v1/namespaces/psa-relabel",
                             {"metadata": {"labels": {ENFORCE_VERSION: "v2.0"}}}, MERGE)
    assert patched.status == 422
    assert patched.json()["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "metadata.labels[pod-security.kubernetes.io/enforce-version]",
        "message": 'Invalid value: "v2.0": must be "latest" or "v1.x"'}]


def test_tightening_enforce_warns_about_existing_pods(server):
    namespace(server, "psa-tighten", {})
    path = "/api/v1/namespaces/psa-tighten/pods"
    for name in ("b", "a"):
        assert server.request("POST", path, pod(name)).status == 201
    assert server.request("POST", path, pod("priv", {"privileged": True})).status == 201
    assert server.request("POST", path, restricted_pod("fine")).status == 201
    status, _, warnings = send(server, "PATCH", "/api/v1/namespaces/psa-tighten",
                               {"metadata": {"labels": {ENFORCE: "restricted"}}})
    assert status == 200
    reasons = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
    assert warnings == [warning(text) for text in (
        'existing pods in namespace "psa-tighten" violate the new PodSecurity enforce level "restricted:latest"',
        f"a (and 1 other pod): {reasons}",
        f"priv: privileged, {reasons}")]
    # loosening, or leaving enforce alone, checks nothing
    status, _, warnings = send(server, "PATCH", "/api/v1/namespaces/psa-tighten",
                               {"metadata": {"labels": {ENFORCE: "baseline"}}})
    assert status == 200 and warnings == []


def test_pod_updates_are_checked_only_when_images_change(server):
    namespace(server, "psa-update", {})
    path = "/api/v1/namespaces/psa-update/pods"
    assert server.request("POST", path, pod("u")).status == 201
    assert server.request("PATCH", "/api/v1/namespaces/psa-update",
                          {"metadata": {"labels": {ENFORCE: "restricted"}}}, MERGE).status == 200
    relabelled = server.request("PATCH", f"{path}/u", {"metadata": {"labels": {"x": "y"}}}, MERGE)
    assert relabelled.status == 200, relabelled.body
    new_image = server.request("PATCH", f"{path}/u", {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
                               {"Content-Type": "application/strategic-merge-patch+json"})
    assert new_image.status == 403
    assert new_image.json()["message"].startswith('pods "u" is forbidden: violates PodSecurity "restricted:latest"')


def test_ephemeral_containers_are_checked(server):
    namespace(server, "psa-debug", {ENFORCE: "baseline"})
    path = "/api/v1/namespaces/psa-debug/pods"
    assert server.request("POST", path, pod("target")).status == 201
    debug = {"name": "debug", "image": "busybox", "securityContext": {"privileged": True}}
    refused = server.request("PATCH", f"{path}/target/ephemeralcontainers",
                             {"spec": {"ephemeralContainers": [debug]}},
                             {"Content-Type": "application/strategic-merge-patch+json"})
    assert refused.status == 403
    assert refused.json()["message"] == ('pods "target" is forbidden: violates PodSecurity "baseline:latest": '
                                         'privileged (container "debug" must not set securityContext.privileged=true)')


def test_policy_versions_select_the_checks_of_their_release(server):
    """Probe and lifecycle hosts became baseline violations in v1.34."""
    probe = {"httpGet": {"host": "example.com", "port": 80}}
    for version, allowed in (("v1.33", True), ("latest", False)):
        ns = f"psa-version-{version.replace('.', '-')}"
        namespace(server, ns, {ENFORCE: "baseline", ENFORCE_VERSION: version})
        body = pod("probed")
        body["spec"]["containers"][0]["livenessProbe"] = probe
        created = server.request("POST", f"/api/v1/namespaces/{ns}/pods", body)
        assert (created.status == 201) is allowed, created.body
    assert created.json()["message"] == ('pods "probed" is forbidden: violates PodSecurity "baseline:latest": '
                                         'probe or lifecycle host (container "c" uses probe or lifecycle host '
                                         '"example.com")')


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_prints_the_pod_security_warning(server):
    namespace(server, "psa-kubectl", {WARN: "restricted", ENFORCE: "baseline"})
    ran = server.kubectl("run", "web", "--image=nginx", "-n", "psa-kubectl")
    assert "pod/web created" in ran.stdout
    violations = RESTRICTED_VIOLATIONS.replace('"c"', '"web"')
    assert f'Warning: would violate PodSecurity "restricted:latest": {violations}\n' == ran.stderr
    refused = server.kubectl("run", "root", "--image=nginx", "-n", "psa-kubectl", "--privileged", check=False)
    assert refused.returncode != 0
    assert ('Error from server (Forbidden): pods "root" is forbidden: violates PodSecurity "baseline:latest": '
            'privileged (container "root" must not set securityContext.privileged=true)') in refused.stderr
