"""batch/v1 Jobs and CronJobs, autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers: what kubectl
sends (protobuf), the server-generated Job selector and labels, Kubernetes' defaults, the status
subresources, one HPA stored once and served at both versions with v1's round-trip annotations,
tables, discovery, and invalid objects answered with Kubernetes' exact errors. No job, cronjob or HPA
controller runs in this server: nothing here starts pods or scales anything."""

from __future__ import annotations

import json
import time

import pytest

from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

NS = "/apis/batch/v1/namespaces/default"
JOBS, CRONJOBS = f"{NS}/jobs", f"{NS}/cronjobs"
HPA_V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
HPA_V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
MERGE = {"Content-Type": "application/merge-patch+json"}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf", "Accept": "application/json"}
JOB_NAME, CONTROLLER_UID = "batch.kubernetes.io/job-name", "batch.kubernetes.io/controller-uid"
METRICS, CURRENT = "autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/current-metrics"
BEHAVIOR, CONDITIONS = "autoscaling.alpha.kubernetes.io/behavior", "autoscaling.alpha.kubernetes.io/conditions"
POD_SPEC = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
DEFAULT_BEHAVIOR = ('{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods",'
                    '"Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],'
                    '"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max",'
                    '"Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}')
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def job(name: str, **spec) -> dict:
    spec.setdefault("template", {"spec": dict(POD_SPEC)})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def cron_job(name: str, schedule: str = "*/5 * * * *", **spec) -> dict:
    template = {"spec": {"template": {"spec": dict(POD_SPEC, restartPolicy="OnFailure")}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": template, **spec}}


def hpa(version: str, name: str, **spec) -> dict:
    return {"apiVersion": f"autoscaling/{version}", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": dict(TARGET), "maxReplicas": 3, **spec}}


def created(server, path: str, body) -> dict:
    resp = server.request("POST", path, body)
    assert resp.status == 201, resp.body
    return resp.json()


def rejected(server, method: str, path: str, body, headers: dict | None = None) -> dict:
    resp = server.request(method, path, body, headers)
    assert resp.status == 422, resp.body
    status = resp.json()
    assert status["reason"] == "Invalid" and status["code"] == 422
    return status


def kubectl_protobuf(server, *args: str) -> str:
    """Runs kubectl verbosely: its write went out as protobuf (client-go's default for built-in kinds)."""
    proc = server.kubectl(*args, "-v=8")
    assert "Content-Type: application/vnd.kubernetes.protobuf" in proc.stderr
    return proc.stdout


def only_cause(status: dict) -> dict:
    assert len(status["details"]["causes"]) == 1, status
    return status["details"]["causes"][0]


# ---- Jobs ----

@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_job_gets_generated_selector_and_labels(server):
    assert "job.batch/kj created" in kubectl_protobuf(server, "create", "job", "kj", "--image=busybox")
    got = server.request("GET", f"{JOBS}/kj").json()
    uid = got["metadata"]["uid"]
    generated = {JOB_NAME: "kj", "job-name": "kj", CONTROLLER_UID: uid, "controller-uid": uid}
    assert got["spec"]["selector"] == {"matchLabels": {CONTROLLER_UID: uid}}
    assert got["spec"]["template"]["metadata"]["labels"] == generated
    assert got["metadata"]["labels"] == generated  # SetDefaults_Job copies the template's labels
    spec = {k: v for k, v in got["spec"].items() if k not in ("selector", "template")}
    assert spec == {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
                    "suspend": False, "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False}
    assert got["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert got["status"] == {} and got["metadata"]["generation"] == 1


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_cronjob_and_a_job_from_it(server):
    out = kubectl_protobuf(server, "create", "cronjob", "kc", "--image=busybox", "--schedule=*/5 * * * *")
    assert "cronjob.batch/kc created" in out
    cj = server.request("GET", f"{CRONJOBS}/kc").json()
    spec = {k: v for k, v in cj["spec"].items() if k != "jobTemplate"}
    assert spec == {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "suspend": False,
                    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    # The job template gets the pod defaults only: no completions, selector or backoffLimit.
    template_spec = cj["spec"]["jobTemplate"]["spec"]
    assert set(template_spec) == {"template"} and template_spec["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert "job.batch/kj2 created" in kubectl_protobuf(server, "create", "job", "--from=cronjob/kc", "kj2")
    j2 = server.request("GET", f"{JOBS}/kj2").json()
    assert j2["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    owner = j2["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("CronJob", "kc",
                                                                                cj["metadata"]["uid"], True)
    assert j2["spec"]["selector"]["matchLabels"] == {CONTROLLER_UID: j2["metadata"]["uid"]}


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_tables_short_names_and_categories(server):
    created(server, JOBS, job("tj"))
    created(server, CRONJOBS, cron_job("tc", timeZone="Europe/Paris"))
    created(server, HPA_V2, hpa("v2", "th"))
    jobs = server.kubectl("get", "jobs", "tj", "-o", "wide").stdout.splitlines()
    assert jobs[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert jobs[1].split()[:3] == ["tj", "Running", "0/1"] and jobs[1].split()[4:6] == ["c", "busybox"]
    cjs = server.kubectl("get", "cj", "tc", "-o", "wide").stdout.splitlines()
    assert cjs[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE",
                              "CONTAINERS", "IMAGES", "SELECTOR"]
    row = cjs[1].split()
    assert row[:10] == ["tc", "*/5", "*", "*", "*", "*", "Europe/Paris", "False", "0", "<none>"]
    assert row[11:] == ["c", "busybox", "<none>"]
    hpas = server.kubectl("get", "hpa", "th").stdout.splitlines()
    assert hpas[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert hpas[1].split()[:7] == ["th", "Deployment/web", "cpu:", "<unknown>/80%", "1", "3", "0"]
    everything = server.kubectl("get", "all").stdout
    assert "job.batch/tj" in everything and "cronjob.batch/tc" in everything
    assert "horizontalpodautoscaler.autoscaling/th" in everything
    resources = server.kubectl("api-resources", "--api-group=batch").stdout + \
        server.kubectl("api-resources", "--api-group=autoscaling").stdout
    assert " cj " in resources and " hpa " in resources


def proto_object(api_version: str, kind: str, message: bytes) -> bytes:
    type_meta = bytes_field(1, api_version.encode()) + bytes_field(2, kind.encode())
    return b"k8s\x00" + bytes_field(1, type_meta) + bytes_field(2, message)


def test_protobuf_job_and_response_headers(server):
    container = bytes_field(1, b"c") + bytes_field(2, b"busybox")
    pod_spec = bytes_field(2, container) + bytes_field(3, b"OnFailure")
    spec = varint_field(1, 2) + bytes_field(6, bytes_field(2, pod_spec)) + varint_field(10, 0)
    body = proto_object("batch/v1", "Job", bytes_field(1, bytes_field(1, b"pb.job")) + bytes_field(2, spec))
    resp = server.request("POST", JOBS, body, PROTOBUF)
    assert resp.status == 201, resp.body
    assert resp.headers["content-type"] == "application/json"
    assert resp.headers["warning"] == (
        '299 - "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; '
        'a DNS label is recommended: [must not contain dots]"')
    got = resp.json()
    # parallelism 2 and no completions: completions stays unset; suspend false survives the wire.
    assert got["spec"]["parallelism"] == 2 and "completions" not in got["spec"] and got["spec"]["suspend"] is False
    assert got["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert server.request("GET", f"{JOBS}?fieldSelector=status.successful=0").status == 200


def test_job_template_is_immutable_and_status_is_its_own(server):
    created(server, JOBS, job("imm"))
    changed = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    status = rejected(server, "PATCH", f"{JOBS}/imm", changed, {"Content-Type": "application/strategic-merge-patch+json"})
    cause = only_cause(status)
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "spec.template")
    assert cause["message"].endswith(": field is immutable")
    assert status["message"].startswith('Job.batch "imm" is invalid: spec.template: Invalid value: ')
    # Status goes through /status only, and its counters never go back.
    ignored = server.request("PATCH", f"{JOBS}/imm", {"status": {"active": 1}}, MERGE).json()
    assert ignored["status"] == {}
    written = server.request("PATCH", f"{JOBS}/imm/status", {"status": {"failed": 2, "active": 1}}, MERGE)
    assert written.status == 200 and written.json()["status"] == {"failed": 2, "active": 1}
    back = rejected(server, "PATCH", f"{JOBS}/imm/status", {"status": {"failed": 1}}, MERGE)
    assert only_cause(back) == {"reason": "FieldValueInvalid", "field": "status.failed",
                                "message": "Invalid value: 1: cannot decrease the failed counter"}
    suspend = server.request("PATCH", f"{JOBS}/imm", {"spec": {"suspend": True}}, MERGE).json()
    assert suspend["metadata"]["generation"] == 2


def test_a_finished_job_in_the_table(server):
    """What the job controller would write, written by hand: the table shows it as kubectl prints it."""
    created(server, JOBS, job("done"))
    finished = {"startTime": "2025-01-01T00:00:00Z", "completionTime": "2025-01-01T00:01:05Z", "succeeded": 1,
                "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}
    resp = server.request("PATCH", f"{JOBS}/done/status", {"status": finished}, MERGE)
    assert resp.status == 200, resp.body
    table = server.request("GET", f"{JOBS}/done", headers={"Accept": TABLE}).json()
    assert table["rows"][0]["cells"][:4] == ["done", "Complete", "1/1", "65s"]
    unfinished = rejected(server, "PATCH", f"{JOBS}/done/status", {"status": {"completionTime": None}}, MERGE)
    assert only_cause(unfinished) == {"reason": "FieldValueRequired", "field": "status.completionTime",
                                      "message": "Required value: completionTime is required for Complete jobs"}


def test_deleting_a_job_without_a_policy_orphans_its_pods(server):
    """batch/v1's default garbage collection policy is Orphan: the `orphan` finalizer, which the garbage
    collector removes once dependents are released."""
    created(server, JOBS, job("orphaning"))
    deleting = server.request("DELETE", f"{JOBS}/orphaning")
    assert deleting.status == 200
    meta = deleting.json()["metadata"]
    assert meta["finalizers"] == ["orphan"] and meta["deletionTimestamp"]
    deadline = time.time() + 20
    while server.request("GET", f"{JOBS}/orphaning").status != 404:
        assert time.time() < deadline, "the garbage collector did not finish the deletion"
        time.sleep(0.1)
    created(server, JOBS, job("background"))
    gone = server.request("DELETE", f"{JOBS}/background", {"propagationPolicy": "Background"})
    assert gone.status == 200 and gone.json()["kind"] == "Status"


@pytest.mark.parametrize(("body", "field", "reason", "message"), [
    (job("rp", template={"spec": {"containers": [{"name": "c", "image": "x"}]}}),
     "spec.template.spec.restartPolicy", "FieldValueRequired", 'Required value: valid values: "OnFailure", "Never"'),
    (job("neg", parallelism=-1), "spec.parallelism", "FieldValueInvalid",
     "Invalid value: -1: must be greater than or equal to 0"),
    (job("mode", completionMode="Sometimes"), "spec.completionMode", "FieldValueNotSupported",
     'Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'),
    (job("manual", manualSelector=True, selector={"matchLabels": {"app": "x"}}), "spec.template.metadata.labels",
     "FieldValueInvalid", "Invalid value: null: `selector` does not match template `labels`"),
    (job("ix", completionMode="Indexed", parallelism=2), "spec.completions", "FieldValueRequired",
     "Required value: when completion mode is Indexed"),
    (job("pfp", podFailurePolicy={"rules": [{"action": "FailJob"}]}), "spec.podFailurePolicy.rules[0]",
     "FieldValueInvalid", "Invalid value: specifying one of OnExitCodes and OnPodConditions is required"),
])
def test_invalid_jobs(server, body, field, reason, message):
    status = rejected(server, "POST", JOBS, body)
    assert only_cause(status) == {"reason": reason, "field": field, "message": message}
    assert status["message"] == f'Job.batch "{body["metadata"]["name"]}" is invalid: {field}: {message}'


def test_generated_labels_and_selector_the_user_overrides_are_rejected(server):
    body = job("clash", template={"metadata": {"labels": {"job-name": "other"}}, "spec": dict(POD_SPEC)})
    cause = only_cause(rejected(server, "POST", JOBS, body))
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "spec.template.metadata.labels[job-name]")
    assert cause["message"].startswith('Invalid value: {"batch.kubernetes.io/controller-uid":"')
    assert cause["message"].endswith('"job-name":"other"}: must be \'clash\'')
    wrong = job("wrong", selector={"matchLabels": {CONTROLLER_UID: "not-the-uid"}})
    causes = rejected(server, "POST", JOBS, wrong)["details"]["causes"]
    assert causes[0] == {"reason": "FieldValueInvalid", "field": "spec.selector", "message":
                         'Invalid value: {"matchLabels":{"batch.kubernetes.io/controller-uid":"not-the-uid"}}: '
                         "`selector` not auto-generated"}
    assert causes[1]["field"] == "spec.template.metadata.labels"
    assert causes[1]["message"].endswith("`selector` does not match template `labels`")


# ---- CronJobs ----

@pytest.mark.parametrize(("schedule", "message"), [
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("@every 5x", 'failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("CRON_TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
])
def test_invalid_schedules(server, schedule, message):
    status = rejected(server, "POST", CRONJOBS, cron_job("bad", schedule))
    assert only_cause(status) == {"reason": "FieldValueInvalid", "field": "spec.schedule",
                                  "message": f"Invalid value: {json.dumps(schedule)}: {message}"}


def test_valid_schedules_and_cronjob_rules(server):
    for i, schedule in enumerate(("@hourly", "@every 90m", "0 9 * jan-mar mon-fri", "15,45 */2 1-15/3 * ?")):
        created(server, CRONJOBS, cron_job(f"ok{i}", schedule))
    for body, field, message in (
        (cron_job("tz", timeZone="Mars/Olympus"), "spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time '
                                                                   "zone Mars/Olympus"),
        (cron_job("tz", timeZone=""), "spec.timeZone", 'Invalid value: "": timeZone must be nil or non-empty string'),
        (cron_job("c" * 53), "metadata.name", f'Invalid value: "{"c" * 53}": must be no more than 52 characters'),
        (cron_job("cp", concurrencyPolicy="Sometimes"), "spec.concurrencyPolicy",
         'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'),
    ):
        cause = only_cause(rejected(server, "POST", CRONJOBS, body))
        assert (cause["field"], cause["message"]) == (field, message)
    selector = cron_job("sel")
    selector["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    assert only_cause(rejected(server, "POST", CRONJOBS, selector)) == {
        "reason": "FieldValueInvalid", "field": "spec.jobTemplate.spec.selector",
        "message": 'Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated'}
    status = server.request("PATCH", f"{CRONJOBS}/ok0/status",
                            {"status": {"lastScheduleTime": "2025-01-01T00:00:00Z"}}, MERGE).json()
    assert status["status"] == {"lastScheduleTime": "2025-01-01T00:00:00Z"} and status["spec"]["schedule"] == "@hourly"


# ---- HorizontalPodAutoscalers ----

def test_hpa_created_at_v2_read_at_v1(server):
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                            "averageValue": "500Mi"}}}
    cpu = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
    out = created(server, HPA_V2, hpa("v2", "from-v2", metrics=[memory, cpu],
                                      behavior={"scaleDown": {"stabilizationWindowSeconds": 60}}))
    assert out["spec"]["minReplicas"] == 1 and out["status"] == {"desiredReplicas": 0, "currentMetrics": None}
    assert out["spec"]["behavior"]["scaleUp"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    v1 = server.request("GET", f"{HPA_V1}/from-v2").json()
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                          "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 60}
    assert v1["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    assert v1["metadata"]["annotations"] == {
        METRICS: '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]',
        BEHAVIOR: DEFAULT_BEHAVIOR}
    # A v1 client writing the object back loses nothing.
    v1["spec"]["maxReplicas"] = 7
    assert server.request("PUT", f"{HPA_V1}/from-v2", v1).status == 200
    v2 = server.request("GET", f"{HPA_V2}/from-v2").json()
    assert v2["spec"]["metrics"] == [memory, cpu] and v2["spec"]["maxReplicas"] == 7
    assert v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert "annotations" not in v2["metadata"]


def test_hpa_created_at_v1_read_at_v2(server):
    out = created(server, HPA_V1, hpa("v1", "from-v1"))
    assert out["spec"] == {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                           "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 80}
    v2 = server.request("GET", f"{HPA_V2}/from-v1").json()
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert v2["status"] == {"desiredReplicas": 0, "currentMetrics": None}
    # Status written at v1 is v2's CPU metric; v2's conditions and metrics come back to v1 as annotations.
    written = server.request("PATCH", f"{HPA_V1}/from-v1/status", {"status": {
        "currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40}}, MERGE).json()
    assert written["status"] == {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40}
    assert server.request("GET", f"{HPA_V2}/from-v1").json()["status"]["currentMetrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}]
    condition = {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
                 "reason": "ReadyForNewScale"}
    server.request("PATCH", f"{HPA_V2}/from-v1/status", {"status": {"conditions": [condition]}}, MERGE)
    notes = server.request("GET", f"{HPA_V1}/from-v1").json()["metadata"]["annotations"]
    assert notes[CONDITIONS] == json.dumps([condition], separators=(",", ":"))
    assert notes[CURRENT] == ('[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,'
                              '"currentAverageValue":"0"}}]')


def test_hpa_discovery(server):
    group = server.request("GET", "/apis/autoscaling").json()
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    hashes = set()
    for version in ("v1", "v2"):
        resources = server.request("GET", f"/apis/autoscaling/{version}").json()["resources"]
        main = next(r for r in resources if r["name"] == "horizontalpodautoscalers")
        assert (main["shortNames"], main["categories"]) == (["hpa"], ["all"])
        hashes.add(main["storageVersionHash"])
        assert next(r for r in resources if r["name"] == "horizontalpodautoscalers/status")["verbs"] == [
            "get", "patch", "update"]
    assert len(hashes) == 1  # one storage version behind both
    batch = {r["name"]: r for r in server.request("GET", "/apis/batch/v1").json()["resources"]}
    assert set(batch) == {"jobs", "jobs/status", "cronjobs", "cronjobs/status"}
    assert batch["cronjobs"]["shortNames"] == ["cj"] and batch["jobs"]["categories"] == ["all"]


@pytest.mark.parametrize(("version", "spec", "field", "reason", "message"), [
    ("v1", {"targetCPUUtilizationPercentage": 0}, "spec.metrics[0].resource.target.averageUtilization",
     "FieldValueInvalid", "Invalid value: 0: must be greater than 0"),
    ("v1", {"scaleTargetRef": {"kind": "Deployment", "name": "web"}}, "spec.scaleTargetRef.apiVersion",
     "FieldValueInvalid", 'Invalid value: "": apiVersion must specify API group'),
    ("v2", {"minReplicas": 4}, "spec.maxReplicas", "FieldValueInvalid",
     "Invalid value: 3: must be greater than or equal to `minReplicas`"),
    ("v2", {"metrics": [{"type": "Pods"}]}, "spec.metrics[0].pods", "FieldValueRequired",
     "Required value: must populate information for the given metric source"),
    ("v2", {"behavior": {"scaleUp": {"selectPolicy": "Most"}}}, "spec.behavior.scaleUp.selectPolicy",
     "FieldValueNotSupported", 'Unsupported value: "Most": supported values: "Disabled", "Max", "Min"'),
])
def test_invalid_hpas(server, version, spec, field, reason, message):
    """Field paths are the stored version's, whichever version the request used (as Kubernetes validates
    the internal type)."""
    path = HPA_V1 if version == "v1" else HPA_V2
    status = rejected(server, "POST", path, hpa(version, "bad", **spec))
    assert only_cause(status) == {"reason": reason, "field": field, "message": message}
    assert status["message"] == f'HorizontalPodAutoscaler.autoscaling "bad" is invalid: {field}: {message}'


def test_hpa_bad_quantity_is_a_decoding_error(server):
    metric = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue",
                                                                            "averageValue": "lots"}}}
    resp = server.request("POST", HPA_V2, hpa("v2", "q", metrics=[metric]))
    assert resp.status == 400 and resp.json()["message"] == (
        'HorizontalPodAutoscaler in version "v2" cannot be handled as a HorizontalPodAutoscaler: quantities must '
        "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_autoscale(server):
    served = server.request("GET", "/apis/apps/v1")
    if served.status != 200 or "deployments" not in {r["name"] for r in served.json()["resources"]}:
        pytest.skip("apps/v1 deployments are not served by this server yet: kubectl autoscale needs its target")
    server.kubectl("create", "deployment", "auto", "--image=nginx")
    out = kubectl_protobuf(server, "autoscale", "deployment", "auto", "--min=2", "--max=5", "--cpu-percent=70")
    assert "horizontalpodautoscaler.autoscaling/auto autoscaled" in out
    got = server.request("GET", f"{HPA_V1}/auto").json()["spec"]
    assert got == {"scaleTargetRef": {"kind": "Deployment", "name": "auto", "apiVersion": "apps/v1"},
                   "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}
