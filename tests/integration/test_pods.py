"""core/v1 pods and podtemplates: kubectl run/get/apply/delete, Kubernetes' defaults, the immutable spec,
status/binding/eviction/ephemeralcontainers subresources, graceful deletion, the kubelet-backed
subresources of a server without kubelets, and a corpus of invalid pods."""

from __future__ import annotations

import json

import pytest

PODS = "/api/v1/namespaces/default/pods"
MERGE = {"Content-Type": "application/merge-patch+json"}
UPDATABLE = ("pod updates may not change fields other than `spec.containers[*].image`,"
             "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
             "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
             "previously negative)\n")
MANIFEST = """
apiVersion: v1
kind: Pod
metadata:
  name: web-applied
  labels: {app: web}
spec:
  volumes:
  - name: config
    configMap: {name: web-config}
  - name: cache
  containers:
  - name: web
    image: nginx:1.27
    ports:
    - {name: http, containerPort: 80}
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    resources:
      limits: {cpu: 500m, memory: 128Mi}
    readinessProbe:
      httpGet: {port: http}
    volumeMounts:
    - {name: config, mountPath: /etc/nginx/conf.d}
    - {name: cache, mountPath: /var/cache/nginx}
  tolerations:
  - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
"""


def pod(name: str, *containers: dict, **spec) -> dict:
    containers = containers or ({"name": "c", "image": "nginx"},)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": list(containers),
                                                                                   **spec}}


def create(server, name: str, **spec) -> dict:
    created = server.request("POST", PODS, pod(name, **spec))
    assert created.status == 201, created.body
    return created.json()


