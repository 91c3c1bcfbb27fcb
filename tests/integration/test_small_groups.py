"""coordination.k8s.io, node.k8s.io, discovery.k8s.io and certificates.k8s.io (v1): CRUD, defaults,
printer columns, CSR requestor and approval, protobuf bodies, and invalid objects rejected with
Kubernetes' code, reason, field and message."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
RUNTIMECLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
MERGE = {"Content-Type": "application/merge-patch+json"}
PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}
DNS_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                 "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def csr_pem(common_name: str = "alice") -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


REQUEST = csr_pem()


def lease(name: str, **spec) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


def runtimeclass(name: str, handler: str = "runc", **extra) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
            "handler": handler, **extra}


def endpointslice(name: str, address_type: str = "IPv4", addresses=("10.0.0.1",), **extra) -> dict:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": name},
            "addressType": address_type, "endpoints": [{"addresses": list(addresses)}], **extra}


def csr(name: str, signer: str = "example.com/signer", usages=("client auth",), **spec) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": REQUEST, "signerName": signer, "usages": list(usages), **spec}}


def invalid_cause(resp, reason: str, field_path: str, message: str) -> None:
    body = resp.json()
    assert resp.status == 422 and body["reason"] == "Invalid", body
    assert {"reason": reason, "field": field_path, "message": message} in body["details"]["causes"], body


# ---- coordination.k8s.io/v1 Lease ----

def test_lease_crud_and_update_rules(server):
    created = server.request("POST", LEASES, lease("lease-a", holderIdentity="node-1", leaseDurationSeconds=40,
                                                   strategy="OldestEmulationVersion"))
    assert created.status == 201, created.body
    body = created.json()
    assert body["spec"] == {"holderIdentity": "node-1", "leaseDurationSeconds": 40}  # gated field dropped
    unconditional = server.request("PUT", f"{LEASES}/lease-a", lease("lease-a", holderIdentity="node-2"))
    invalid_cause(unconditional, "FieldValueInvalid", "metadata.resourceVersion",
                  'Invalid value: "": must be specified for an update')
    body["spec"]["holderIdentity"] = "node-2"
    assert server.request("PUT", f"{LEASES}/lease-a", body).json()["spec"]["holderIdentity"] == "node-2"
    put_created = server.request("PUT", f"{LEASES}/lease-b", lease("lease-b", holderIdentity="node-3"))
    assert put_created.status == 201
    assert server.request("DELETE", f"{LEASES}/lease-b").status == 200
    assert server.request("GET", f"{LEASES}/lease-b").status == 404


@pytest.mark.parametrize(("spec", "field_path", "message"), [
    ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0"),
    ({"leaseTransitions": -1}, "spec.leaseTransitions", "Invalid value: -1: must be greater than or equal to 0"),
])
def test_invalid_lease(server, spec, field_path, message):
    invalid_cause(server.request("POST", LEASES, lease("lease-bad", **spec)), "FieldValueInvalid", field_path,
                  message)


def test_lease_protobuf(server):
    spec = bytes_field(1, b"proto-holder") + varint_field(2, 15)
    message = bytes_field(1, bytes_field(1, b"lease-proto")) + bytes_field(2, spec)
    body = b"k8s\x00" + bytes_field(1, bytes_field(1, b"coordination.k8s.io/v1") + bytes_field(2, b"Lease")) + \
        bytes_field(2, message)
    created = server.request("POST", LEASES, body, PROTOBUF)
    assert created.status == 201, created.body
    assert created.json()["spec"] == {"holderIdentity": "proto-holder", "leaseDurationSeconds": 15}


# ---- node.k8s.io/v1 RuntimeClass ----

def test_runtimeclass_crud_and_canonical_quantities(server):
    created = server.request("POST", RUNTIMECLASSES, runtimeclass(
        "rc-a", overhead={"podFixed": {"cpu": "1000m", "memory": "1.5Gi"}},
        scheduling={"nodeSelector": {"kubernetes.io/os": "linux"}, "tolerations": [{"operator": "Exists"}]}))
    assert created.status == 201, created.body
    assert created.json()["overhead"] == {"podFixed": {"cpu": "1", "memory": "1536Mi"}}
    changed = server.request("PATCH", f"{RUNTIMECLASSES}/rc-a", {"handler": "kata"}, MERGE)
    invalid_cause(changed, "FieldValueInvalid", "handler", 'Invalid value: "kata": field is immutable')
    relabeled = server.request("PATCH", f"{RUNTIMECLASSES}/rc-a", {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert relabeled.status == 200
    assert server.request("DELETE", f"{RUNTIMECLASSES}/rc-a").status == 200


@pytest.mark.parametrize(("extra", "reason", "field_path", "message"), [
    ({"handler": "Bad_Handler"}, "FieldValueInvalid", "handler", f'Invalid value: "Bad_Handler": {DNS_LABEL_MSG}'),
    ({"overhead": {"podFixed": {"cpu": "-1"}}}, "FieldValueInvalid", "overhead.limits[cpu]",
     'Invalid value: "-1": must be greater than or equal to 0'),
    ({"overhead": {"podFixed": {"foo": "1"}}}, "FieldValueInvalid", "overhead.limits[foo]",
     'Invalid value: "foo": must be a standard resource for containers'),
    ({"overhead": {"podFixed": {"example.com/gpu": "500m"}}}, "FieldValueInvalid",
     "overhead.limits[example.com/gpu]", 'Invalid value: "500m": must be an integer'),
    ({"overhead": {"podFixed": {"hugepages-2Mi": "2Mi"}}}, "FieldValueForbidden", "overhead",
     "Forbidden: HugePages require cpu or memory"),
    ({"scheduling": {"tolerations": [{"key": "", "operator": "Equal"}]}}, "FieldValueInvalid",
     "scheduling.tolerations[0].operator",
     'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and '
     'all keys"'),
    ({"scheduling": {"tolerations": [{"key": "k", "operator": "In"}]}}, "FieldValueNotSupported",
     "scheduling.tolerations[0].operator", 'Unsupported value: "In": supported values: "Equal", "Exists"'),
    ({"scheduling": {"tolerations": [{"key": "k", "tolerationSeconds": 5, "effect": "NoSchedule"}]}},
     "FieldValueInvalid", "scheduling.tolerations[0].effect",
     "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"),
    ({"scheduling": {"tolerations": [{"key": "k", "effect": "NoExecute"}, {"key": "k", "effect": "NoExecute"}]}},
     "FieldValueDuplicate", "scheduling.tolerations[1]", 'Duplicate value: {"key":"k","effect":"NoExecute"}'),
    ({"scheduling": {"nodeSelector": {"bad key": "x"}}}, "FieldValueInvalid", "scheduling.nodeSelector",
     "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
     "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
])
def test_invalid_runtimeclass(server, extra, reason, field_path, message):
    invalid_cause(server.request("POST", RUNTIMECLASSES, runtimeclass("rc-bad", **extra)), reason, field_path,
                  message)


def test_runtimeclass_bad_quantity_fails_decoding(server):
    resp = server.request("POST", RUNTIMECLASSES, runtimeclass("rc-q", overhead={"podFixed": {"cpu": "1x"}}))
    assert resp.status == 400 and resp.json()["message"] == (
        'RuntimeClass in version "v1" cannot be handled as a RuntimeClass: quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


# ---- discovery.k8s.io/v1 EndpointSlice ----

def test_endpointslice_defaults_generation_and_immutable_type(server):
    created = server.request("POST", SLICES, endpointslice("es-a", ports=[{"port": 80}]))
    assert created.status == 201, created.body
    body = created.json()
    assert body["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]
    assert body["endpoints"] == [{"addresses": ["10.0.0.1"], "conditions": {}}]
    assert body["metadata"]["generation"] == 1
    moved = server.request("PATCH", f"{SLICES}/es-a", {"endpoints": [{"addresses": ["10.0.0.2"]}]}, MERGE).json()
    assert moved["metadata"]["generation"] == 2
    retyped = server.request("PATCH", f"{SLICES}/es-a", {"addressType": "IPv6"}, MERGE)
    invalid_cause(retyped, "FieldValueInvalid", "addressType", 'Invalid value: "IPv6": field is immutable')


def test_endpointslice_warnings(server):
    resp = server.request("POST", SLICES, endpointslice("es-fqdn", "FQDN", ["example.com"]))
    assert resp.status == 201
    assert resp.headers["warning"] == '299 - "spec.addressType: FQDN endpoints are deprecated"'


@pytest.mark.parametrize(("slice_", "reason", "field_path", "message"), [
    (endpointslice("es-b", "IPv5"), "FieldValueNotSupported", "addressType",
     'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'),
    (endpointslice("es-b", addresses=()), "FieldValueRequired", "endpoints[0].addresses",
     "Required value: must contain at least 1 address"),
    (endpointslice("es-b", addresses=["10.0.0"]), "FieldValueInvalid", "endpoints[0].addresses[0]",
     'Invalid value: "10.0.0": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
    (endpointslice("es-b", addresses=["fd00::1"]), "FieldValueInvalid", "endpoints[0].addresses[0]",
     'Invalid value: "fd00::1": must be an IPv4 address'),
    (endpointslice("es-b", addresses=["127.0.0.1"]), "FieldValueInvalid", "endpoints[0].addresses[0]",
     'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    (endpointslice("es-b", "FQDN", ["nodots"]), "FieldValueInvalid", "endpoints[0].addresses[0]",
     'Invalid value: "nodots": should be a domain with at least two segments separated by dots'),
    (endpointslice("es-b", addresses=[f"10.0.{i // 250}.{i % 250 + 1}" for i in range(101)]),
     "FieldValueTooMany", "endpoints[0].addresses", "Too many: 101: must have at most 100 items"),
    (endpointslice("es-b", ports=[{"port": 80, "protocol": "HTTP"}]), "FieldValueNotSupported",
     "ports[0].protocol", 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
    (endpointslice("es-b", ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81}]), "FieldValueDuplicate",
     "ports[1].name", 'Duplicate value: "a"'),
    (endpointslice("es-b", ports=[{"name": "Web", "port": 80}]), "FieldValueInvalid", "ports[0].name",
     f'Invalid value: "Web": {DNS_LABEL_MSG}'),
])
def test_invalid_endpointslice(server, slice_, reason, field_path, message):
    invalid_cause(server.request("POST", SLICES, slice_), reason, field_path, message)


def test_endpointslice_too_many_endpoints(server):
    resp = server.request("POST", SLICES, {**endpointslice("es-many"), "endpoints": [{"addresses": ["10.1.0.1"]}] * 1001})
    invalid_cause(resp, "FieldValueTooMany", "endpoints", "Too many: 1001: must have at most 1000 items")


def test_endpointslice_protobuf(server):
    endpoint = bytes_field(1, b"10.2.0.1") + bytes_field(2, varint_field(1, 1))
    port = bytes_field(1, b"http") + bytes_field(2, b"TCP") + varint_field(3, 8080)
    message = bytes_field(1, bytes_field(1, b"es-proto")) + bytes_field(4, b"IPv4") + bytes_field(2, endpoint) + \
        bytes_field(3, port)
    body = b"k8s\x00" + bytes_field(1, bytes_field(1, b"discovery.k8s.io/v1") + bytes_field(2, b"EndpointSlice")) + \
        bytes_field(2, message)
    created = server.request("POST", SLICES, body, PROTOBUF)
    assert created.status == 201, created.body
    out = created.json()
    assert out["endpoints"] == [{"addresses": ["10.2.0.1"], "conditions": {"ready": True}}]
    assert out["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]


# ---- certificates.k8s.io/v1 CertificateSigningRequest ----

def test_csr_records_requestor_and_ignores_spec_and_status_changes(server):
    sent = csr("csr-a", username="mallory", groups=["system:masters-not"], expirationSeconds=3600)
    sent["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    created = server.request("POST", CSRS, sent)
    assert created.status == 201, created.body
    body = created.json()
    assert body["spec"]["username"] == "admin" and "system:masters" in body["spec"]["groups"]
    assert body["status"] == {}
    body["spec"]["signerName"] = "example.com/other"
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    updated = server.request("PUT", f"{CSRS}/csr-a", body).json()
    assert updated["spec"]["signerName"] == "example.com/signer" and updated["status"] == {}
    selected = server.request("GET", f"{CSRS}?fieldSelector=spec.signerName%3Dexample.com%2Fsigner").json()
    assert "csr-a" in [i["metadata"]["name"] for i in selected["items"]]


def test_csr_approval_and_status_subresources(server):
    created = server.request("POST", CSRS, csr("csr-b")).json()
    approved = {"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}
    via_status = server.request("PUT", f"{CSRS}/csr-b/status", {**created, "status": {"conditions": [approved]}})
    assert via_status.status == 422
    assert via_status.json()["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "status.conditions",
                                                       "message": 'Forbidden: updates may not add a condition of type '
                                                                  '"Approved"'}]
    resp = server.request("PUT", f"{CSRS}/csr-b/approval", {**created, "status": {"conditions": [approved]}})
    assert resp.status == 200, resp.body
    condition = resp.json()["status"]["conditions"][0]
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    denied = {"type": "Denied", "status": "True"}
    both = server.request("PUT", f"{CSRS}/csr-b/approval", {**resp.json(), "status": {"conditions": [condition, denied]}})
    invalid_cause(both, "FieldValueInvalid", "status.conditions",
                  'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive')
    bad_cert = {**resp.json(), "status": {"conditions": [condition], "certificate": base64.b64encode(b"junk").decode()}}
    invalid_cause(server.request("PUT", f"{CSRS}/csr-b/status", bad_cert), "FieldValueInvalid", "status.certificate",
                  'Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block')


@pytest.mark.parametrize(("sent", "reason", "field_path", "message"), [
    (csr("csr-bad", request=base64.b64encode(b"not a pem").decode()), "FieldValueInvalid", "spec.request",
     f'Invalid value: "{base64.b64encode(b"not a pem").decode()}": PEM block type must be CERTIFICATE REQUEST'),
    (csr("csr-bad", usages=()), "FieldValueRequired", "spec.usages", "Required value"),
    (csr("csr-bad", usages=["flying"]), "FieldValueNotSupported", "spec.usages[0]",
     'Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", '
     '"content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", '
     '"email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", '
     '"key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", '
     '"timestamping"'),
    (csr("csr-bad", usages=["client auth", "client auth"]), "FieldValueDuplicate", "spec.usages[1]",
     'Duplicate value: "client auth"'),
    (csr("csr-bad", signer=""), "FieldValueRequired", "spec.signerName", "Required value"),
    (csr("csr-bad", signer="nosigner"), "FieldValueInvalid", "spec.signerName",
     "Invalid value: \"nosigner\": must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    (csr("csr-bad", signer="example/signer"), "FieldValueInvalid", "spec.signerName",
     'Invalid value: "example": should be a domain with at least two segments separated by dots'),
    (csr("csr-bad", signer="kubernetes.io/legacy-unknown"), "FieldValueInvalid", "spec.signerName",
     'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'),
    (csr("csr-bad", expirationSeconds=599), "FieldValueInvalid", "spec.expirationSeconds",
     "Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"),
])
def test_invalid_csr(server, sent, reason, field_path, message):
    invalid_cause(server.request("POST", CSRS, sent), reason, field_path, message)


def test_csr_bad_base64_fails_decoding(server):
    resp = server.request("POST", CSRS, csr("csr-b64", request="!!!"))
    assert resp.status == 400 and resp.json()["message"] == (
        'CertificateSigningRequest in version "v1" cannot be handled as a CertificateSigningRequest: illegal '
        "base64 data at input byte 0")


# ---- kubectl ----

def _header(server, resource: str) -> list[str]:
    return server.kubectl("get", resource).stdout.splitlines()[0].split()


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_columns(server):
    server.request("POST", LEASES, lease("lease-k", holderIdentity="node-k"))
    server.request("POST", RUNTIMECLASSES, runtimeclass("rc-k", "gvisor"))
    server.request("POST", SLICES, endpointslice("es-k", addresses=["10.3.0.1", "10.3.0.2"],
                                                 ports=[{"name": "http", "port": 80},
                                                                          {"name": "https", "port": 443}]))
    assert _header(server, "leases") == ["NAME", "HOLDER", "AGE"]
    assert server.kubectl("get", "lease", "lease-k", "--no-headers").stdout.split()[:2] == ["lease-k", "node-k"]
    assert _header(server, "runtimeclasses") == ["NAME", "HANDLER", "AGE"]
    assert server.kubectl("get", "runtimeclass", "rc-k", "--no-headers").stdout.split()[:2] == ["rc-k", "gvisor"]
    assert _header(server, "endpointslices") == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    row = server.kubectl("get", "endpointslice", "es-k", "--no-headers").stdout.split()
    assert row[:4] == ["es-k", "IPv4", "80,443", "10.3.0.1,10.3.0.2"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_certificate_approve(server):
    assert server.request("POST", CSRS, csr("csr-k", expirationSeconds=10800)).status == 201
    assert _header(server, "csr") == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    row = server.kubectl("get", "csr", "csr-k", "--no-headers").stdout.split()
    assert row[0] == "csr-k" and row[2:] == ["example.com/signer", "admin", "3h", "Pending"]
    out = server.kubectl("certificate", "approve", "csr-k")
    assert "certificatesigningrequest.certificates.k8s.io/csr-k approved" in out.stdout
    assert server.kubectl("get", "csr", "csr-k", "--no-headers").stdout.split()[-1] == "Approved"
