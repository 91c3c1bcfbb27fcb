"""apps/v1: deployments, replicasets, statefulsets, daemonsets and controllerrevisions. kubectl create,
get, scale and `get all`; Kubernetes' defaults; the status subresource and metadata.generation; the
autoscaling/v1 scale subresource; and a corpus of invalid objects. No controller acts on these
objects here (that is kube-controller-manager): status stays as written."""

from __future__ import annotations

import pytest

APPS = "/apis/apps/v1/namespaces/default"
MERGE = {"Content-Type": "application/merge-patch+json"}
NO_MATCH = "`selector` does not match template `labels`"
STS_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                 "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
CONFLICT = ('Operation cannot be fulfilled on deployments.apps "scaled": the object has been modified; please '
            "apply your changes to the latest version and try again")
TEMPLATE_SPEC = {"containers": [{"image": "nginx", "imagePullPolicy": "Always", "name": "nginx", "resources": {},
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File"}],
                 "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "securityContext": {}, "terminationGracePeriodSeconds": 30}


def workload(kind: str, name: str, labels: dict | None = None, template_spec: dict | None = None, **spec) -> dict:
    labels = {"app": name} if labels is None else labels
    pod = template_spec or {"containers": [{"name": "nginx", "image": "nginx"}]}
    body = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": pod}}}
    body["spec"].update(spec)
    return body


def create(server, resource: str, body: dict) -> dict:
    created = server.request("POST", f"{APPS}/{resource}", body)
    assert created.status == 201, created.body
    return created.json()


def header(server, *args: str) -> list[str]:
    return server.kubectl("get", *args).stdout.splitlines()[0].split()


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_deployment_gets_kubernetes_defaults(server):
    out = server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-v=8")
    assert "deployment.apps/web created" in out.stdout
    assert "Content-Type: application/vnd.kubernetes.protobuf" in out.stderr  # kubectl sent protobuf
    got = server.request("GET", f"{APPS}/deployments/web").json()
    assert got["metadata"]["generation"] == 1 and got["metadata"]["labels"] == {"app": "web"}
    assert got["spec"] == {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": TEMPLATE_SPEC},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600}
    assert got["status"] == {}  # no controller: nothing reports progress


def test_workload_defaults(server):
    rs = create(server, "replicasets", workload("ReplicaSet", "defaults-rs"))
    assert rs["spec"]["replicas"] == 1 and rs["status"] == {"replicas": 0}
    sts = create(server, "statefulsets", workload("StatefulSet", "defaults-sts", volumeClaimTemplates=[
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]))
    assert {k: sts["spec"][k] for k in ("replicas", "podManagementPolicy", "updateStrategy", "revisionHistoryLimit",
                                        "persistentVolumeClaimRetentionPolicy", "serviceName")} == {
        "replicas": 1, "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10, "serviceName": "",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}}
    assert sts["spec"]["volumeClaimTemplates"] == [{
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}]
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    ds = create(server, "daemonsets", workload("DaemonSet", "defaults-ds"))
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    assert ds["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                            "numberReady": 0}
    recreate = create(server, "deployments", workload("Deployment", "defaults-recreate", strategy={"type": "Recreate"}))
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_columns(server):
    create(server, "deployments", workload("Deployment", "cols", replicas=3))
    create(server, "replicasets", workload("ReplicaSet", "cols", replicas=2))
    create(server, "statefulsets", workload("StatefulSet", "cols", replicas=2))
    owner = create(server, "daemonsets", workload("DaemonSet", "cols", template_spec={
        "containers": [{"name": "agent", "image": "busybox"}], "nodeSelector": {"disk": "ssd"}}))
    ref = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "cols", "uid": owner["metadata"]["uid"],
           "controller": True}
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 3, "data": {"spec": {}},
                "metadata": {"name": "cols-1", "ownerReferences": [ref]}}
    create(server, "controllerrevisions", revision)
    assert header(server, "deploy") == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert header(server, "deploy", "-o", "wide") == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS",
                                                      "IMAGES", "SELECTOR"]
    assert server.kubectl("get", "deploy", "cols", "--no-headers", "-o", "wide").stdout.split()[:4] == [
        "cols", "0/3", "0", "0"]
    assert header(server, "rs") == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert server.kubectl("get", "rs", "cols", "--no-headers").stdout.split()[:4] == ["cols", "2", "0", "0"]
    assert header(server, "rs", "-o", "wide")[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert header(server, "sts") == ["NAME", "READY", "AGE"]
    assert header(server, "sts", "-o", "wide") == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert server.kubectl("get", "sts", "cols", "--no-headers").stdout.split()[:2] == ["cols", "0/2"]
    assert header(server, "ds") == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE",
                                    "SELECTOR", "AGE"]
    row = server.kubectl("get", "ds", "cols", "--no-headers", "-o", "wide").stdout.split()
    assert row[:7] == ["cols", "0", "0", "0", "0", "0", "disk=ssd"] and row[8:] == ["agent", "busybox", "app=cols"]
    assert header(server, "controllerrevisions") == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert server.kubectl("get", "controllerrevisions", "cols-1", "--no-headers").stdout.split()[:3] == [
        "cols-1", "daemonset.apps/cols", "3"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_all_lists_workloads(server):
    for resource, kind in (("deployments", "Deployment"), ("replicasets", "ReplicaSet"),
                           ("statefulsets", "StatefulSet"), ("daemonsets", "DaemonSet")):
        create(server, resource, workload(kind, "all-web"))
    out = server.kubectl("get", "all").stdout
    for kind in ("deployment", "replicaset", "statefulset", "daemonset"):
        assert f"{kind}.apps/all-web" in out
    assert "controllerrevision" not in out  # not in the "all" category


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_scale_goes_through_the_scale_subresource(server):
    create(server, "deployments", workload("Deployment", "scaled", replicas=2))
    assert "deployment.apps/scaled scaled" in server.kubectl("scale", "deployment", "scaled", "--replicas=5").stdout
    got = server.request("GET", f"{APPS}/deployments/scaled").json()
    assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 2
    scale_entry = [e for e in got["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert scale_entry[0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}} and scale_entry[0]["apiVersion"] == "apps/v1"
    scale = server.request("GET", f"{APPS}/deployments/scaled/scale").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 5} and scale["status"] == {"replicas": 0, "selector": "app=scaled"}
    assert scale["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]


@pytest.mark.usefixtures("kubectl_available")
def test_names_that_are_not_dns_labels_warn(server):
    out = server.kubectl("create", "deployment", "web.v1", "--image=nginx")
    assert "deployment.apps/web.v1 created" in out.stdout
    assert ("Warning: metadata.name: this is used in Pod names and hostnames, which can result in surprising "
            "behavior; a DNS label is recommended: [must not contain dots]") in out.stderr


def test_scale_subresource_rules(server):
    create(server, "deployments", workload("Deployment", "scaled-rules"))
    url = f"{APPS}/deployments/scaled-rules/scale"
    scale = server.request("GET", url).json()
    scale["spec"]["replicas"] = -1
    bad = server.request("PUT", url, scale)
    assert bad.status == 422 and bad.json()["message"] == (
        'Scale.autoscaling "scaled-rules" is invalid: spec.replicas: Invalid value: -1: must be greater than or '
        "equal to 0")
    scale["spec"]["replicas"], scale["metadata"]["resourceVersion"] = 3, "1"
    stale = server.request("PUT", url, scale)
    assert stale.status == 409 and stale.json()["reason"] == "Conflict"
    assert stale.json()["message"] == CONFLICT.replace('"scaled"', '"scaled-rules"')
    del scale["metadata"]["resourceVersion"]
    assert server.request("PUT", url, scale).json()["spec"] == {"replicas": 3}
    discovery = server.request("GET", "/apis/apps/v1").json()["resources"]
    entry = next(r for r in discovery if r["name"] == "deployments/scale")
    assert (entry["group"], entry["version"], entry["kind"], entry["verbs"]) == ("autoscaling", "v1", "Scale",
                                                                                ["get", "patch", "update"])
    for resource, kind in (("replicasets", "ReplicaSet"), ("statefulsets", "StatefulSet")):
        create(server, resource, workload(kind, f"scaled-{resource}"))
        patched = server.request("PATCH", f"{APPS}/{resource}/scaled-{resource}/scale", {"spec": {"replicas": 4}},
                                 MERGE)
        assert patched.status == 200 and patched.json()["spec"] == {"replicas": 4}
        assert server.request("GET", f"{APPS}/{resource}/scaled-{resource}").json()["spec"]["replicas"] == 4
    assert server.request("GET", f"{APPS}/daemonsets/defaults-ds/scale").status == 404
    assert server.request("GET", f"{APPS}/deployments/missing/scale").status == 404


def test_status_is_written_only_through_status_and_spec_bumps_generation(server):
    created = create(server, "deployments", workload("Deployment", "split"))
    url = f"{APPS}/deployments/split"
    created["status"] = {"replicas": 7}
    created["metadata"]["labels"] = {"tier": "front"}
    updated = server.request("PUT", url, created).json()
    assert updated["status"] == {} and updated["metadata"]["generation"] == 1  # labels are not spec
    status = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
              "updatedReplicas": 1}
    body = dict(updated, status=status, spec=dict(updated["spec"], replicas=9))
    body["metadata"] = dict(updated["metadata"], labels={"tier": "back"})
    written = server.request("PUT", f"{url}/status", body).json()
    assert written["status"] == status and written["spec"]["replicas"] == 1
    assert written["metadata"]["labels"] == {"tier": "front"} and written["metadata"]["generation"] == 1
    scaled = server.request("PATCH", url, {"spec": {"minReadySeconds": 5}}, MERGE).json()
    assert scaled["metadata"]["generation"] == 2 and scaled["status"] == status
    annotated = server.request("PATCH", url, {"metadata": {"annotations": {"note": "x"}}}, MERGE).json()
    assert annotated["metadata"]["generation"] == 3  # a Deployment's annotations go to its ReplicaSets
    too_ready = server.request("PATCH", f"{url}/status", {"status": {"readyReplicas": 2}}, MERGE).json()
    assert too_ready["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "status.readyReplicas",
                                               "message": "Invalid value: 2: cannot be greater than status.replicas"}]


def test_daemonset_template_generation_and_statefulset_status(server):
    create(server, "daemonsets", workload("DaemonSet", "gen"))
    url = f"{APPS}/daemonsets/gen"
    template = {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}
    changed = server.request("PATCH", url, template, MERGE).json()
    assert changed["metadata"]["generation"] == 2
    assert changed["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    other = server.request("PATCH", url, {"spec": {"minReadySeconds": 3}}, MERGE).json()
    assert other["metadata"]["generation"] == 3
    assert other["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    bad = server.request("PATCH", url, {"metadata": {"annotations": {
        "deprecated.daemonset.template.generation": "x"}}}, MERGE)
    assert bad.status == 400
    create(server, "statefulsets", workload("StatefulSet", "st-status"))
    surl = f"{APPS}/statefulsets/st-status/status"
    ok = server.request("PATCH", surl, {"status": {"replicas": 2, "readyReplicas": 2, "collisionCount": 2}}, MERGE)
    assert ok.json()["status"] == {"replicas": 2, "readyReplicas": 2, "collisionCount": 2, "availableReplicas": 0}
    bad = server.request("PATCH", surl, {"status": {"collisionCount": 1, "availableReplicas": 3}}, MERGE).json()
    assert bad["message"] == (
        'StatefulSet.apps "st-status" is invalid: [status.availableReplicas: Invalid value: 3: cannot be greater '
        "than status.replicas, status.availableReplicas: Invalid value: 3: cannot be greater than "
        "status.readyReplicas, status.collisionCount: Invalid value: 1: cannot be decremented]")


def test_replicaset_field_selector(server):
    create(server, "replicasets", workload("ReplicaSet", "fs-rs"))
    listed = server.request("GET", f"{APPS}/replicasets?fieldSelector=status.replicas%3D0").json()["items"]
    assert "fs-rs" in [i["metadata"]["name"] for i in listed]
    assert server.request("GET", f"{APPS}/replicasets?fieldSelector=status.replicas%3D1").json()["items"] == []


def test_update_rules(server):
    created = create(server, "deployments", workload("Deployment", "immutable"))
    moved = dict(created, spec=dict(created["spec"], selector={"matchLabels": {"app": "other"}}))
    moved["spec"]["template"] = {"metadata": {"labels": {"app": "other"}}, "spec": created["spec"]["template"]["spec"]}
    bad = server.request("PUT", f"{APPS}/deployments/immutable", moved).json()
    assert bad["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.selector",
                                         "message": 'Invalid value: {"matchLabels":{"app":"other"}}: field is '
                                                    "immutable"}]
    create(server, "statefulsets", workload("StatefulSet", "fixed", serviceName="svc"))
    renamed = server.request("PATCH", f"{APPS}/statefulsets/fixed", {"spec": {"serviceName": "other"}}, MERGE)
    assert renamed.status == 422
    assert renamed.json()["message"] == f'StatefulSet.apps "fixed" is invalid: spec: Forbidden: {STS_FORBIDDEN}'
    allowed = server.request("PATCH", f"{APPS}/statefulsets/fixed", {"spec": {"replicas": 3, "minReadySeconds": 2}},
                             MERGE)
    assert allowed.status == 200 and allowed.json()["metadata"]["generation"] == 2
    revision = create(server, "controllerrevisions", {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                                                      "metadata": {"name": "rev"}, "data": {"a": 1}, "revision": 1})
    assert revision["revision"] == 1
    changed = server.request("PATCH", f"{APPS}/controllerrevisions/rev", {"data": {"a": 2}}, MERGE).json()
    assert changed["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "data",
                                             "message": 'Invalid value: {"a":2}: field is immutable'}]