def bind(server, name: str, node: str = "node-1", url_name: str | None = None):
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    return server.request("POST", f"{PODS}/{url_name or name}/binding", body)


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_run_creates_a_defaulted_pod(server):
    assert "pod/nginx created" in server.kubectl("run", "nginx", "--image=nginx").stdout
    got = server.request("GET", f"{PODS}/nginx").json()
    assert got["metadata"]["labels"] == {"run": "nginx"} and got["metadata"]["generation"] == 1
    spec = got["spec"]
    # The ServiceAccount admission plugin's token volume (tests/integration/test_serviceaccounts.py).
    [token_volume] = spec.pop("volumes")
    assert token_volume["name"].startswith("kube-api-access-")
    assert spec["containers"][0].pop("volumeMounts") == [
        {"name": token_volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    assert spec == {
        "containers": [{"name": "nginx", "image": "nginx", "resources": {}, "imagePullPolicy": "Always",
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "securityContext": {},
        "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
        "serviceAccountName": "default", "serviceAccount": "default",
        "priority": 0, "preemptionPolicy": "PreemptLowerPriority",  # the Priority admission plugin's
        "tolerations": [  # the DefaultTolerationSeconds admission plugin's
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}]}
    assert got["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_pods_columns(server):
    create(server, "columns")
    lines = server.kubectl("get", "pods", "columns").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1].split()[:4] == ["columns", "0/1", "Pending", "0"]
    wide = server.kubectl("get", "pods", "columns", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                               "READINESS", "GATES"]
    assert wide[1].split()[5:] == ["<none>", "<none>", "<none>", "<none>"]
    assert "po" in server.kubectl("api-resources", "--api-group=").stdout


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_apply_a_realistic_manifest(server, tmp_path):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(MANIFEST)
    assert "pod/web-applied created" in server.kubectl("apply", "-f", str(manifest)).stdout
    got = server.request("GET", f"{PODS}/web-applied").json()
    container = got["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["ports"] == [{"name": "http", "containerPort": 80, "protocol": "TCP"}]
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "128Mi"}
    assert container["readinessProbe"] == {"httpGet": {"port": "http", "path": "/", "scheme": "HTTP"},
                                           "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                                           "failureThreshold": 3}
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert got["spec"]["volumes"][:2] == [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                                          {"name": "cache", "emptyDir": {}}]
    assert got["spec"]["volumes"][2]["name"].startswith("kube-api-access-")
    assert got["status"]["qosClass"] == "Guaranteed"
    # Re-applying with a new image is an allowed update.
    manifest.write_text(MANIFEST.replace("nginx:1.27", "nginx:1.28"))
    assert "pod/web-applied configured" in server.kubectl("apply", "-f", str(manifest)).stdout
    updated = server.request("GET", f"{PODS}/web-applied").json()
    assert updated["spec"]["containers"][0]["image"] == "nginx:1.28" and updated["metadata"]["generation"] == 2


def test_spec_updates_are_refused_with_kubernetes_message(server):
    create(server, "immutable")
    changed = server.request("PATCH", f"{PODS}/immutable", {"spec": {"restartPolicy": "Never"}}, MERGE)
    assert changed.status == 422
    body = changed.json()
    assert body["reason"] == "Invalid" and body["details"]["causes"][0]["field"] == "spec"
    assert body["message"].startswith(f'Pod "immutable" is invalid: spec: Forbidden: {UPDATABLE}')
    assert '- \tRestartPolicy: "Always",\n+ \tRestartPolicy: "Never",' in body["message"]
    removed = server.request("PATCH", f"{PODS}/immutable", {"spec": {"containers": None}}, MERGE).json()
    assert removed["details"]["causes"][0]["message"] == "Forbidden: pod updates may not add or remove containers"
    deadline = server.request("PATCH", f"{PODS}/immutable", {"spec": {"activeDeadlineSeconds": 60}}, MERGE)
    assert deadline.status == 200
    longer = server.request("PATCH", f"{PODS}/immutable", {"spec": {"activeDeadlineSeconds": 120}}, MERGE).json()
    assert longer["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.activeDeadlineSeconds",
                                            "message": "Invalid value: 120: must be less than or equal to previous "
                                                       "value"}]


def test_status_is_written_only_through_the_status_subresource(server):
    created = create(server, "status")
    created["status"] = {"phase": "Running"}
    replaced = server.request("PUT", f"{PODS}/status", created).json()
    assert replaced["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    status = {"status": {"phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}]}}
    written = server.request("PATCH", f"{PODS}/status/status", status, MERGE).json()
    assert written["status"]["phase"] == "Running" and written["status"]["qosClass"] == "BestEffort"
    assert written["metadata"]["generation"] == 1
    ignored = server.request("PATCH", f"{PODS}/status", {"status": {"phase": "Failed"}}, MERGE).json()
    assert ignored["status"]["phase"] == "Running"
    qos = server.request("PATCH", f"{PODS}/status/status", {"status": {"qosClass": "Guaranteed"}}, MERGE).json()
    assert qos["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "status.qosClass",
                                         "message": 'Invalid value: "Guaranteed": field is immutable'}]
    by_phase = server.request("GET", f"{PODS}?fieldSelector=status.phase=Running").json()["items"]
    assert "status" in [p["metadata"]["name"] for p in by_phase]
    by_ip = server.request("GET", f"{PODS}?fieldSelector=status.podIP=10.1.2.3").json()["items"]
    assert [p["metadata"]["name"] for p in by_ip] == ["status"]


def test_binding_assigns_a_node_once(server):
    create(server, "bound")
    assert bind(server, "bound", url_name="other").json()["message"] == ("name in URL does not match name in "
                                                                        "Binding object")
    done = bind(server, "bound")
    assert done.status == 201 and done.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                  "status": "Success", "code": 201}
    got = server.request("GET", f"{PODS}/bound").json()
    assert got["spec"]["nodeName"] == "node-1"
    assert [(c["type"], c["status"]) for c in got["status"]["conditions"]] == [("PodScheduled", "True")]
    again = bind(server, "bound", "node-2")
    assert again.status == 409
    assert again.json()["message"] == ('Operation cannot be fulfilled on pods/binding "bound": pod bound is already '
                                       'assigned to node "node-1"')
    on_node = server.request("GET", f"{PODS}?fieldSelector=spec.nodeName=node-1").json()["items"]
    assert [p["metadata"]["name"] for p in on_node] == ["bound"]
    assert bind(server, "missing").status == 404


