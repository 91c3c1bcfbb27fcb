"""networking.k8s.io/v1: Ingress (kubectl's protobuf create, status split, the default IngressClass),
IngressClass, NetworkPolicy, IPAddress and ServiceCIDR: defaults, tables, and a corpus of invalid objects
answered with Kubernetes' exact errors."""

from __future__ import annotations

import json
import time

import pytest

from conftest import Server
from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

NET = "/apis/networking.k8s.io/v1"
ING, NETPOL = f"{NET}/namespaces/default/ingresses", f"{NET}/namespaces/default/networkpolicies"
CLASSES, IPS, CIDRS = f"{NET}/ingressclasses", f"{NET}/ipaddresses", f"{NET}/servicecidrs"
MERGE = {"Content-Type": "application/merge-patch+json"}
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
WILDCARD = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
            "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. "
            "'*.example.com', regex used for validation is "
            "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
BAD_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
PORT_RANGE = "must be between 1 and 65535, inclusive"
SVC = {"service": {"name": "svc", "port": {"number": 80}}}


def obj(kind: str, name: str, spec: dict | None = None, **extra) -> dict:
    body = {"apiVersion": "networking.k8s.io/v1", "kind": kind, "metadata": {"name": name}, **extra}
    return body if spec is None else {**body, "spec": spec}


def path_rule(backend: dict | None = None, host: str = "", **path) -> dict:
    http_path = {"path": "/", "pathType": "Prefix", "backend": SVC if backend is None else backend, **path}
    return {**({"host": host} if host else {}), "http": {"paths": [http_path]}}


def ingress(name: str, *rules: dict, **spec) -> dict:
    return obj("Ingress", name, {**({"rules": list(rules)} if rules else {}), **spec})


def created(server, path: str, body: dict) -> dict:
    resp = server.request("POST", path, body)
    assert resp.status == 201, resp.body
    return resp.json()


def put(server, path: str, body: dict) -> dict:
    resp = server.request("PUT", path, body)
    assert resp.status == 200, resp.body
    return resp.json()


def causes(server, method: str, path: str, body: dict) -> list[tuple[str, str, str]]:
    resp = server.request(method, path, body)
    assert resp.status == 422, resp.body
    status = resp.json()
    assert (status["code"], status["reason"]) == (422, "Invalid")
    return [(c["field"], c["reason"], c["message"]) for c in status["details"]["causes"]]


# ---- Ingress ----

