"""The invalid-manifest corpus (tests/manifests/invalid/): each manifest is refused with the status code,
reason, message and causes (field, reason, message) that a real kube-apiserver answers.

A file with one document is created (POST). A file with several documents creates all but the last; the
last, when it names an object created before, is a merge patch of that object and is sent as the PUT of the
merged object (an update that must be refused: immutable fields). The answers were recorded on kube-apiserver
v1.20.2 by tests/reference/record.py (tests/data/reference/invalid-v1.20.2.json); where v1.34 validates
differently, V134 below gives the v1.34 answer and why. A few files also go through `kubectl create -f`.
"""

from __future__ import annotations

import copy
import json
import pathlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from test_reference_defaults import PLURALS, collection_path

Object = dict[str, Any]
TESTS = pathlib.Path(__file__).resolve().parents[1]
CORPUS = TESTS / "manifests" / "invalid"
RECORDED = TESTS / "data" / "reference" / "invalid-v1.20.2.json"
KUBECTL_CASES = ("pod-duplicate-container-names", "deployment-selector-mismatch", "service-ports-out-of-range",
                 "configmap-key-invalid", "job-restart-policy", "ingress-paths-invalid")


def load_cases() -> dict[str, list[Object]]:
    cases = {}
    for path in sorted(CORPUS.glob("*.yaml")):
        with open(path) as f:
            cases[path.stem] = [doc for doc in yaml.safe_load_all(f) if doc]
    return cases


def item_path(obj: Object) -> str:
    return f"{collection_path(obj)}/{obj['metadata']['name']}"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _same(a: Object, b: Object) -> bool:
    return (a["kind"], a["metadata"].get("name")) == (b["kind"], b["metadata"].get("name"))


def _update(request: Callable[..., Any], path: str, patch: Object) -> Any:
    """PUT the live object with `patch` merged in, again when a controller wrote it meanwhile (409)."""
    for _ in range(5):
        resp = request("PUT", path, merge_patch(request("GET", path).json(), patch))
        if resp.status != 409:
            break
    return resp


def run_case(request: Callable[..., Any], docs: list[Object]) -> tuple[int, Any]:
    """Create the setup documents, send the last one, clean up; the last answer."""
    *setup, final = docs
    created: list[Object] = []
    try:
        for doc in setup:
            resp = request("POST", collection_path(doc), doc)
            assert resp.status == 201, (doc["metadata"], resp.body)
            created.append(resp.json())
        before = next((obj for obj in created if _same(obj, final)), None)
        if before is None:
            resp = request("POST", collection_path(final), final)
            if resp.status == 201:  # accepted by mistake: do not leave it behind
                created.append(resp.json())
        else:
            resp = _update(request, item_path(before), final)
        return resp.status, resp.json()
    finally:
        for obj in reversed(created):
            request("DELETE", item_path(obj))


# --- v1.34 versus the v1.20 recording -------------------------------------------------------------

JSON = "v1.34 renders a bad value that is not a string or number as JSON (field.Error.ErrorBody; internal " \
       "types keep their Go field names), where v1.20 printed it with %#v"