def _strategy(**rolling) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": rolling}


def _no_selector(kind: str, name: str) -> dict:
    body = workload(kind, name)
    del body["spec"]["selector"]
    return body


PERCENT = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
           "regex used for validation is '[0-9]+%')")
INVALID = [
    ("deployments", _no_selector("Deployment", "bad-a"), [
        ("FieldValueRequired", "spec.selector", "Required value"),
        ("FieldValueInvalid", "spec.template.metadata.labels", f'Invalid value: {{"app":"bad-a"}}: {NO_MATCH}')]),
    ("deployments", workload("Deployment", "bad-b", selector={"matchLabels": {"app": "x"}}), [
        ("FieldValueInvalid", "spec.template.metadata.labels", f'Invalid value: {{"app":"bad-b"}}: {NO_MATCH}')]),
    ("deployments", workload("Deployment", "bad-c", selector={}), [
        ("FieldValueInvalid", "spec.selector", "Invalid value: {}: empty selector is invalid for deployment")]),
    ("deployments", workload("Deployment", "bad-d", replicas=-1), [
        ("FieldValueInvalid", "spec.replicas", "Invalid value: -1: must be greater than or equal to 0")]),
    ("deployments", workload("Deployment", "bad-e", template_spec={
        "containers": [{"name": "c", "image": "nginx"}], "restartPolicy": "Never"}), [
        ("FieldValueNotSupported", "spec.template.spec.restartPolicy",
         'Unsupported value: "Never": supported values: "Always"')]),
    ("deployments", workload("Deployment", "bad-f", strategy={"type": "Recreate", "rollingUpdate": {}}), [
        ("FieldValueForbidden", "spec.strategy.rollingUpdate",
         "Forbidden: may not be specified when strategy `type` is 'Recreate'")]),
    ("deployments", workload("Deployment", "bad-g", strategy=_strategy(maxUnavailable=0, maxSurge=0)), [
        ("FieldValueInvalid", "spec.strategy.rollingUpdate.maxUnavailable",
         "Invalid value: 0: may not be 0 when `maxSurge` is 0")]),
    ("deployments", workload("Deployment", "bad-h", strategy=_strategy(maxUnavailable="120%", maxSurge="abc")), [
        ("FieldValueInvalid", "spec.strategy.rollingUpdate.maxSurge", f'Invalid value: "abc": {PERCENT}'),
        ("FieldValueInvalid", "spec.strategy.rollingUpdate.maxUnavailable",
         'Invalid value: "120%": must not be greater than 100%')]),
    ("deployments", workload("Deployment", "bad-i", strategy={"type": "BlueGreen"}), [
        ("FieldValueNotSupported", "spec.strategy", 'Unsupported value: {"Type":"BlueGreen","RollingUpdate":null}: '
                                                    'supported values: "Recreate", "RollingUpdate"')]),
    ("deployments", workload("Deployment", "bad-j", minReadySeconds=10, progressDeadlineSeconds=5), [
        ("FieldValueInvalid", "spec.progressDeadlineSeconds", "Invalid value: 5: must be greater than minReadySeconds")]),
    ("deployments", workload("Deployment", "bad-k", template_spec={"containers": []}), [
        ("FieldValueRequired", "spec.template.spec.containers", "Required value")]),
    ("replicasets", workload("ReplicaSet", "bad-l", template_spec={
        "containers": [{"name": "c", "image": "nginx"}], "activeDeadlineSeconds": 5}), [
        ("FieldValueForbidden", "spec.template.spec.activeDeadlineSeconds",
         "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported")]),
    ("replicasets", workload("ReplicaSet", "bad-m", selector={}), [
        ("FieldValueInvalid", "spec.selector", "Invalid value: {}: empty selector is invalid for deployment")]),
    ("statefulsets", workload("StatefulSet", "bad-n", podManagementPolicy="Random"), [
        ("FieldValueInvalid", "spec.podManagementPolicy",
         "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'")]),
    ("statefulsets", workload("StatefulSet", "bad-o", persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"}), [
        ("FieldValueNotSupported", "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
         'Unsupported value: "Keep": supported values: "Retain", "Delete"')]),
    ("statefulsets", workload("StatefulSet", "bad-p", updateStrategy={"type": "OnDelete",
                                                                      "rollingUpdate": {"partition": 2}}), [
        ("FieldValueInvalid", "spec.updateStrategy.rollingUpdate",
         'Invalid value: {"Partition":2,"MaxUnavailable":null}: only allowed for updateStrategy \'RollingUpdate\'')]),
    ("statefulsets", workload("StatefulSet", "bad-q", updateStrategy=_strategy(maxUnavailable=0)), [
        ("FieldValueInvalid", "spec.updateStrategy.rollingUpdate.maxUnavailable", "Invalid value: 0: cannot be 0")]),
    ("statefulsets", workload("StatefulSet", "bad.r"), [
        ("FieldValueInvalid", "metadata.name", 'Invalid value: "bad.r": must not contain dots')]),
    ("statefulsets", workload("StatefulSet", "bad-s", ordinals={"start": -1}), [
        ("FieldValueInvalid", "spec.ordinals.start", "Invalid value: -1: must be greater than or equal to 0")]),
    ("daemonsets", _no_selector("DaemonSet", "bad-t"), [
        ("FieldValueInvalid", "spec.template.metadata.labels", f'Invalid value: {{"app":"bad-t"}}: {NO_MATCH}')]),
    ("daemonsets", workload("DaemonSet", "bad-u", updateStrategy=_strategy(maxSurge=1)), [
        ("FieldValueInvalid", "spec.updateStrategy.rollingUpdate.maxSurge",
         "Invalid value: 1: may not be set when maxUnavailable is non-zero")]),
    ("daemonsets", workload("DaemonSet", "bad-v", updateStrategy=_strategy(maxUnavailable=0, maxSurge=0)), [
        ("FieldValueRequired", "spec.updateStrategy.rollingUpdate.maxUnavailable",
         "Required value: cannot be 0 when maxSurge is 0")]),
    ("daemonsets", workload("DaemonSet", "bad-w", updateStrategy={"type": "Sometimes"}), [
        ("FieldValueNotSupported", "spec.updateStrategy", 'Unsupported value: {"Type":"Sometimes","RollingUpdate":'
                                                          'null}: supported values: "RollingUpdate", "OnDelete"')]),
    ("controllerrevisions", {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "bad-x"},
                             "revision": -1}, [
        ("FieldValueRequired", "data", "Required value: data is mandatory"),
        ("FieldValueInvalid", "revision", "Invalid value: -1: must be greater than or equal to 0")]),
]


@pytest.mark.parametrize(("resource", "body", "causes"), INVALID, ids=[b["metadata"]["name"] for _, b, _ in INVALID])
def test_invalid_objects_are_rejected(server, resource, body, causes):
    got = server.request("POST", f"{APPS}/{resource}", body)
    assert got.status == 422, got.body
    status = got.json()
    assert status["reason"] == "Invalid" and status["details"]["kind"] == body["kind"]
    assert status["details"]["group"] == "apps" and status["details"]["name"] == body["metadata"]["name"]
    assert [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]] == causes
    fields = [f"{f}: {m}" for _, f, m in causes]
    detail = fields[0] if len(fields) == 1 else "[" + ", ".join(fields) + "]"
    assert status["message"] == f'{body["kind"]}.apps "{body["metadata"]["name"]}" is invalid: {detail}'