@pytest.mark.usefixtures("kubectl_available")
def test_graceful_deletion(server):
    create(server, "unscheduled")
    gone = server.request("DELETE", f"{PODS}/unscheduled")
    assert gone.status == 200 and gone.json()["kind"] == "Pod"
    assert server.request("GET", f"{PODS}/unscheduled").status == 404
    create(server, "scheduled")
    assert bind(server, "scheduled").status == 201
    terminating = server.request("DELETE", f"{PODS}/scheduled").json()
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert server.request("GET", f"{PODS}/scheduled").json()["metadata"]["deletionTimestamp"]
    status = server.kubectl("get", "pod", "scheduled", "--no-headers").stdout.split()
    assert status[2] == "Terminating"
    out = server.kubectl("delete", "pod", "scheduled", "--grace-period=0", "--force")
    assert 'pod "scheduled" force deleted' in out.stdout
    assert server.request("GET", f"{PODS}/scheduled").status == 404


def test_eviction_respects_pod_disruption_budgets(server):
    pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}
    assert server.request("POST", pdbs, budget).status == 201
    body = pod("guarded")
    body["metadata"]["labels"] = {"app": "guarded"}
    assert server.request("POST", PODS, body).status == 201
    assert bind(server, "guarded").status == 201
    ready = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    assert server.request("PATCH", f"{PODS}/guarded/status", ready, MERGE).status == 200
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded"}}
    refused = server.request("POST", f"{PODS}/guarded/eviction", eviction)
    assert refused.status == 429
    assert refused.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.", "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget guard is still being processed by the server."}],
                    "retryAfterSeconds": 10},
        "code": 429}
    observed = {"status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1,
                           "desiredHealthy": 1, "expectedPods": 1}}
    assert server.request("PATCH", f"{pdbs}/guard/status", observed, MERGE).status == 200
    exhausted = server.request("POST", f"{PODS}/guarded/eviction", eviction).json()
    assert exhausted["details"] == {"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget "
                                                "guard needs 1 healthy pods and has 1 currently"}]}
    allowed = {"status": {"disruptionsAllowed": 1, "currentHealthy": 2, "expectedPods": 2}}
    assert server.request("PATCH", f"{pdbs}/guard/status", allowed, MERGE).status == 200
    assert server.request("POST", f"{PODS}/guarded/eviction", eviction).status == 201
    spent = server.request("GET", f"{pdbs}/guard").json()["status"]
    assert spent["disruptionsAllowed"] == 0 and "guarded" in spent["disruptedPods"]
    assert server.request("GET", f"{PODS}/guarded").json()["metadata"]["deletionTimestamp"]
    create(server, "pending")
    pending = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pending"}}
    assert server.request("POST", f"{PODS}/pending/eviction", pending).status == 201
    assert server.request("GET", f"{PODS}/pending").status == 404


@pytest.mark.usefixtures("kubectl_available")
def test_kubelet_subresources_answer_without_a_kubelet(server):
    create(server, "nokubelet")
    exec_ = server.kubectl("exec", "nokubelet", "--", "ls", check=False)
    assert exec_.returncode != 0 and "pod nokubelet does not have a host assigned" in exec_.stderr
    direct = server.request("POST", f"{PODS}/nokubelet/exec?command=ls&stdout=true")
    assert (direct.status, direct.json()["reason"]) == (400, "BadRequest")
    logs = server.kubectl("logs", "nokubelet")
    assert logs.stdout == ""
    assert bind(server, "nokubelet").status == 201
    scheduled = server.kubectl("logs", "nokubelet", check=False)
    assert 'nodes "node-1" not found' in scheduled.stderr
    wrong = server.request("GET", f"{PODS}/nokubelet/log?container=nope").json()
    assert wrong["message"] == "container nope is not valid for pod nokubelet"