@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_ingress_sends_protobuf(server):
    out = server.kubectl("create", "ingress", "simple", "--rule=foo.com/bar=svc1:8080")
    assert "ingress.networking.k8s.io/simple created" in out.stdout
    got = json.loads(server.kubectl("get", "ing", "simple", "-o", "json").stdout)
    assert got["spec"] == {"rules": [{"host": "foo.com", "http": {"paths": [
        {"path": "/bar", "pathType": "Exact", "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}]}}]}
    assert got["status"] == {"loadBalancer": {}} and got["metadata"]["generation"] == 1
    lines = server.kubectl("get", "ing").stdout.splitlines()
    assert lines[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert next(line.split() for line in lines if line.startswith("simple "))[:4] == ["simple", "<none>", "foo.com",
                                                                                     "80"]


def test_ingress_status_is_written_only_through_status(server):
    tls = [{"hosts": ["a.example.com"], "secretName": "tls"}]
    first = created(server, ING, {**ingress("ing-status", path_rule(host="a.example.com"), tls=tls),
                                  "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}})
    assert first["status"] == {"loadBalancer": {}}
    status = {"loadBalancer": {"ingress": [{"ip": "10.0.0.9", "ports": [{"port": 443, "protocol": "TCP"}]},
                                           {"hostname": "lb.example.com"}]}}
    after = put(server, f"{ING}/ing-status/status", dict(first, status=status, spec={"defaultBackend": SVC}))
    assert after["status"] == status and after["spec"] == first["spec"] and after["metadata"]["generation"] == 1
    changed = put(server, f"{ING}/ing-status", dict(after, spec={**after["spec"], "defaultBackend": SVC},
                                                    status={}))
    assert changed["metadata"]["generation"] == 2 and changed["status"] == status
    row = server.request("GET", f"{ING}/ing-status", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert row.json()["rows"][0]["cells"][1:5] == ["<none>", "a.example.com", "10.0.0.9,lb.example.com", "80, 443"]
    bad = dict(changed, status={"loadBalancer": {"ingress": [{"ip": "1.2.3"}, {"hostname": "10.1.1.1"}]}})
    assert causes(server, "PUT", f"{ING}/ing-status/status", bad) == [
        ("status.loadBalancer.ingress[0].ip", "FieldValueInvalid",
         'Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
        ("status.loadBalancer.ingress[1].hostname", "FieldValueInvalid",
         'Invalid value: "10.1.1.1": must be a DNS name, not an IP address')]


def test_default_ingress_class(server):
    older = obj("IngressClass", "older-default", {"controller": "example.com/a"}, metadata={
        "name": "older-default", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}})
    created(server, CLASSES, older)
    assert created(server, ING, ingress("ing-d1", path_rule()))["spec"]["ingressClassName"] == "older-default"
    time.sleep(1.1)  # two defaults: v1.34 picks the newest (then the first by name), not an error
    created(server, CLASSES, dict(older, metadata={**older["metadata"], "name": "newer-default"}))
    assert created(server, ING, ingress("ing-d2", path_rule()))["spec"]["ingressClassName"] == "newer-default"
    explicit = created(server, ING, ingress("ing-d3", path_rule(), ingressClassName="mine"))
    assert explicit["spec"]["ingressClassName"] == "mine"
    legacy = ingress("ing-d4", path_rule())
    legacy["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    assert "ingressClassName" not in created(server, ING, legacy)["spec"]
    for name in ("older-default", "newer-default"):
        assert server.request("DELETE", f"{CLASSES}/{name}").status == 200


# ---- IngressClass ----

@pytest.mark.usefixtures("kubectl_available")
def test_ingressclass_defaults_table_and_immutable_controller(server):
    params = {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}
    got = created(server, CLASSES, obj("IngressClass", "ic-params", {"controller": "example.com/ic",
                                                                     "parameters": params}))
    assert got["spec"]["parameters"] == {**params, "scope": "Cluster"} and got["metadata"]["generation"] == 1
    lines = server.kubectl("get", "ingressclass").stdout.splitlines()
    assert lines[0].split() == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    row = next(line.split() for line in lines if line.startswith("ic-params "))
    assert row[:3] == ["ic-params", "example.com/ic", "IngressParameters.k8s.example.com/external-lb"]
    assert causes(server, "PUT", f"{CLASSES}/ic-params", dict(got, spec={**got["spec"], "controller": "b.io/x"})) == [
        ("spec.controller", "FieldValueInvalid", 'Invalid value: "b.io/x": field is immutable')]


# ---- NetworkPolicy ----

@pytest.mark.usefixtures("kubectl_available")
def test_networkpolicy_defaults_and_table(server):
    plain = created(server, NETPOL, obj("NetworkPolicy", "np-plain", {}))
    assert plain["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    egress = {"podSelector": {"matchLabels": {"app": "web"}}, "ingress": [{"ports": [{"port": 80}]}],
              "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                          "ports": [{"port": 53, "protocol": "UDP"}, {"port": 8000, "endPort": 8080}]}]}
    got = created(server, NETPOL, obj("NetworkPolicy", "np-egress", egress))
    assert got["spec"]["policyTypes"] == ["Ingress", "Egress"] and got["metadata"]["generation"] == 1
    assert got["spec"]["ingress"] == [{"ports": [{"port": 80, "protocol": "TCP"}]}]
    assert [p["protocol"] for p in got["spec"]["egress"][0]["ports"]] == ["UDP", "TCP"]
    lines = server.kubectl("get", "netpol").stdout.splitlines()
    assert lines[0].split() == ["NAME", "POD-SELECTOR", "AGE"]
    rows = [line.split()[:2] for line in lines[1:] if line.startswith(("np-egress ", "np-plain "))]
    assert rows == [["np-egress", "app=web"], ["np-plain", "<none>"]]


def test_networkpolicy_update_checks_the_spec_twice(server):
    got = created(server, NETPOL, obj("NetworkPolicy", "np-update", {}))
    bad = dict(got, spec={**got["spec"], "policyTypes": ["Sideways"]})
    resp = server.request("PUT", f"{NETPOL}/np-update", bad)
    cause = ("spec.policyTypes[0]", "FieldValueNotSupported",
             'Unsupported value: "Sideways": supported values: "Ingress", "Egress"')
    assert [(c["field"], c["reason"], c["message"]) for c in resp.json()["details"]["causes"]] == [cause, cause]
    # The internal type is registered in extensions first: Kubernetes names that group in a 422.
    assert resp.json()["message"] == ('NetworkPolicy.extensions "np-update" is invalid: spec.policyTypes[0]: '
                                      'Unsupported value: "Sideways": supported values: "Ingress", "Egress"')


def test_protobuf_networkpolicy(server):
    port = bytes_field(2, varint_field(1, 0) + varint_field(2, 53))
    peer = bytes_field(3, bytes_field(1, b"10.0.0.0/8") + bytes_field(2, b"10.1.0.0/16"))
    egress = bytes_field(3, bytes_field(1, port) + bytes_field(2, peer))
    spec = bytes_field(1, b"") + egress
    message = bytes_field(1, bytes_field(1, b"np-proto")) + bytes_field(2, spec)
    envelope = bytes_field(1, bytes_field(1, b"networking.k8s.io/v1") + bytes_field(2, b"NetworkPolicy"))
    resp = server.request("POST", NETPOL, b"k8s\x00" + envelope + bytes_field(2, message),
                          {"Content-Type": "application/vnd.kubernetes.protobuf", "Accept": "application/json"})
    assert resp.status == 201, resp.body
    assert resp.json()["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "egress": [
        {"ports": [{"port": 53, "protocol": "TCP"}], "to": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                                         "except": ["10.1.0.0/16"]}}]}]}


# ---- IPAddress and ServiceCIDR ----

@pytest.mark.usefixtures("kubectl_available")
def test_ipaddress_and_servicecidr(server):
    ref = {"group": "", "resource": "services", "namespace": "default", "name": "web"}
    got = created(server, IPS, obj("IPAddress", "10.96.0.10", {"parentRef": ref}))
    assert got["spec"]["parentRef"] == {"resource": "services", "namespace": "default", "name": "web"}
    rows = [line.split() for line in server.kubectl("get", "ipaddresses").stdout.splitlines()[1:]]
    assert ["10.96.0.10", "services/default/web"] in rows  # beside 10.0.0.1, the kubernetes service's
    moved = dict(got, spec={"parentRef": {**ref, "name": "other"}})
    assert causes(server, "PUT", f"{IPS}/10.96.0.10", moved) == [
        ("spec.parentRef", "FieldValueInvalid", 'Invalid value: {"Group":"","Resource":"services","Namespace":'
                                                '"default","Name":"other"}: field is immutable')]
    cidr = created(server, CIDRS, obj("ServiceCIDR", "extra", {"cidrs": ["10.100.0.0/16"]}))
    assert cidr["status"] == {} and "generation" not in cidr["metadata"]
    lines = server.kubectl("get", "servicecidrs").stdout.splitlines()
    assert lines[0].split() == ["NAME", "CIDRS", "AGE"]
    assert next(line.split() for line in lines if line.startswith("extra "))[1] == "10.100.0.0/16"
    dual = put(server, f"{CIDRS}/extra", dict(cidr, spec={"cidrs": ["10.100.0.0/16", "fd00:100::/64"]}))
    assert causes(server, "PUT", f"{CIDRS}/extra", dict(dual, spec={"cidrs": ["10.9.0.0/16", "fd00:100::/64"]})) == [
        ("spec.cidrs[0]", "FieldValueInvalid", 'Invalid value: "10.9.0.0/16": field is immutable')]
    assert causes(server, "PUT", f"{CIDRS}/extra", dict(dual, spec={"cidrs": ["10.100.0.0/16"]})) == [
        ("spec.cidrs", "FieldValueInvalid", 'Invalid value: ["10.100.0.0/16"]: field is immutable')]
    condition = {"type": "Ready", "status": "True", "reason": "Ok", "message": "",
                 "lastTransitionTime": "2025-01-01T00:00:00Z"}
    status = put(server, f"{CIDRS}/extra/status", dict(dual, spec={"cidrs": ["1.0.0.0/8"]},
                                                       metadata={**dual["metadata"], "labels": {"a": "b"}},
                                                       status={"conditions": [condition]}))
    assert status["spec"] == dual["spec"] and status["status"]["conditions"] == [condition]
    assert "labels" not in status["metadata"]  # ResetObjectMetaForStatus


# ---- invalid objects ----

INVALID = [
    ("no-rules", ING, ingress("bad-1"), [
        ("spec", "FieldValueInvalid", "Invalid value: null: either `defaultBackend` or `rules` must be specified")]),
    ("no-path-type", ING, ingress("bad-2", path_rule(pathType=None)), [
        ("spec.rules[0].http.paths[0].pathType", "FieldValueRequired", "Required value: pathType must be specified")]),
    ("path-type", ING, ingress("bad-3", path_rule(pathType="Regex")), [
        ("spec.rules[0].http.paths[0].pathType", "FieldValueNotSupported",
         'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"')]),
    ("relative", ING, ingress("bad-4", path_rule(path="foo")), [
        ("spec.rules[0].http.paths[0].path", "FieldValueInvalid", 'Invalid value: "foo": must be an absolute path')]),
    ("exact-path", ING, ingress("bad-5", path_rule(path="/a//b/..", pathType="Exact")), [
        ("spec.rules[0].http.paths[0].path", "FieldValueInvalid", "Invalid value: \"/a//b/..\": must not contain '//'"),
        ("spec.rules[0].http.paths[0].path", "FieldValueInvalid", "Invalid value: \"/a//b/..\": cannot end with '/..'")]),
    ("two-backends", ING, ingress("bad-6", path_rule({**SVC, "resource": {"kind": "Bucket", "name": "b"}})), [
        ("spec.rules[0].http.paths[0].backend", "FieldValueInvalid",
         'Invalid value: "": cannot set both resource and service backends')]),
    ("no-backend", ING, ingress("bad-7", path_rule({})), [
        ("spec.rules[0].http.paths[0].backend", "FieldValueInvalid",
         'Invalid value: "": resource or service backend is required')]),
    ("port-both", ING, ingress("bad-8", defaultBackend={"service": {"name": "s", "port": {"name": "http",
                                                                                          "number": 80}}}), [
        ("spec.defaultBackend", "FieldValueInvalid", 'Invalid value: "": cannot set both port name & port number')]),
    ("no-port", ING, ingress("bad-9", defaultBackend={"service": {"name": "Svc_1"}}), [
        ("spec.defaultBackend.service.name", "FieldValueInvalid", f'Invalid value: "Svc_1": {DNS1035}'),
        ("spec.defaultBackend", "FieldValueRequired", "Required value: port name or number is required")]),
    ("port-number", ING, ingress("bad-10", path_rule({"service": {"name": "s", "port": {"number": 70000}}})), [
        ("spec.rules[0].http.paths[0].backend.service.port.number", "FieldValueInvalid",
         f"Invalid value: 70000: {PORT_RANGE}")]),
    ("hosts", ING, ingress("bad-11", path_rule(host="1.2.3.4"), path_rule(host="*.*.foo.com")), [
        ("spec.rules[0].host", "FieldValueInvalid", 'Invalid value: "1.2.3.4": must be a DNS name, not an IP address'),
        ("spec.rules[1].host", "FieldValueInvalid", f'Invalid value: "*.*.foo.com": {WILDCARD}')]),
    ("resource", ING, ingress("bad-12", defaultBackend={"resource": {"apiGroup": "Bad_Group", "name": "a/b"}}), [
        ("spec.defaultBackend.resource.apiGroup", "FieldValueInvalid", f'Invalid value: "Bad_Group": {SUBDOMAIN}'),
        ("spec.defaultBackend.resource.kind", "FieldValueRequired", "Required value"),
        ("spec.defaultBackend.resource.name", "FieldValueInvalid", "Invalid value: \"a/b\": may not contain '/'")]),
    ("tls-class", ING, ingress("bad-13", path_rule(), tls=[{"hosts": ["*.ok.com"], "secretName": "Bad_Secret"}],
                               ingressClassName="Bad_Class"), [
        ("spec.tls[0].secretName", "FieldValueInvalid", f'Invalid value: "Bad_Secret": {SUBDOMAIN}'),
        ("spec.ingressClassName", "FieldValueInvalid", f'Invalid value: "Bad_Class": {SUBDOMAIN}')]),
    ("annotation", ING, {**ingress("bad-14", path_rule(), ingressClassName="a"), "metadata": {
        "name": "bad-14", "annotations": {"kubernetes.io/ingress.class": "nginx"}}}, [
        ("annotations.kubernetes.io/ingress.class", "FieldValueInvalid",
         'Invalid value: "nginx": must match `ingressClassName` when both are specified')]),
    ("no-paths", ING, ingress("bad-15", {"http": {}}), [
        ("spec.rules[0].http.paths", "FieldValueRequired", "Required value")]),
    ("controller", CLASSES, obj("IngressClass", "bad-ic-1", {"controller": "acme"}), [
        ("spec.controller", "FieldValueInvalid", 'Invalid value: "acme": must be a domain-prefixed path (such as '
                                                 '"acme.io/foo")')]),
    ("no-controller", CLASSES, obj("IngressClass", "bad-ic-2", {}), [
        ("spec.controller", "FieldValueRequired", "Required value")]),
    ("long-controller", CLASSES, obj("IngressClass", "bad-ic-3", {"controller": "a.io/" + "x" * 246}), [
        ("spec.controller", "FieldValueTooLong", "Too long: may not be more than 250 bytes")]),
    ("scope", CLASSES, obj("IngressClass", "bad-ic-4", {"controller": "a.io/b", "parameters": {
        "kind": "K", "name": "n", "scope": "Galaxy"}}), [
        ("spec.parameters.scope", "FieldValueNotSupported",
         'Unsupported value: "Galaxy": supported values: "Cluster", "Namespace"')]),
    ("namespace-scope", CLASSES, obj("IngressClass", "bad-ic-5", {"controller": "a.io/b", "parameters": {
        "kind": "K", "name": "n", "scope": "Namespace"}}), [
        ("spec.parameters.namespace", "FieldValueRequired", "Required value: `parameters.scope` is set to 'Namespace'")]),
    ("cluster-scope", CLASSES, obj("IngressClass", "bad-ic-6", {"controller": "a.io/b", "parameters": {
        "name": "n", "namespace": "default"}}), [
        ("spec.parameters.kind", "FieldValueRequired", "Required value"),
        ("spec.parameters.namespace", "FieldValueForbidden", "Forbidden: `parameters.scope` is set to 'Cluster'")]),
    ("ports", NETPOL, obj("NetworkPolicy", "bad-np-1", {"ingress": [{"ports": [
        {"protocol": "ICMP"}, {"port": 80, "endPort": 70}, {"port": "http", "endPort": 90}, {"endPort": 5},
        {"port": 0}]}]}), [
        ("spec.ingress[0].ports[0].protocol", "FieldValueNotSupported",
         'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'),
        ("spec.ingress[0].ports[1].endPort", "FieldValueInvalid",
         "Invalid value: 70: must be greater than or equal to `port`"),
        ("spec.ingress[0].ports[2].endPort", "FieldValueInvalid",
         "Invalid value: 90: may not be specified when `port` is non-numeric"),
        ("spec.ingress[0].ports[3].endPort", "FieldValueInvalid",
         "Invalid value: 5: may not be specified when `port` is not specified"),
        ("spec.ingress[0].ports[4].port", "FieldValueInvalid", f"Invalid value: 0: {PORT_RANGE}")]),
    ("peers", NETPOL, obj("NetworkPolicy", "bad-np-2", {"podSelector": {"matchLabels": {"app": "a b"}}, "egress": [
        {"to": [{}, {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}},
                {"ipBlock": {"cidr": "10.0.0.0/33"}},
                {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/16", "10.0.1.0/24"]}}]}]}), [
        ("spec.podSelector.matchLabels", "FieldValueInvalid", f'Invalid value: "a b": {LABEL_VALUE}'),
        ("spec.egress[0].to[0]", "FieldValueRequired", "Required value: must specify a peer"),
        ("spec.egress[0].to[1]", "FieldValueForbidden", "Forbidden: may not specify both ipBlock and another peer"),
        ("spec.egress[0].to[2].ipBlock.cidr", "FieldValueInvalid", f'Invalid value: "10.0.0.0/33": {BAD_CIDR}'),
        ("spec.egress[0].to[3].ipBlock.except[0]", "FieldValueInvalid",
         'Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`'),
        ("spec.egress[0].to[3].ipBlock.except[1]", "FieldValueInvalid",
         'Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`')]),
    ("policy-type", NETPOL, obj("NetworkPolicy", "bad-np-3", {"policyTypes": ["Ingress", "Sideways"]}), [
        ("spec.policyTypes[1]", "FieldValueNotSupported",
         'Unsupported value: "Sideways": supported values: "Ingress", "Egress"')]),
    ("policy-types", NETPOL, obj("NetworkPolicy", "bad-np-4", {"policyTypes": ["Ingress", "Egress", "Ingress"]}), [
        ("spec.policyTypes", "FieldValueInvalid",
         'Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes')]),
    ("ip-name", IPS, obj("IPAddress", "10.0.0.010", {"parentRef": {"resource": "services", "name": "a"}}), [
        ("metadata.name", "FieldValueInvalid", 'Invalid value: "10.0.0.010": must not have leading 0s')]),
    ("ip-canonical", IPS, obj("IPAddress", "2001:DB8::1", {}), [
        ("metadata.name", "FieldValueInvalid", 'Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")'),
        ("spec.parentRef", "FieldValueRequired", "Required value")]),
    ("parent-ref", IPS, obj("IPAddress", "10.0.0.11", {"parentRef": {"group": "Bad_Group", "namespace": "a%b"}}), [
        ("spec.parentRef.group", "FieldValueInvalid", f'Invalid value: "Bad_Group": {SUBDOMAIN}'),
        ("spec.parentRef.resource", "FieldValueRequired", "Required value"),
        ("spec.parentRef.name", "FieldValueRequired", "Required value"),
        ("spec.parentRef.namespace", "FieldValueInvalid", "Invalid value: \"a%b\": may not contain '%'")]),
    ("no-cidrs", CIDRS, obj("ServiceCIDR", "bad-cidr-1", {}), [
        ("spec.cidrs", "FieldValueRequired", "Required value: at least one CIDR required")]),
    ("three-cidrs", CIDRS, obj("ServiceCIDR", "bad-cidr-2", {"cidrs": ["10.0.0.0/24", "10.1.0.0/24", "fd00::/64"]}), [
        ("spec.cidrs", "FieldValueInvalid",
         'Invalid value: {"CIDRs":["10.0.0.0/24","10.1.0.0/24","fd00::/64"]}: may only hold up to 2 values')]),
    ("same-family", CIDRS, obj("ServiceCIDR", "bad-cidr-3", {"cidrs": ["10.0.0.1/24", "10.1.0.0/24"]}), [
        ("spec.cidrs[0]", "FieldValueInvalid",
         'Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length'),
        ("spec.cidrs", "FieldValueInvalid", 'Invalid value: ["10.0.0.1/24","10.1.0.0/24"]: may specify no more than '
                                            "one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")]),
]


@pytest.mark.parametrize(("path", "body", "expected"), [case[1:] for case in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_objects_are_rejected_exactly(server, path, body, expected):
    assert causes(server, "POST", path, body) == expected


def test_default_ingress_class_is_an_admission_plugin(tmp_path):
    """--disable-admission-plugins=DefaultIngressClass leaves class-less ingresses alone."""
    srv = Server(str(tmp_path), ["--disable-admission-plugins=DefaultIngressClass"]).start()
    try:
        marked = obj("IngressClass", "only-default", {"controller": "example.com/a"}, metadata={
            "name": "only-default", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}})
        created(srv, CLASSES, marked)
        assert "ingressClassName" not in created(srv, ING, ingress("ing-plain", path_rule()))["spec"]
    finally:
        srv.stop()
