"""Real-world CRDs (tests/data/crds: cert-manager Certificate, Prometheus ServiceMonitor, Gateway API
HTTPRoute, an Argo Workflow-sized schema, Crossplane's Composition with embedded resources) applied
with kubectl: each becomes Established and explainable; its objects are read back pruned and
defaulted as kube-apiserver's structural schema algorithms leave them, and invalid ones are refused
with kube-apiserver's 422 causes."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

DATA = Path(__file__).parent.parent / "data" / "crds"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CERTS = "/apis/cert-manager.io/v1/namespaces/default/certificates"
MONITORS = "/apis/monitoring.coreos.com/v1/namespaces/default/servicemonitors"
ROUTES = "/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes"
WORKFLOWS = "/apis/argoproj.io/v1alpha1/namespaces/default/workflows"
COMPOSITIONS = "/apis/apiextensions.crossplane.io/v1/compositions"
MERGE = {"Content-Type": "application/merge-patch+json"}
QUANTITY = ("'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|"
            "(\\.[0-9]+))))?$'")
BLOCKED = ("Invalid value: null: some validation rules were not checked because the object was invalid; correct the "
           "existing errors to complete validation")
NAMES = {"cert-manager-certificate": "certificates.cert-manager.io",
         "prometheus-servicemonitor": "servicemonitors.monitoring.coreos.com",
         "gateway-httproute": "httproutes.gateway.networking.k8s.io",
         "argo-workflow": "workflows.argoproj.io",
         "crossplane-composition": "compositions.apiextensions.crossplane.io"}


def established(server, name: str) -> bool:
    out = server.request("GET", f"{CRDS}/{name}")
    conditions = (out.json().get("status") or {}).get("conditions") or [] if out.status == 200 else []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def wait_for(predicate, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture(scope="module")
def corpus(server):
    """Every CRD of the corpus applied as its project documents it."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    big = server.kubectl("apply", "-f", str(DATA / "argo-workflow.yaml"), check=False)
    # The last-applied annotation of a client-side apply cannot hold a schema this size.
    assert big.returncode == 1
    assert big.stderr.strip() == ('The CustomResourceDefinition "workflows.argoproj.io" is invalid: '
                                  "metadata.annotations: Too long: may not be more than 262144 bytes")
    server.kubectl("apply", "--server-side", "-f", str(DATA / "argo-workflow.yaml"))
    for stem in NAMES:
        if stem != "argo-workflow":
            out = server.kubectl("apply", "-f", str(DATA / f"{stem}.yaml")).stdout
            assert out.strip() == f"customresourcedefinition.apiextensions.k8s.io/{NAMES[stem]} created"
    for name in NAMES.values():
        wait_for(lambda name=name: established(server, name))
    return server