@dataclass(frozen=True)
class Edit:
    """How v1.34's answer differs from the recorded v1.20 one: text replaced in the message and the causes'
    messages, causes whose field was renamed, and causes whose reason changed (by field)."""
    reason: str
    replace: tuple[tuple[str, str], ...] = ()
    cause_reasons: tuple[tuple[str, str], ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    patterns: tuple[tuple[str, str], ...] = ()  # regular expressions, for what v1.20 printed at random
    causes: tuple[tuple[str, str, str], ...] = ()  # v1.34's causes (field, reason, message) when they differ


def _json(old: str, new: str) -> Edit:
    return Edit(JSON, ((old, new),))


SELECTOR = 'v1.LabelSelector{{MatchLabels:map[string]string{{{0}}}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}'
V134: dict[str, Edit] = {
    "daemonset-selector-immutable": _json(SELECTOR.format('"app":"agent", "v":"1"'),
                                          '{"matchLabels":{"app":"agent","v":"1"}}'),
    "deployment-selector-immutable": _json(SELECTOR.format('"app":"web", "tier":"front"'),
                                           '{"matchLabels":{"app":"web","tier":"front"}}'),
    "daemonset-update-strategy": _json('apps.DaemonSetUpdateStrategy{Type:"AllAtOnce", RollingUpdate:'
                                       '(*apps.RollingUpdateDaemonSet)(nil)}', '{"Type":"AllAtOnce","RollingUpdate":null}'),
    "deployment-strategy-invalid": _json('apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:'
                                         '(*apps.RollingUpdateDeployment)(nil)}',
                                         '{"Type":"BlueGreen","RollingUpdate":null}'),
    "statefulset-enums": _json('apps.StatefulSetUpdateStrategy{Type:"Canary", RollingUpdate:'
                               '(*apps.RollingUpdateStatefulSetStrategy)(nil)}', '{"Type":"Canary","RollingUpdate":null}'),
    "deployment-missing-selector": _json('map[string]string{"app":"web"}', '{"app":"web"}'),
    "deployment-selector-mismatch": _json('map[string]string{"app":"api"}', '{"app":"api"}'),
    "replicationcontroller-selector-mismatch": _json('map[string]string{"app":"api"}', '{"app":"api"}'),
    "job-manual-selector": _json('map[string]string{"job":"b"}', '{"job":"b"}'),
    "deployment-rolling-zero": _json('intstr.IntOrString{Type:0, IntVal:0, StrVal:""}', "0"),
    "replicaset-selector-mismatch": _json(
        'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{'
        'v1.LabelSelectorRequirement{Key:"app", Operator:"Contains", Values:[]string{"web"}}}}',
        '{"matchExpressions":[{"key":"app","operator":"Contains","values":["web"]}]}'),
    "pdb-both-fields": Edit(
        JSON, (('intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}', '"150%"'),),
        patterns=((r"policy\.PodDisruptionBudgetSpec\{[^}]*\}",
                   '{"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":"150%",'
                   '"UnhealthyPodEvictionPolicy":null}'),)),
    "clusterrole-rule-invalid": _json('[]string{"healthz"}', '["healthz"]'),
    "pod-env-name-invalid": Edit(
        "v1.34 accepts any printable ASCII but '=' in env var names (RelaxedEnvironmentVariableValidation, GA)",
        (("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and "
          "must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
          "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
          "a valid environment variable name must consist only of printable ASCII characters other than '='"),)),
    "csidriver-immutable": Edit(
        "v1.34 lets some CSIDriver spec fields change and checks the others one by one (upstream names the "
        "field attachedRequired)",
        causes=(("spec.attachedRequired", "FieldValueInvalid", "Invalid value: false: field is immutable"),)),
    "service-nodeport-type-mismatch": Edit(
        "v1.34 also refuses externalTrafficPolicy on a service that is not externally accessible",
        causes=(("spec.ports[0].nodePort", "FieldValueForbidden", "Forbidden: may not be used when `type` is "
                 "'ClusterIP'"),
                ("spec.externalTrafficPolicy", "FieldValueInvalid",
                 'Invalid value: "Local": may only be set for externally-accessible services'))),
    "pod-tolerations": _json('core.Toleration{Key:"a", Operator:"Exists", Value:"x", Effect:"", TolerationSeconds:'
                             '(*int64)(nil)}',
                             '{"Key":"a","Operator":"Exists","Value":"x","Effect":"","TolerationSeconds":null}'),
    "pv-missing-capacity": _json("core.ResourceList(nil)", "null"),
    "role-rule-invalid": _json('[]string{"/healthz"}', '["/healthz"]'),
    "rolebinding-roleref-immutable": _json(
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}',
        '{"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}'),
    "service-clusterip-immutable": _json('[]string{"10.0.0.201"}', '["10.0.0.201"]'),
    "service-ports-unnamed": _json(
        'core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:'
        'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
        '{"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}'),
    "resourcequota-invalid": _json('[]core.ResourceQuotaScope{"Sometimes"}', '["Sometimes"]'),
    "limitrange-min-over-max": Edit(JSON, tuple(
        (f'resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:0}}, d:resource.infDecAmount{{Dec:'
         f'(*inf.Dec)(nil)}}, s:"{text}", Format:"{fmt}"}}', f'"{text}"')
        for value, text, fmt in ((1073741824, "1Gi", "BinarySI"), (536870912, "512Mi", "BinarySI"),
                                 (2, "2", "DecimalSI"), (1, "1", "DecimalSI")))),
    "statefulset-forbidden-update": Edit(
        "v1.34 lets more StatefulSet spec fields change (ordinals, persistentVolumeClaimRetentionPolicy, "
        "minReadySeconds) and names them",
        (("'replicas', 'template', and 'updateStrategy' are forbidden",
          "'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
          "'minReadySeconds' are forbidden"),)),
    "cronjob-schedule-invalid": Edit(
        "v1.34 parses schedules with robfig/cron/v3, whose error differs",
        (("Expected exactly 5 fields, found 3: every five minutes",
          "expected exactly 5 fields, found 3: [every five minutes]"),)),
    "lease-invalid": Edit("the wording was fixed upstream (it reads so by v1.31, with LeaseCandidate)",
                          (("must to greater or equal than 0", "must be greater than or equal to 0"),)),
    "namespace-name-invalid": Edit(
        "v1.34's IsDNS1123Label says why a valid subdomain is not a label",
        (("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
          "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')", "must not contain dots"),)),
    "networkpolicy-invalid": Edit(
        "v1.34 validates CIDRs with IsValidCIDRForLegacyField and its message",
        (('"10.0.0.0/33": not a valid CIDR',
          '"10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'),)),
    "pvc-enums": Edit("v1.34 also supports the ReadWriteOncePod access mode (GA v1.29)",
                      (('"ReadWriteOnce"', '"ReadWriteOnce", "ReadWriteOncePod"'),)),
    "pod-enums": Edit(
        "v1.34 reports an unknown terminationMessagePolicy as NotSupported",
        (("Invalid value: \"Verbose\": must be 'File' or 'FallbackToLogsOnError'",
          'Unsupported value: "Verbose": supported values: "File", "FallbackToLogsOnError"'),),
        (("spec.containers[0].terminationMessagePolicy", "FieldValueNotSupported"),)),
    "pod-requests-over-limits": Edit("v1.34 names the limit in the message",
                                     (("must be less than or equal to cpu limit", "must be less than or equal to "
                                       "cpu limit of 1"),)),
    "priorityclass-value-immutable": Edit("v1.34 names the field by its JSON name, `value`",
                                          (("Value: Forbidden", "value: Forbidden"),), fields=(("Value", "value"),)),
    "deployment-replicas-wrong-type": Edit(
        "v1.34 decodes with sigs.k8s.io/json (encoding/json errors) where v1.20 used json-iterator",
        (("v1.Deployment.Spec: v1.DeploymentSpec.Replicas: readUint32: unexpected character: \ufffd, error found in "
          "#10 byte of ...|plicas\": \"three\", \"s|..., bigger context ...|a\": {\"name\": \"wrong-type\"}, \"spec\": "
          "{\"replicas\": \"three\", \"selector\": {\"matchLabels\": {\"app\": \"web\"}|...",
          "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),)),
}
# Causes listed in Go map iteration order (labels, annotations, data keys, resource lists): any order.
UNORDERED = {"configmap-key-invalid", "limitrange-min-over-max", "pod-requests-over-limits", "resourcequota-invalid",
             "pod-label-syntax", "pod-annotation-syntax", "service-selector-syntax"}
# Where only the head (and tail) of the message is compared, with why.
GO_DIFF = "the rest is a go-cmp diff of the internal Go structs, not reproduced exactly here"
RELAXED: dict[str, tuple[str, str, str]] = {
    "pod-update-spec": (
        'Pod "immutable-spec" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
        "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
        "it was previously negative)\n  core.PodSpec{\n", "  }\n",
        "v1.34 names more mutable fields; " + GO_DIFF),
    "pvc-spec-immutable": (
        'PersistentVolumeClaim "fixed-claim" is invalid: spec: Forbidden: spec is immutable after creation except '
        "resources.requests and volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{\n",
        "  }\n", "v1.34 also lets volumeAttributesClassName change (GA v1.34); " + GO_DIFF),
    "job-template-immutable": (
        'Job.batch "fixed-template" is invalid: spec.template: Invalid value: ', ": field is immutable",
        "the bad value is the whole internal core.PodTemplateSpec, JSON with Go field names in v1.34; this "
        "server renders its v1 JSON"),
}


def _edited(value: Any, edit: Edit) -> Any:
    if isinstance(value, str):
        for old, new in edit.replace:
            value = value.replace(old, new)
        for pattern, new in edit.patterns:
            value = re.sub(pattern, new, value)
        return value
    if isinstance(value, dict):
        return {k: _edited(v, edit) if k in ("message", "body", "details", "causes") else v for k, v in value.items()}
    if isinstance(value, list):
        return [_edited(v, edit) for v in value]
    return value


def expected(name: str) -> dict[str, Any]:
    """The v1.20 answer with the v1.34 edits above applied."""
    with open(RECORDED) as f:
        want = json.load(f)["results"][name]
    edit = V134.get(name)
    if edit is not None:
        want = _edited(want, edit)
        reasons, fields = dict(edit.cause_reasons), dict(edit.fields)
        for cause in (want["body"].get("details") or {}).get("causes") or []:
            cause["reason"] = reasons.get(cause["field"], cause["reason"])
            cause["field"] = fields.get(cause["field"], cause["field"])
        if edit.causes:
            want["body"]["details"]["causes"] = [{"field": f, "message": m, "reason": r} for f, r, m in edit.causes]
            want["body"]["message"] = _rendered(want["body"])
    return want


def _rendered(body: Object) -> str:
    """StatusError's message from its causes, in their order."""
    details, causes = body["details"], body["details"]["causes"]
    kind = f'{details["kind"]}.{details["group"]}' if details.get("group") else details["kind"]
    errs = [f'{c["field"]}: {c["message"]}' for c in causes]
    listed = errs[0] if len(errs) == 1 else f'[{", ".join(errs)}]'
    return f'{kind} "{details["name"]}" is invalid: {listed}'


def assert_same_answer(name: str, status: int, body: Object) -> None:
    want = expected(name)
    assert status == want["status"], body
    if name not in UNORDERED and name not in RELAXED:
        assert body == want["body"]
        return
    got_rest = {k: v for k, v in body.items() if k not in ("message", "details")}
    assert got_rest == {k: v for k, v in want["body"].items() if k not in ("message", "details")}
    details, want_details = body["details"], want["body"]["details"]
    assert {k: v for k, v in details.items() if k != "causes"} == \
        {k: v for k, v in want_details.items() if k != "causes"}
    if name in RELAXED:
        head, tail, _ = RELAXED[name]
        assert body["message"].startswith(head) and body["message"].endswith(tail), body["message"]
        assert [(c["field"], c["reason"]) for c in details["causes"]] == \
            [(c["field"], c["reason"]) for c in want_details["causes"]]
        return
    key = lambda c: (c["field"], c["reason"], c["message"])  # noqa: E731
    assert sorted(details["causes"], key=key) == sorted(want_details["causes"], key=key)
    assert body["message"] == _rendered(body)


def test_recording_covers_the_corpus():
    with open(RECORDED) as f:
        recorded = json.load(f)
    assert recorded["reference"]["version"].startswith("v1.20.")
    assert set(recorded["results"]) == set(load_cases())
    assert all(result["status"] >= 400 for result in recorded["results"].values())
    assert set(PLURALS) >= {doc["kind"] for docs in load_cases().values() for doc in docs}


@pytest.mark.parametrize("name", sorted(load_cases()))
def test_invalid_manifest_is_refused_as_kubernetes_does(server, name):
    status, body = run_case(server.request, load_cases()[name])
    assert_same_answer(name, status, body)


def kubectl_error(body: Object) -> str:
    """How kubectl prints a 422 (cmdutil.checkErr: the causes, one per line when several)."""
    details = body["details"]
    prefix = f'The {details["kind"]} "{details["name"]}" is invalid: '
    errs = [f'{c["field"]}: {c["message"]}' for c in details["causes"]]
    return prefix + errs[0] + "\n" if len(errs) == 1 else prefix + "\n" + "".join(f"* {e}\n" for e in errs)


@pytest.mark.usefixtures("kubectl_available")
@pytest.mark.parametrize("name", KUBECTL_CASES)
def test_kubectl_create_prints_the_kubernetes_error(server, name):
    path = CORPUS / f"{name}.yaml"
    proc = server.kubectl("create", "-f", str(path), check=False)
    assert proc.returncode == 1
    want = expected(name)["body"]
    if name in UNORDERED:  # the causes' order is not the recorded one
        lines = sorted(proc.stderr.splitlines())
        assert lines == sorted(kubectl_error(want).splitlines()), proc.stderr
    else:
        assert proc.stderr == kubectl_error(want)