def test_ephemeral_containers_subresource(server):
    create(server, "debugged")
    forbidden = pod("eph", ephemeralContainers=[{"name": "d", "image": "busybox"}])
    refused = server.request("POST", PODS, forbidden).json()
    assert refused["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "spec.ephemeralContainers",
                                             "message": "Forbidden: cannot be set on create"}]
    patch = {"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "c"}]}}
    added = server.request("PATCH", f"{PODS}/debugged/ephemeralcontainers", patch, {
        "Content-Type": "application/strategic-merge-patch+json"})
    assert added.status == 200, added.body
    container = added.json()["spec"]["ephemeralContainers"][0]
    assert container["imagePullPolicy"] == "Always" and added.json()["metadata"]["generation"] == 2
    removed = server.request("PATCH", f"{PODS}/debugged/ephemeralcontainers", {"spec": {"ephemeralContainers": []}},
                             MERGE).json()
    assert removed["details"]["causes"][0]["message"] == ('Forbidden: existing ephemeral containers "debug" may not '
                                                          "be removed\n")


def test_pod_templates(server):
    templates = "/api/v1/namespaces/default/podtemplates"
    body = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "tpl"},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}
    created = server.request("POST", templates, body)
    assert created.status == 201
    spec = created.json()["template"]["spec"]
    assert spec["restartPolicy"] == "Always" and "enableServiceLinks" not in spec
    table = server.request("GET", templates, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Containers", "Images", "Pod Labels"]
    assert table["rows"][0]["cells"] == ["tpl", "c", "x", "app=x"]
    body["metadata"]["name"] = "bad-tpl"
    body["template"]["spec"]["containers"] = []
    refused = server.request("POST", templates, body).json()
    assert refused["message"] == 'PodTemplate "bad-tpl" is invalid: template.spec.containers: Required value'


INVALID = [
    (pod("Bad_Name"), 'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 '
                      "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
                      "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
     [("FieldValueInvalid", "metadata.name")]),
    (pod("no-image", {"name": "c"}), 'Pod "no-image" is invalid: spec.containers[0].image: Required value',
     [("FieldValueRequired", "spec.containers[0].image")]),
    (pod("no-containers", containers=[]), 'Pod "no-containers" is invalid: spec.containers: Required value',
     [("FieldValueRequired", "spec.containers")]),
    (pod("dup", {"name": "c", "image": "x"}, {"name": "c", "image": "y"}),
     'Pod "dup" is invalid: spec.containers[1].name: Duplicate value: "c"',
     [("FieldValueDuplicate", "spec.containers[1].name")]),
    (pod("mount", {"name": "c", "image": "x", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}),
     'Pod "mount" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "v"',
     [("FieldValueNotFound", "spec.containers[0].volumeMounts[0].name")]),
    (pod("restart", restartPolicy="Sometimes"),
     'Pod "restart" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
     '"OnFailure", "Never"', [("FieldValueNotSupported", "spec.restartPolicy")]),
    (pod("limits", {"name": "c", "image": "x", "resources": {"limits": {"memory": "1Gi"},
                                                             "requests": {"memory": "2Gi"}}}),
     'Pod "limits" is invalid: spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or '
     "equal to memory limit of 1Gi", [("FieldValueInvalid", "spec.containers[0].resources.requests")]),
    (pod("two", {"name": "c", "image": ""}, restartPolicy="Sometimes"),
     'Pod "two" is invalid: [spec.containers[0].image: Required value, spec.restartPolicy: Unsupported value: '
     '"Sometimes": supported values: "Always", "OnFailure", "Never"]',
     [("FieldValueRequired", "spec.containers[0].image"), ("FieldValueNotSupported", "spec.restartPolicy")]),
]


@pytest.mark.parametrize(("body", "message", "causes"), INVALID)
def test_invalid_pods_are_refused(server, body, message, causes):
    refused = server.request("POST", PODS, body)
    assert refused.status == 422
    status = refused.json()
    assert (status["reason"], status["message"]) == ("Invalid", message)
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == causes
    assert status["details"]["kind"] == "Pod"


def test_malformed_quantity_is_a_bad_request(server):
    body = pod("quantity", {"name": "c", "image": "x", "resources": {"limits": {"cpu": "lots"}}})
    refused = server.request("POST", PODS, body)
    assert refused.status == 400
    assert refused.json()["message"] == ('Pod in version "v1" cannot be handled as a Pod: quantities must match the '
                                         "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_pods_in_tables_and_field_selectors(server):
    create(server, "tabled")
    table = server.request("GET", f"{PODS}/tabled", headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
    assert table["rows"][0]["cells"][:4] == ["tabled", "0/1", "Pending", "0"]
    unsupported = server.request("GET", f"{PODS}?fieldSelector=spec.image=x").json()
    assert unsupported["code"] == 400
    always = server.request("GET", f"{PODS}?fieldSelector=spec.restartPolicy=Always,spec.hostNetwork=false").json()
    assert "tabled" in [p["metadata"]["name"] for p in always["items"]]
    assert json.loads(json.dumps(always))["kind"] == "PodList"