def create(server, path: str, obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The created object and its Warning header(s) (one line: repeated headers fold into one)."""
    out = server.request("POST", path, obj)
    assert out.status == 201, out.body
    return out.json(), out.headers.get("warning", "")


def causes(out) -> list[tuple[str, str, str]]:
    """A 422's causes, sorted: kube-apiserver's order follows Go map iteration."""
    assert out.status == 422, out.body
    return sorted((c["field"], c["reason"], c["message"]) for c in out.json()["details"]["causes"])


def test_crds_are_established_with_their_names(corpus):
    for name in NAMES.values():
        crd = corpus.request("GET", f"{CRDS}/{name}").json()
        conditions = {c["type"]: c["reason"] for c in crd["status"]["conditions"]}
        assert conditions == {"NamesAccepted": "NoConflicts", "Established": "InitialNamesAccepted"}
        assert crd["status"]["acceptedNames"] == {k: v for k, v in crd["spec"]["names"].items()}
    routes = corpus.request("GET", f"{CRDS}/{NAMES['gateway-httproute']}").json()
    assert routes["status"]["storedVersions"] == ["v1"]
    # the two versions share one schema: the v1beta1 API serves the same route
    assert corpus.request("GET", "/apis/gateway.networking.k8s.io/v1beta1").status == 200
    listed = corpus.kubectl("api-resources", "--api-group=cert-manager.io").stdout.split("\n")[1].split()
    assert listed == ["certificates", "cert,certs", "cert-manager.io/v1", "true", "Certificate"]


@pytest.mark.parametrize(("resource", "fields"), [
    ("certificate.spec", ["issuerRef\t<Object> -required-", "secretName\t<string> -required-",
                          "Requested DNS subject alternative names."]),
    ("servicemonitor.spec.endpoints.targetPort", ["FIELD: targetPort <Object>",
                                                  "targetPort defines the name or number of the target port"]),
    ("httproute.spec.rules.filters.type", ["FIELD: type <string>", "RequestHeaderModifier"]),
    ("workflow.spec.templates.container.ports", ["containerPort\t<integer> -required-",
                                                 'Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".']),
    ("composition.spec.resources.base", ["FIELD: base <Object>", "Base is the target resource"]),
])
def test_kubectl_explain_reads_the_published_schema(corpus, resource, fields):
    kind = resource.split(".")[0]
    group = {"certificate": "cert-manager.io", "servicemonitor": "monitoring.coreos.com",
             "httproute": "gateway.networking.k8s.io", "workflow": "argoproj.io",
             "composition": "apiextensions.crossplane.io"}[kind]
    assert "\nFIELD: spec <Object>\n" in corpus.kubectl("explain", f"{kind}.spec").stdout
    out = corpus.kubectl("explain", resource).stdout
    assert out.startswith(f"GROUP:      {group}\n")
    for text in fields:
        assert text in out, out


# ---- cert-manager: pruning, printer columns, selectable fields, status subresource ----

CERT = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls"}, "spec": {
    "secretName": "web-tls", "commonName": "web.example.com", "dnsNames": ["web.example.com", "www.example.com"],
    "duration": "2160h", "renewBefore": "360h",
    "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer", "group": "cert-manager.io"},
    "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always", "curve": "P256"},
    "usages": ["digital signature", "server auth"], "secretTemplate": {"labels": {"app": "web"}},
    "subject": {"organizations": ["Example Inc"], "country": ["US"]},
    "keystores": {"pkcs12": {"create": True, "passwordSecretRef": {"name": "p12", "key": "pw"}}},
    "renewal": {"policy": "RenewBefore", "windows": [{"cron": "0 2 * * *", "windowDuration": "2h"}]}},
    "status": {"notAfter": "2030-01-01T00:00:00Z"}}


def test_certificate_is_pruned_and_its_status_dropped(corpus, tmp_path):
    path = tmp_path / "cert.yaml"
    path.write_text(yaml.safe_dump(CERT))
    out = corpus.kubectl("create", "--validate=warn", "-f", str(path))
    assert out.stdout == "certificate.cert-manager.io/web-tls created\n"
    assert out.stderr == ('Warning: unknown field "spec.privateKey.curve"\n'
                          'Warning: unknown field "spec.subject.country"\n')
    spec = json.loads(json.dumps(CERT["spec"]))
    del spec["privateKey"]["curve"], spec["subject"]["country"]
    stored = corpus.request("GET", f"{CERTS}/web-tls").json()
    assert stored["spec"] == spec and "status" not in stored


def test_certificate_columns_and_selectable_fields(corpus):
    corpus.request("PATCH", f"{CERTS}/web-tls/status", {"status": {"notAfter": "2030-01-01T00:00:00Z", "conditions": [
        {"type": "Ready", "status": "True", "message": "Certificate is up to date and has not expired"}]}}, MERGE)
    rows = corpus.kubectl("get", "certs", "web-tls", "-o", "wide").stdout.splitlines()
    assert rows[0].split() == ["NAME", "READY", "SECRET", "ISSUER", "STATUS", "EXPIRATION", "AGE"]
    assert rows[1].split()[:4] == ["web-tls", "True", "web-tls", "letsencrypt"]
    assert "Certificate is up to date and has not expired   2030-01-01T00:00:00Z" in rows[1]
    picked = corpus.kubectl("get", "certificates", "--field-selector", "spec.issuerRef.name=letsencrypt",
                            "-o", "name").stdout.split()
    assert picked == ["certificate.cert-manager.io/web-tls"]
    none = corpus.kubectl("get", "certificates", "--field-selector", "spec.issuerRef.kind=Issuer", "-o", "name")
    assert none.stdout == ""


def test_invalid_certificate_causes(corpus):
    spec = {"issuerRef": {}, "privateKey": {"algorithm": "DSA"}, "usages": ["signing", "bogus"],
            "renewBeforePercentage": "50%", "revisionHistoryLimit": 1.5, "keystores": {"jks": {}},
            "renewal": {"windows": [{"cron": "", "windowDuration": "1 hour"}]},
            "status": {"conditions": [{"type": "Ready", "status": "Maybe"}]}}
    out = corpus.request("POST", CERTS, {**CERT, "metadata": {"name": "bad"}, "spec": spec})
    assert causes(out) == [
        ("spec.issuerRef.name", "FieldValueRequired", "Required value"),
        ("spec.keystores.jks.create", "FieldValueRequired", "Required value"),
        ("spec.privateKey.algorithm", "FieldValueNotSupported",
         'Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519"'),
        ("spec.renewBeforePercentage", "FieldValueTypeInvalid",
         'Invalid value: "string": spec.renewBeforePercentage in body must be of type integer: "string"'),
        ("spec.renewal.windows[0].cron", "FieldValueInvalid",
         'Invalid value: "": spec.renewal.windows[0].cron in body should be at least 1 chars long'),
        ("spec.renewal.windows[0].windowDuration", "FieldValueInvalid",
         'Invalid value: "1 hour": spec.renewal.windows[0].windowDuration in body should match '
         "'^([0-9]+(\\.[0-9]+)?(s|m|h))+$'"),
        ("spec.revisionHistoryLimit", "FieldValueTypeInvalid",
         'Invalid value: "float64": spec.revisionHistoryLimit in body must be of type int32: "float64"'),
        ("spec.secretName", "FieldValueRequired", "Required value"),
        ("spec.usages[1]", "FieldValueNotSupported", 'Unsupported value: "bogus": supported values: "signing", '
         '"digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment", '
         '"cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", '
         '"code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", '
         '"timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"')]


# ---- ServiceMonitor: defaults inside lists and atomic maps, nulls, int-or-string ----

def test_servicemonitor_is_defaulted(corpus):
    endpoint = {"port": "metrics", "interval": "30s", "scrapeTimeout": None, "bearerTokenSecret": {"key": "token"},
                "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_name"], "targetLabel": "pod"},
                                {"action": None, "regex": "(.*)"}],
                "targetPort": 8080, "tlsConfig": {"ca": {"configMap": {"key": "ca.crt"}}, "serverName": "web"}}
    created, warnings = create(corpus, MONITORS, {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "endpoints": [endpoint],
                 "nativeHistogramMinBucketFactor": "1.1", "namespaceSelector": {"any": True}}})
    assert warnings == ""
    assert created["spec"]["endpoints"] == [{
        "port": "metrics", "interval": "30s", "bearerTokenSecret": {"key": "token", "name": ""},
        "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_name"], "targetLabel": "pod", "action": "replace"},
                        {"action": "replace", "regex": "(.*)"}],
        "targetPort": 8080, "tlsConfig": {"ca": {"configMap": {"key": "ca.crt", "name": ""}}, "serverName": "web"}}]
    named = corpus.request("PATCH", f"{MONITORS}/web", {"spec": {"nativeHistogramMinBucketFactor": 2}}, MERGE)
    assert named.json()["spec"]["nativeHistogramMinBucketFactor"] == 2


def test_invalid_servicemonitor_causes(corpus):
    out = corpus.request("POST", MONITORS, {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "bad"},
        "spec": {"endpoints": [{"interval": "5 minutes", "scheme": "ftp",
                                "relabelings": [{"action": "rewrite", "sourceLabels": ["bad-label"], "modulus": -1}]}],
                 "nativeHistogramMinBucketFactor": "lots", "sampleLimit": "many", "scrapeClass": "",
                 "scrapeProtocols": ["PrometheusText0.0.4", "PrometheusText0.0.4"]}})
    duration = "'^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'"
    relabel = "spec.endpoints[0].relabelings[0]"
    assert causes(out) == [
        ("spec.endpoints[0].interval", "FieldValueInvalid",
         f'Invalid value: "5 minutes": spec.endpoints[0].interval in body should match {duration}'),
        (f"{relabel}.action", "FieldValueNotSupported", 'Unsupported value: "rewrite": supported values: '
         '"replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod", "labelmap", "LabelMap", '
         '"labeldrop", "LabelDrop", "labelkeep", "LabelKeep", "lowercase", "Lowercase", "uppercase", '
         '"Uppercase", "keepequal", "KeepEqual", "dropequal", "DropEqual"'),
        (f"{relabel}.modulus", "FieldValueInvalid",
         f"Invalid value: -1: {relabel}.modulus in body should be greater than or equal to 0"),
        (f"{relabel}.sourceLabels[0]", "FieldValueInvalid",
         f"Invalid value: \"bad-label\": {relabel}.sourceLabels[0] in body should match '^[a-zA-Z_][a-zA-Z0-9_]*$'"),
        ("spec.endpoints[0].scheme", "FieldValueNotSupported",
         'Unsupported value: "ftp": supported values: "http", "https", "HTTP", "HTTPS"'),
        ("spec.nativeHistogramMinBucketFactor", "FieldValueInvalid",
         f'Invalid value: "lots": spec.nativeHistogramMinBucketFactor in body should match {QUANTITY}'),
        ("spec.sampleLimit", "FieldValueTypeInvalid",
         'Invalid value: "string": spec.sampleLimit in body must be of type integer: "string"'),
        ("spec.scrapeClass", "FieldValueInvalid",
         'Invalid value: "": spec.scrapeClass in body should be at least 1 chars long'),
        ("spec.scrapeProtocols[1]", "FieldValueDuplicate", 'Duplicate value: "PrometheusText0.0.4"'),
        ("spec.selector", "FieldValueRequired", "Required value")]


# ---- HTTPRoute: nested defaults and CEL validation rules ----

ROUTE = DATA / "objects" / "httproute-store.yaml"


def test_httproute_defaults(corpus):
    assert corpus.kubectl("apply", "-f", str(ROUTE)).stdout == "httproute.gateway.networking.k8s.io/store created\n"
    service = {"group": "", "kind": "Service"}
    prefix = {"type": "PathPrefix", "value": "/"}
    assert corpus.request("GET", f"{ROUTES}/store").json()["spec"] == {
        "parentRefs": [{"name": "gw", "sectionName": "https", "group": "gateway.networking.k8s.io",
                        "kind": "Gateway"}],
        "hostnames": ["store.example.com"],
        "rules": [
            {"matches": [{"path": {"value": "/api", "type": "PathPrefix"},
                          "headers": [{"name": "x-canary", "value": "true", "type": "Exact"}]}],
             "filters": [{"type": "RequestHeaderModifier",
                          "requestHeaderModifier": {"add": [{"name": "x-env", "value": "prod"}]}}],
             "backendRefs": [{"name": "api", "port": 8080, **service, "weight": 1}],
             "timeouts": {"request": "10s", "backendRequest": "5s"}},
            {"backendRefs": [{"name": "web", "port": 80, "weight": 90, **service},
                             {"name": "web-canary", "port": 80, "weight": 10, **service}],
             "matches": [{"path": prefix}]},
            {"matches": [{"path": {"type": "Exact", "value": "/old"}}],
             "filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 302}}]}]}
    beta = corpus.request("GET", ROUTES.replace("/v1/", "/v1beta1/") + "/store").json()
    assert beta["apiVersion"] == "gateway.networking.k8s.io/v1beta1" and beta["spec"]["hostnames"] == [
        "store.example.com"]
    rows = corpus.kubectl("get", "httproutes").stdout.splitlines()
    assert rows[0].split() == ["NAME", "HOSTNAMES", "AGE"] and rows[1].split()[:2] == ["store", '["store.example.com"]']


def test_httproute_validation_rules(corpus):
    rules = [{"matches": [{"path": {"type": "PathPrefix", "value": "api"}}],
              "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplaceFullPath"}}}],
              "backendRefs": [{"name": "api"}], "timeouts": {"request": "1s", "backendRequest": "2s"}},
             {"filters": [{"type": "RequestRedirect", "requestRedirect": {}}],
              "backendRefs": [{"name": "web", "port": 80}]}]
    out = corpus.request("POST", ROUTES, {
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "bad"},
        "spec": {"parentRefs": [{"name": "gw"}, {"name": "gw"}], "hostnames": ["*.Example.com"], "rules": rules}})
    hostname = "'^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"
    assert causes(out) == [
        ("spec.hostnames[0]", "FieldValueInvalid",
         f'Invalid value: "*.Example.com": spec.hostnames[0] in body should match {hostname}'),
        ("spec.parentRefs", "FieldValueInvalid", 'Invalid value: "array": sectionName must be unique when '
         "parentRefs includes 2 or more references to the same parent"),
        ("spec.rules[0].backendRefs[0]", "FieldValueInvalid",
         'Invalid value: "object": Must have port for Service reference'),
        ("spec.rules[0].filters[0].urlRewrite.path", "FieldValueInvalid",
         "Invalid value: \"object\": replaceFullPath must be specified when type is set to 'ReplaceFullPath'"),
        ("spec.rules[0].matches[0].path", "FieldValueInvalid", "Invalid value: \"object\": value must be an "
         "absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"),
        ("spec.rules[0].timeouts", "FieldValueInvalid",
         'Invalid value: "object": backendRequest timeout cannot be longer than request timeout'),
        ("spec.rules[1]", "FieldValueInvalid",
         'Invalid value: "object": RequestRedirect filter must not be used together with backendRefs')]


# ---- Argo Workflow-sized: preserve-unknown-fields regions, int-or-string, defaulted map keys ----

WORKFLOW = DATA / "objects" / "workflow-fan-out.yaml"


def test_workflow_keeps_free_form_regions(corpus):
    out = corpus.kubectl("create", "--validate=warn", "-f", str(WORKFLOW))
    assert out.stderr == 'Warning: unknown field "spec.templates[0].dag.tasks[0].retries"\n'
    sent = yaml.safe_load(WORKFLOW.read_text())["spec"]
    del sent["templates"][0]["dag"]["tasks"][0]["retries"]
    sent["templates"][1]["container"]["ports"][0]["protocol"] = "TCP"
    assert corpus.request("GET", f"{WORKFLOWS}/fan-out").json()["spec"] == sent
    corpus.request("PATCH", f"{WORKFLOWS}/fan-out", {"status": {
        "phase": "Running", "startedAt": "2024-01-01T00:00:00Z", "message": "waiting on fan"}}, MERGE)
    rows = corpus.kubectl("get", "wf").stdout.splitlines()
    assert rows[0].split() == ["NAME", "STATUS", "AGE", "MESSAGE"]
    assert rows[1].split()[:2] == ["fan-out", "Running"] and rows[1].endswith("waiting on fan")


def test_invalid_workflows(corpus):
    template = {"name": "t", "inputs": {"artifacts": [
        {"name": "a", "s3": {"bucket": "b", "key": "k"}, "git": {"repo": "r"}}]},
        "container": {"image": "i", "resources": {"limits": {"memory": "lots"}},
                      "ports": [{"containerPort": 80}, {"containerPort": 80}]}}
    body = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "bad"},
            "spec": {"templates": [template]}}
    limits = "spec.templates[0].container.resources.limits"
    assert causes(corpus.request("POST", WORKFLOWS, body)) == [
        ("spec.templates[0].container.ports[1]", "FieldValueDuplicate",
         'Duplicate value: {"containerPort":80,"protocol":"TCP"}'),
        (f"{limits}.memory", "FieldValueInvalid", f'Invalid value: "lots": {limits}.memory in body should match '
                                                  f"{QUANTITY}"),
        ("spec.templates[0].inputs.artifacts[0]", "FieldValueInvalid",
         'Invalid value: "object": at most one artifact location can be specified')]
    # a missing required field blocks the validation rules
    template["dag"] = {"tasks": [{"template": "x"}]}
    found = causes(corpus.request("POST", WORKFLOWS, body))
    assert ("<nil>", "FieldValueInvalid", BLOCKED) in found
    assert ("spec.templates[0].dag.tasks[0].name", "FieldValueRequired", "Required value") in found
    assert not any("artifact location" in message for _, _, message in found)


# ---- Composition: embedded resources, immutable fields ----

def composition(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "metadata": {"name": name},
            "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XNetwork"}, **spec}}


def test_composition_embedded_resources(corpus):
    base = {"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC", "metadata": {"labels": {"tier": "net"}},
            "spec": {"forProvider": {"region": "us-east-1", "cidrBlock": "10.0.0.0/16"}}}
    created, _ = create(corpus, COMPOSITIONS, composition(
        "vpc", resources=[{"name": "vpc", "base": {**base, "metadata": {"labels": {"tier": "net"}, "bogus": 1}},
                           "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"},
                                       {"type": "ToCompositeFieldPath", "transforms": [
                                           {"type": "math", "math": {"multiply": 2}}]}]}],
        pipeline=[{"step": "render", "functionRef": {"name": "fn"}, "input": {
            "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": [],
            "metadata": {"uid": "abc", "name": "x", "creationTimestamp": "2020-01-01T00:00:00Z"}}}]))
    assert created["spec"] == {
        "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XNetwork"}, "mode": "Resources",
        "resources": [{"name": "vpc", "base": base, "patches": [
            {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region", "type": "FromCompositeFieldPath"},
            {"type": "ToCompositeFieldPath", "transforms": [{"type": "math", "math": {"multiply": 2, "type": "Multiply"}}]}],
            "readinessChecks": [{"type": "MatchCondition", "matchCondition": {"status": "True", "type": "Ready"}}]}],
        "pipeline": [{"step": "render", "functionRef": {"name": "fn"}, "input": {
            "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": [],
            "metadata": {"creationTimestamp": "2020-01-01T00:00:00Z", "name": "x", "uid": "abc"}}}]}
    rows = corpus.kubectl("get", "compositions").stdout.splitlines()
    assert rows[0].split() == ["NAME", "XR-KIND", "XR-APIVERSION", "AGE"]
    assert rows[1].split()[:3] == ["vpc", "XNetwork", "example.org/v1"]


def test_composition_embedded_resource_errors(corpus):
    out = corpus.request("POST", COMPOSITIONS, composition("bad", resources=[
        {"base": {"apiVersion": "a/b/c", "metadata": {"name": "a/b", "labels": {"bad key!": "x"}}}},
        {"base": {"kind": "Not_A_Kind", "apiVersion": ""}}]))
    assert causes(out) == [
        # the Required error blocks the (immutability) rules
        ("<nil>", "FieldValueInvalid", BLOCKED),
        ("spec.resources[0].base.apiVersion", "FieldValueInvalid",
         'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
        ("spec.resources[0].base.kind", "FieldValueRequired", "Required value"),
        ("spec.resources[0].base.metadata.labels", "FieldValueInvalid",
         "Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
         "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
         "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("spec.resources[0].base.metadata.name", "FieldValueInvalid", "Invalid value: \"a/b\": may not contain '/'"),
        ("spec.resources[1].base.apiVersion", "FieldValueInvalid", 'Invalid value: "": must not be empty'),
        ("spec.resources[1].base.kind", "FieldValueInvalid",
         "Invalid value: \"Not_A_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label must "
         "consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with "
         "an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
         "'[a-z]([-a-z0-9]*[a-z0-9])?')")]


def test_composition_type_is_immutable(corpus):
    create(corpus, COMPOSITIONS, composition("fixed"))
    out = corpus.request("PATCH", f"{COMPOSITIONS}/fixed", {"spec": {"compositeTypeRef": {"kind": "XOther"}}}, MERGE)
    assert causes(out) == [("spec.compositeTypeRef.kind", "FieldValueInvalid",
                            'Invalid value: "string": Value is immutable')]
    ok = corpus.request("PATCH", f"{COMPOSITIONS}/fixed", {"spec": {"mode": "Pipeline"}}, MERGE)
    assert ok.status == 200 and ok.json()["metadata"]["generation"] == 2


# ---- kubectl apply: fieldValidation=Strict ----

def test_kubectl_apply_is_strict_about_unknown_fields(corpus, tmp_path):
    path = tmp_path / "strict.yaml"
    formats = [{"type": "DER"} for _ in range(11)]
    formats[2]["extra"] = formats[10]["extra"] = 1
    cert = {**CERT, "metadata": {"name": "strict"}, "spec": {**CERT["spec"], "additionalOutputFormats": formats}}
    path.write_text(yaml.safe_dump(cert))
    out = corpus.kubectl("apply", "-f", str(path), check=False)
    # the pruned paths are sorted as strings: [10] before [2]
    assert out.returncode == 1 and out.stderr == (
        f'Error from server (BadRequest): error when creating "{path}": Certificate in version "v1" cannot be '
        'handled as a Certificate: strict decoding error: unknown field "spec.additionalOutputFormats[10].extra", '
        'unknown field "spec.additionalOutputFormats[2].extra", unknown field "spec.privateKey.curve", '
        'unknown field "spec.subject.country"\n')
    # an existing object is patched: the patched object is refused
    del cert["spec"]["additionalOutputFormats"], cert["spec"]["privateKey"]["curve"], cert["spec"]["subject"]["country"]
    path.write_text(yaml.safe_dump(cert))
    assert corpus.kubectl("apply", "-f", str(path)).stdout == "certificate.cert-manager.io/strict created\n"
    cert["spec"]["subject"]["country"] = ["US"]
    path.write_text(yaml.safe_dump(cert))
    out = corpus.kubectl("apply", "-f", str(path), check=False)
    assert out.stderr.startswith('The request is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"cert-manager.io/v1')
    assert out.stderr.endswith('": strict decoding error: unknown field "spec.subject.country"\n')


def test_strict_reports_embedded_metadata_last(corpus, tmp_path):
    path = tmp_path / "comp.yaml"
    comp = composition("strict", zzz=1, resources=[{"base": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "bogus": 1}}}])
    comp["metadata"]["extra"] = True
    comp["spec"]["compositeTypeRef"]["extra"] = "x"
    path.write_text(yaml.safe_dump(comp))
    out = corpus.kubectl("apply", "-f", str(path), check=False)
    assert out.stderr == (
        f'Error from server (BadRequest): error when creating "{path}": Composition in version "v1" cannot be '
        'handled as a Composition: strict decoding error: unknown field "metadata.extra", unknown field '
        '"spec.compositeTypeRef.extra", unknown field "spec.zzz", unknown field '
        '"spec.resources[0].base.metadata.bogus"\n')
    out = corpus.kubectl("create", "--validate=warn", "-f", str(path))
    assert out.stderr.splitlines()[-1] == 'Warning: unknown field "spec.resources[0].base.metadata.bogus"'
    stored = corpus.request("GET", f"{COMPOSITIONS}/strict").json()
    assert stored["spec"]["resources"][0]["base"]["metadata"] == {"name": "cm"} and "zzz" not in stored["spec"]


def test_metadata_that_does_not_decode_is_a_bad_request(corpus):
    cert = corpus.request("POST", CERTS, {**CERT, "metadata": {"name": "m", "labels": "web"}})
    assert (cert.status, cert.json()["message"]) == (400, 'Certificate in version "v1" cannot be handled as a '
                                                          "Certificate: json: cannot unmarshal string into Go struct "
                                                          "field ObjectMeta.labels of type map[string]string")
    prefix = 'Composition in version "v1" cannot be handled as a Composition: spec.resources[0].base.'
    for base, message in (
            ({"apiVersion": 1, "kind": "ConfigMap"}, "apiVersion: Invalid value: 1: must be a string"),
            ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}},
             'metadata: Invalid value: {"name":5}: json: cannot unmarshal number into Go struct field '
             "ObjectMeta.name of type string")):
        out = corpus.request("POST", COMPOSITIONS, composition("undecodable", resources=[{"base": base}]))
        assert (out.status, out.json()["message"]) == (400, prefix + message)
