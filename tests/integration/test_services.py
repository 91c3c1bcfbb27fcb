"""core/v1 services, endpoints and replicationcontrollers: cluster IPs and node ports allocated as
Kubernetes allocates them (IPAddress objects, the node port range, release on delete and type change,
the repair pass at start), the `kubernetes` Service of the bootstrap controller, tables, field
selectors, the status and scale subresources, and a corpus of invalid objects refused with
Kubernetes' exact errors."""

from __future__ import annotations

import ipaddress
import json
import time

import pytest

from conftest import Server
from kube_apiserver.apimachinery.protobuf import bytes_field, varint_field

SVCS = "/api/v1/namespaces/default/services"
EPS = "/api/v1/namespaces/default/endpoints"
RCS = "/api/v1/namespaces/default/replicationcontrollers"
IPS = "/apis/networking.k8s.io/v1/ipaddresses"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
MERGE = {"Content-Type": "application/merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
RANGE = ipaddress.ip_network("10.0.0.0/24")
DEPRECATED = '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"'
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def service(name: str, *ports: dict, **spec) -> dict:
    ports = ports or ({"port": 80},)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ports": list(ports), "selector": {"app": name}, **spec}}


def create(server, body: dict, path: str = SVCS) -> dict:
    created = server.request("POST", path, body)
    assert created.status == 201, created.body
    return created.json()


def refusal(server, body: dict, path: str = SVCS) -> tuple[int, str, str, list[tuple[str, str, str]]]:
    refused = server.request("POST", path, body).json()
    causes = [(c["reason"], c["field"], c["message"]) for c in refused.get("details", {}).get("causes", [])]
    return refused["code"], refused["reason"], refused["message"], causes


def ip_address(server, ip: str) -> dict | None:
    got = server.request("GET", f"{IPS}/{ip}")
    return got.json() if got.status == 200 else None


# ---- allocation ----

@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_service_clusterip_allocates_a_unique_ip(server):
    assert "service/web created" in server.kubectl("create", "service", "clusterip", "web", "--tcp=80:8080").stdout
    server.kubectl("create", "service", "clusterip", "web2", "--tcp=80:8080")
    web = server.request("GET", f"{SVCS}/web").json()
    ip = web["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in RANGE and ip not in ("10.0.0.0", "10.0.0.255")
    assert int(ipaddress.ip_address(ip)) - int(RANGE.network_address) > 16  # dynamic: above the static band
    assert web["spec"] == {
        "ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
        "selector": {"app": "web"}, "clusterIP": ip, "clusterIPs": [ip], "type": "ClusterIP",
        "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster"}
    assert web["status"] == {"loadBalancer": {}}
    other = server.request("GET", f"{SVCS}/web2").json()["spec"]["clusterIP"]
    assert other != ip
    address = ip_address(server, ip)
    assert address["spec"]["parentRef"] == {"resource": "services", "namespace": "default", "name": "web"}
    assert address["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                             "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_service_nodeport_allocates_a_port(server):
    server.kubectl("create", "service", "nodeport", "np", "--tcp=80:8080")
    port = server.request("GET", f"{SVCS}/np").json()["spec"]["ports"][0]
    assert 30000 <= port["nodePort"] <= 32767
    row = server.kubectl("get", "svc", "np", "--no-headers").stdout.split()
    assert row[:2] == ["np", "NodePort"] and row[4] == f"80:{port['nodePort']}/TCP"
    taken = service("np-taken", {"port": 80, "nodePort": port["nodePort"]}, type="NodePort")
    assert refusal(server, taken) == (422, "Invalid", f'Service "np-taken" is invalid: spec.ports[0].nodePort: '
                                                      f'Invalid value: {port["nodePort"]}: provided port is already '
                                                      f'allocated',
                                      [("FieldValueInvalid", "spec.ports[0].nodePort",
                                        f"Invalid value: {port['nodePort']}: provided port is already allocated")])
    outside = service("np-outside", {"port": 80, "nodePort": 29999}, type="NodePort")
    assert refusal(server, outside)[2] == ('Service "np-outside" is invalid: spec.ports[0].nodePort: Invalid value: '
                                           "29999: provided port is not in the valid range. The range of valid ports "
                                           "is 30000-32767")
    shared = create(server, service("np-shared", {"name": "tcp", "port": 53}, {"name": "udp", "port": 53,
                                                                                "protocol": "UDP"}, type="NodePort"))
    first, second = shared["spec"]["ports"]
    assert first["nodePort"] == second["nodePort"]  # one node port for both protocols of a port number


def test_requested_cluster_ip_conflicts_and_ranges(server):
    create(server, service("fixed", clusterIP="10.0.0.10"))
    assert ip_address(server, "10.0.0.10")["spec"]["parentRef"]["name"] == "fixed"
    assert refusal(server, service("fixed-again", clusterIP="10.0.0.10")) == (
        422, "Invalid", 'Service "fixed-again" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.10"]: failed to '
                        "allocate IP 10.0.0.10: provided IP is already allocated",
        [("FieldValueInvalid", "spec.clusterIPs",
          'Invalid value: ["10.0.0.10"]: failed to allocate IP 10.0.0.10: provided IP is already allocated')])
    for ip in ("10.0.0.0", "10.0.0.255"):
        assert refusal(server, service("edge", clusterIP=ip))[2] == (
            f'Service "edge" is invalid: spec.clusterIPs: Invalid value: ["{ip}"]: failed to allocate IP {ip}: the '
            f"provided IP ({ip}) is not in the valid range. The range of valid IPs is 10.0.0.0/24")
    assert refusal(server, service("far", clusterIP="192.168.0.10"))[2] == (
        'Service "far" is invalid: spec.clusterIPs: Invalid value: ["192.168.0.10"]: failed to allocate IP '
        "192.168.0.10: the provided network does not match the current range")
    assert refusal(server, service("six", clusterIP="fd00::10"))[2] == (
        'Service "six" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::10"]: IPv6 is not configured on this '
        "cluster")
    assert server.request("GET", f"{SVCS}/fixed-again").status == 404


def test_deletion_releases_ip_and_node_port(server):
    created = create(server, service("short-lived", clusterIP="10.0.0.11", type="NodePort"))
    node_port = created["spec"]["ports"][0]["nodePort"]
    deleted = server.request("DELETE", f"{SVCS}/short-lived")
    assert deleted.status == 200 and deleted.json()["kind"] == "Service"  # services answer with the object
    assert ip_address(server, "10.0.0.11") is None
    again = create(server, service("reborn", {"port": 80, "nodePort": node_port}, clusterIP="10.0.0.11",
                                   type="NodePort"))
    assert again["spec"]["clusterIP"] == "10.0.0.11" and again["spec"]["ports"][0]["nodePort"] == node_port


def test_invalid_service_releases_what_it_allocated(server):
    # A port no earlier test was given at random.
    used = {p.get("nodePort") for s in server.request("GET", "/api/v1/services").json()["items"]
            for p in s["spec"].get("ports") or []}
    port = next(p for p in range(30123, 30200) if p not in used)
    body = service("half", {"port": 80, "nodePort": port}, clusterIP="10.0.0.12", type="NodePort",
                   sessionAffinity="Sometimes")
    assert refusal(server, body)[0] == 422
    assert ip_address(server, "10.0.0.12") is None
    ok = create(server, service("whole", {"port": 80, "nodePort": port}, clusterIP="10.0.0.12", type="NodePort"))
    assert ok["spec"]["ports"][0]["nodePort"] == port


def test_cluster_ip_is_immutable(server):
    create(server, service("stable", clusterIP="10.0.0.13"))
    changed = server.request("PATCH", f"{SVCS}/stable", {"spec": {"clusterIP": "10.0.0.14"}}, MERGE).json()
    assert changed["message"] == ('Service "stable" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.14"]: '
                                  "may not change once set")
    # Resubmitting without the allocated values keeps them (patchAllocatedValues).
    replaced = service("stable", {"port": 81})
    replaced["metadata"] = server.request("GET", f"{SVCS}/stable").json()["metadata"]
    updated = server.request("PUT", f"{SVCS}/stable", replaced)
    assert updated.status == 200, updated.body
    assert updated.json()["spec"]["clusterIPs"] == ["10.0.0.13"]


def test_type_changes_release_node_ports_and_ips(server):
    created = create(server, service("morph", type="NodePort"))
    node_port = created["spec"]["ports"][0]["nodePort"]
    to_cluster_ip = server.request("PATCH", f"{SVCS}/morph", {"spec": {"type": "ClusterIP"}}, MERGE).json()
    assert "nodePort" not in to_cluster_ip["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in to_cluster_ip["spec"] or to_cluster_ip["spec"]["type"] == "ClusterIP"
    create(server, service("port-heir", {"port": 80, "nodePort": node_port}, type="NodePort"))
    ip = to_cluster_ip["spec"]["clusterIP"]
    external = {"spec": {"type": "ExternalName", "externalName": "example.com"}}
    named = server.request("PATCH", f"{SVCS}/morph", external, MERGE).json()
    assert "clusterIP" not in named["spec"] and "ipFamilies" not in named["spec"]
    assert ip_address(server, ip) is None
    back = server.request("PATCH", f"{SVCS}/morph", {"spec": {"type": "ClusterIP", "externalName": None}},
                          MERGE).json()
    assert ipaddress.ip_address(back["spec"]["clusterIP"]) in RANGE


def test_headless_and_load_balancer_services(server):
    headless = create(server, service("headless", clusterIP="None"))
    assert headless["spec"]["clusterIPs"] == ["None"] and headless["spec"]["ipFamilyPolicy"] == "SingleStack"
    selectorless = service("headless-all", clusterIP="None")
    del selectorless["spec"]["selector"]
    spec = create(server, selectorless)["spec"]
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("RequireDualStack", ["IPv4", "IPv6"])
    lb = create(server, service("balanced", type="LoadBalancer"))["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True and lb["externalTrafficPolicy"] == "Cluster"
    assert 30000 <= lb["ports"][0]["nodePort"] <= 32767
    local = create(server, service("local", type="LoadBalancer", externalTrafficPolicy="Local"))["spec"]
    assert 30000 <= local["healthCheckNodePort"] <= 32767
    none_for_np = service("headless-np", clusterIP="None", type="NodePort")
    assert refusal(server, none_for_np)[2] == ('Service "headless-np" is invalid: spec.clusterIPs[0]: Invalid value: '
                                               "\"None\": may not be set to 'None' for NodePort services")


def test_protobuf_service_with_requested_node_port(server):
    port = bytes_field(1, b"proto") + bytes_field(2, b"TCP") + varint_field(3, 8080) + varint_field(5, 30777)
    spec = bytes_field(1, port) + bytes_field(4, b"NodePort")
    message = bytes_field(1, bytes_field(1, b"proto-svc")) + bytes_field(2, spec)
    envelope = bytes_field(1, bytes_field(1, b"v1") + bytes_field(2, b"Service"))
    created = server.request("POST", SVCS, b"k8s\x00" + envelope + bytes_field(2, message),
                             {"Content-Type": "application/vnd.kubernetes.protobuf", "Accept": "application/json"})
    assert created.status == 201, created.body
    assert created.json()["spec"]["ports"] == [{"name": "proto", "protocol": "TCP", "port": 8080,
                                                "targetPort": 8080, "nodePort": 30777}]


def test_dry_run_allocates_nothing(server):
    before = {i["metadata"]["name"] for i in server.request("GET", IPS).json()["items"]}
    dry = server.request("POST", f"{SVCS}?dryRun=All", service("dry", clusterIP="10.0.0.15"))
    assert dry.status == 201 and dry.json()["spec"]["clusterIPs"] == ["10.0.0.15"]
    server.request("POST", f"{SVCS}?dryRun=All", service("dry-dynamic"))
    assert {i["metadata"]["name"] for i in server.request("GET", IPS).json()["items"]} == before


# ---- kubectl views, the kubernetes service, field selectors ----

@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_get_svc_columns_and_the_kubernetes_service(server):
    lines = server.kubectl("get", "svc").stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    kubernetes = next(line.split() for line in lines if line.startswith("kubernetes "))
    assert kubernetes[:5] == ["kubernetes", "ClusterIP", "10.0.0.1", "<none>", "443/TCP"]
    wide = server.kubectl("get", "svc", "kubernetes", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-1] == "SELECTOR" and wide[1].split()[-1] == "<none>"
    got = server.request("GET", f"{SVCS}/kubernetes").json()
    assert got["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert got["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": server.port}]
    assert ip_address(server, "10.0.0.1")["spec"]["parentRef"]["name"] == "kubernetes"
    # The advertise address of this server is 127.0.0.1: as in Kubernetes, loopback endpoints are invalid.
    assert server.request("GET", f"{EPS}/kubernetes").status == 404
    resources = server.kubectl("api-resources", "--api-group=").stdout
    for short in ("svc", "ep", "rc"):
        assert f" {short} " in resources


@pytest.mark.usefixtures("kubectl_available")
def test_kubernetes_service_endpoints_point_at_the_advertise_address(tmp_path):
    srv = Server(str(tmp_path), ["--advertise-address", "192.0.2.10"]).start()
    try:
        endpoints = srv.request("GET", f"{EPS}/kubernetes")
        assert endpoints.headers["warning"] == DEPRECATED
        assert endpoints.json()["subsets"] == [{"addresses": [{"ip": "192.0.2.10"}],
                                                "ports": [{"name": "https", "port": srv.port, "protocol": "TCP"}]}]
        assert endpoints.json()["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
        slice_ = srv.request("GET", f"{SLICES}/kubernetes").json()
        assert slice_["addressType"] == "IPv4" and slice_["metadata"]["labels"] == {
            "kubernetes.io/service-name": "kubernetes"}
        assert slice_["endpoints"] == [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}]
        assert slice_["ports"] == [{"name": "https", "protocol": "TCP", "port": srv.port}]
        out = srv.kubectl("get", "ep", "kubernetes")
        assert "v1 Endpoints is deprecated" in out.stderr
        assert out.stdout.splitlines()[1].split()[:2] == ["kubernetes", f"192.0.2.10:{srv.port}"]
    finally:
        srv.stop()


def test_service_field_selectors(server):
    create(server, service("selected", clusterIP="10.0.0.16", type="NodePort"))
    by_ip = server.request("GET", f"{SVCS}?fieldSelector=spec.clusterIP=10.0.0.16").json()["items"]
    assert [s["metadata"]["name"] for s in by_ip] == ["selected"]
    by_type = server.request("GET", f"{SVCS}?fieldSelector=spec.type=NodePort").json()["items"]
    assert "selected" in [s["metadata"]["name"] for s in by_type]
    assert all(s["spec"]["type"] == "NodePort" for s in by_type)
    bad = server.request("GET", f"{SVCS}?fieldSelector=spec.ports=1").json()
    assert bad["message"] == 'field label not supported: spec.ports'


def test_service_status_subresource(server):
    create(server, service("plain"))
    ingress = {"status": {"loadBalancer": {"ingress": [{"ip": "198.51.100.7"}]}}}
    refused = server.request("PATCH", f"{SVCS}/plain/status", ingress, MERGE).json()
    assert refused["message"] == ('Service "plain" is invalid: status.loadBalancer.ingress: Forbidden: may only be '
                                  "used when `spec.type` is 'LoadBalancer'")
    create(server, service("exposed", type="LoadBalancer"))
    written = server.request("PATCH", f"{SVCS}/exposed/status", ingress, MERGE)
    assert written.status == 200, written.body
    assert written.json()["status"]["loadBalancer"]["ingress"] == [{"ip": "198.51.100.7", "ipMode": "VIP"}]
    row = server.request("GET", f"{SVCS}/exposed", headers=TABLE).json()["rows"][0]["cells"]
    assert row[3] == "198.51.100.7"
    ignored = server.request("PATCH", f"{SVCS}/exposed", {"status": {"loadBalancer": {}}}, MERGE).json()
    assert ignored["status"]["loadBalancer"]["ingress"][0]["ip"] == "198.51.100.7"


def test_repair_at_start_restores_and_releases(tmp_path):
    data = str(tmp_path)
    srv = Server(data).start()
    try:
        kept = create(srv, service("kept", clusterIP="10.0.0.20", type="NodePort"))
        node_port = kept["spec"]["ports"][0]["nodePort"]
        assert srv.request("DELETE", f"{IPS}/10.0.0.20").status == 200  # lost
        labels = {"ipaddress.kubernetes.io/ip-family": "IPv4", "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
        for ip, owner in (("10.0.0.21", "kept"), ("10.0.0.22", "unwritten")):
            create(srv, {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                         "metadata": {"name": ip, "labels": labels},
                         "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": owner}}}, IPS)
    finally:
        srv.stop()
    srv = Server(data).start()
    try:
        assert ip_address(srv, "10.0.0.20")["spec"]["parentRef"]["name"] == "kept"
        assert ip_address(srv, "10.0.0.21") is None  # its Service exists without it: a wrong reference
        # no Service yet, but younger than kube-apiserver's 60 s grace: maybe a create in flight (repairip.go)
        assert ip_address(srv, "10.0.0.22")["spec"]["parentRef"]["name"] == "unwritten"
        reuse = service("thief", {"port": 80, "nodePort": node_port}, type="NodePort")
        assert refusal(srv, reuse)[2].endswith(f"Invalid value: {node_port}: provided port is already allocated")
    finally:
        srv.stop()


# ---- endpoints ----

def test_endpoints_are_repacked_and_deleted_with_their_service(server):
    # Static band: never taken dynamically. No selector: Endpoints written by hand are the endpoint
    # controller's to overwrite when the Service has one.
    create(server, service("backed", clusterIP="10.0.0.5", selector=None))
    body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "backed"}, "subsets": [
        {"addresses": [{"ip": "10.1.0.2"}, {"ip": "10.1.0.1"}], "ports": [{"port": 8080}]},
        {"notReadyAddresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 8080}]}]}
    created = server.request("POST", EPS, body)
    assert created.status == 201 and created.headers["warning"] == DEPRECATED
    assert created.json()["subsets"] == [{"addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}],
                                          "ports": [{"port": 8080, "protocol": "TCP"}]}]
    row = server.request("GET", f"{EPS}/backed", headers=TABLE).json()
    assert [c["name"] for c in row["columnDefinitions"]] == ["Name", "Endpoints", "Age"]
    assert row["rows"][0]["cells"][:2] == ["backed", "10.1.0.1:8080,10.1.0.2:8080"]
    assert server.request("DELETE", f"{SVCS}/backed").status == 200
    assert server.request("GET", f"{EPS}/backed").status == 404


# ---- replicationcontrollers ----

RC_MANIFEST = """
apiVersion: v1
kind: ReplicationController
metadata:
  name: frontend
spec:
  template:
    metadata:
      labels: {app: frontend}
    spec:
      containers:
      - name: php
        image: php:8
"""


@pytest.mark.usefixtures("kubectl_available")
def test_replication_controller_defaults_table_and_scale(server, tmp_path):
    manifest = tmp_path / "rc.yaml"
    manifest.write_text(RC_MANIFEST)
    assert "replicationcontroller/frontend created" in server.kubectl("apply", "-f", str(manifest)).stdout
    rc = server.request("GET", f"{RCS}/frontend").json()
    assert rc["spec"]["replicas"] == 1 and rc["spec"]["selector"] == {"app": "frontend"}
    assert rc["metadata"]["labels"] == {"app": "frontend"} and rc["metadata"]["generation"] == 1
    assert rc["status"] == {"replicas": 0}
    assert rc["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    lines = server.kubectl("get", "rc").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert lines[1].split()[:4] == ["frontend", "1", "0", "0"]
    wide = server.kubectl("get", "rc", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[5:] == ["php", "php:8", "app=frontend"]
    assert "scaled" in server.kubectl("scale", "rc", "frontend", "--replicas=3").stdout
    scaled = server.request("GET", f"{RCS}/frontend").json()
    assert scaled["spec"]["replicas"] == 3 and scaled["metadata"]["generation"] == 2
    scale = server.request("GET", f"{RCS}/frontend/scale").json()
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert (scale["spec"], scale["status"]) == ({"replicas": 3}, {"replicas": 0, "selector": "app=frontend"})
    negative = server.request("PATCH", f"{RCS}/frontend/scale", {"spec": {"replicas": -1}}, MERGE).json()
    assert (negative["code"], negative["message"]) == (422, 'Scale.autoscaling "frontend" is invalid: spec.replicas: '
                                                            "Invalid value: -1: must be greater than or equal to 0")
    all_ = server.kubectl("get", "all").stdout
    assert "replicationcontroller/frontend" in all_ and "service/kubernetes" in all_


def test_replication_controller_status_and_field_selector(server):
    body = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "counted"},
            "spec": {"template": {"metadata": {"labels": {"app": "counted"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    create(server, body, RCS)
    status = {"status": {"replicas": 2, "readyReplicas": 3}}
    refused = server.request("PATCH", f"{RCS}/counted/status", status, MERGE).json()
    assert refused["message"] == ('ReplicationController "counted" is invalid: status.readyReplicas: Invalid value: '
                                  "3: cannot be greater than status.replicas")
    written = server.request("PATCH", f"{RCS}/counted/status", {"status": {"replicas": 2}}, MERGE).json()
    assert written["status"] == {"replicas": 2} and written["metadata"]["generation"] == 1
    selected = server.request("GET", f"{RCS}?fieldSelector=status.replicas=2").json()["items"]
    assert [rc["metadata"]["name"] for rc in selected] == ["counted"]


def test_scale_subresource_in_discovery(server):
    resources = {r["name"]: r for r in server.request("GET", "/api/v1").json()["resources"]}
    assert resources["replicationcontrollers/scale"] == {
        "name": "replicationcontrollers/scale", "singularName": "", "namespaced": True, "group": "autoscaling",
        "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
    assert resources["services"]["shortNames"] == ["svc"] and resources["services"]["categories"] == ["all"]
    assert resources["endpoints"]["shortNames"] == ["ep"] and "categories" not in resources["endpoints"]
    assert resources["replicationcontrollers"]["categories"] == ["all"]
    assert resources["services/status"]["verbs"] == ["get", "patch", "update"]


# ---- invalid objects ----

def _rc(name: str, **spec) -> dict:
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"template": template, **spec}}


def _endpoints(name: str, *subsets: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name}, "subsets": list(subsets)}


INVALID = [
    (service("Bad_Name"), 'Service "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ' + DNS1035,
     [("FieldValueInvalid", "metadata.name")]),
    (service("no-ports", *[], ports=[]), 'Service "no-ports" is invalid: spec.ports: Required value',
     [("FieldValueRequired", "spec.ports")]),
    (service("unnamed", {"port": 80}, {"port": 81}),
     'Service "unnamed" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]',
     [("FieldValueRequired", "spec.ports[0].name"), ("FieldValueRequired", "spec.ports[1].name")]),
    (service("dup-names", {"name": "a", "port": 80}, {"name": "a", "port": 81}),
     'Service "dup-names" is invalid: spec.ports[1].name: Duplicate value: "a"',
     [("FieldValueDuplicate", "spec.ports[1].name")]),
    (service("big-port", {"port": 70000}),  # targetPort defaults to the port
     'Service "big-port" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, '
     "inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]",
     [("FieldValueInvalid", "spec.ports[0].port"), ("FieldValueInvalid", "spec.ports[0].targetPort")]),
    (service("icmp", {"port": 80, "protocol": "ICMP"}),
     'Service "icmp" is invalid: spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", '
     '"TCP", "UDP"', [("FieldValueNotSupported", "spec.ports[0].protocol")]),
    (service("dup-port", {"name": "a", "port": 80}, {"name": "b", "port": 80}),
     'Service "dup-port" is invalid: spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,'
     '"Port":80,"TargetPort":0,"NodePort":0}', [("FieldValueDuplicate", "spec.ports[1]")]),
    (service("bad-type", type="Special"),
     'Service "bad-type" is invalid: spec.type: Unsupported value: "Special": supported values: "ClusterIP", '
     '"ExternalName", "LoadBalancer", "NodePort"', [("FieldValueNotSupported", "spec.type")]),
    (service("cip-np", {"port": 80, "nodePort": 30001}),
     "Service \"cip-np\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
     [("FieldValueForbidden", "spec.ports[0].nodePort")]),
    (service("bad-selector", selector={"a b": "c"}),
     'Service "bad-selector" is invalid: spec.selector: Invalid value: "a b": name part must consist of '
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", [("FieldValueInvalid", "spec.selector")]),
    (service("bad-ip", clusterIP="10.0.0.300"),
     'Service "bad-ip" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, '
     "(e.g. 10.9.8.7 or 2001:db8::ffff)", [("FieldValueInvalid", "spec.clusterIPs[0]")]),
    (service("affinity", sessionAffinity="ClientIP", sessionAffinityConfig={"clientIP": {"timeoutSeconds": 0}}),
     'Service "affinity" is invalid: spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be '
     "greater than 0 and less than 86400",
     [("FieldValueInvalid", "spec.sessionAffinityConfig.clientIP.timeoutSeconds")]),
    (service("etp", externalTrafficPolicy="Local"),
     'Service "etp" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only be set for '
     "externally-accessible services", [("FieldValueInvalid", "spec.externalTrafficPolicy")]),
    (service("ext", type="ExternalName"), 'Service "ext" is invalid: spec.externalName: Required value',
     [("FieldValueRequired", "spec.externalName")]),
    (service("loop", externalIPs=["127.0.0.1"]),
     'Service "loop" is invalid: spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
     "(127.0.0.0/8, ::1/128)", [("FieldValueInvalid", "spec.externalIPs[0]")]),
    (service("families", ipFamilies=["IPv5"]),
     'Service "families" is invalid: spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", '
     '"IPv6"', [("FieldValueNotSupported", "spec.ipFamilies[0]")]),
    (service("dual", ipFamilyPolicy="RequireDualStack"),
     'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not '
     "configured for dual-stack services", [("FieldValueInvalid", "spec.ipFamilyPolicy")]),
]
INVALID_OTHERS = [
    (_rc("rc-no-template", template=None), RCS, 'ReplicationController "rc-no-template" is invalid: '
     "[spec.selector: Required value, spec.template: Required value]",
     [("FieldValueRequired", "spec.selector"), ("FieldValueRequired", "spec.template")]),
    (_rc("rc-mismatch", selector={"app": "y"}), RCS, 'ReplicationController "rc-mismatch" is invalid: '
     'spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
     [("FieldValueInvalid", "spec.template.metadata.labels")]),
    (_rc("rc-negative", replicas=-1), RCS, 'ReplicationController "rc-negative" is invalid: spec.replicas: Invalid '
     "value: -1: must be greater than or equal to 0", [("FieldValueInvalid", "spec.replicas")]),
    (_endpoints("ep-empty", {"ports": [{"port": 80}]}), EPS, 'Endpoints "ep-empty" is invalid: subsets[0]: Required '
     "value: must specify `addresses` or `notReadyAddresses`", [("FieldValueRequired", "subsets[0]")]),
    (_endpoints("ep-loop", {"addresses": [{"ip": "127.0.0.1"}]}), EPS, 'Endpoints "ep-loop" is invalid: '
     'subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, '
     "::1/128)", [("FieldValueInvalid", "subsets[0].addresses[0].ip")]),
    (_endpoints("ep-ports", {"addresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 80}, {"name": "b", "port": 0}]}),
     EPS, 'Endpoints "ep-ports" is invalid: [subsets[0].ports[0].name: Required value, subsets[0].ports[1].port: '
     "Invalid value: 0: must be between 1 and 65535, inclusive]",
     [("FieldValueRequired", "subsets[0].ports[0].name"), ("FieldValueInvalid", "subsets[0].ports[1].port")]),
]


@pytest.mark.parametrize(("body", "message", "causes"), INVALID)
def test_invalid_services_are_refused(server, body, message, causes):
    code, reason, got, got_causes = refusal(server, body)
    assert (code, reason, got) == (422, "Invalid", message)
    assert [(r, f) for r, f, _ in got_causes] == causes


@pytest.mark.parametrize(("body", "path", "message", "causes"), INVALID_OTHERS)
def test_invalid_endpoints_and_controllers_are_refused(server, body, path, message, causes):
    code, reason, got, got_causes = refusal(server, body, path)
    assert (code, reason, got) == (422, "Invalid", message)
    assert [(r, f) for r, f, _ in got_causes] == causes


def test_table_of_services(server):
    create(server, service("tabled", clusterIP="10.0.0.14"))
    table = server.request("GET", f"{SVCS}/tabled", headers=TABLE).json()
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0), ("Age", 0), ("Selector", 1)]
    assert table["rows"][0]["cells"][:5] == ["tabled", "ClusterIP", "10.0.0.14", "<none>", "80/TCP"]
    assert table["rows"][0]["cells"][6] == "app=tabled"
    assert json.loads(json.dumps(table))["kind"] == "Table"


def test_bodies_that_do_not_fit_the_go_types_are_bad_requests(server):
    bad = service("typed", {"port": "80"})
    refused = server.request("POST", SVCS, bad).json()
    assert (refused["code"], refused["message"]) == (400, 'Service in version "v1" cannot be handled as a Service: '
                                                          "json: cannot unmarshal string into Go struct field "
                                                          "ServicePort.spec.ports.port of type int32")
    rc = _rc("typed-rc", replicas="3")
    assert server.request("POST", RCS, rc).json()["message"] == (
        'ReplicationController in version "v1" cannot be handled as a ReplicationController: json: cannot unmarshal '
        "string into Go struct field ReplicationControllerSpec.spec.replicas of type int32")


def test_replication_controllers_orphan_their_pods_by_default(server):
    create(server, _rc("orphaning"), RCS)
    marked = server.request("DELETE", f"{RCS}/orphaning").json()
    assert marked["metadata"]["finalizers"] == ["orphan"] and marked["metadata"]["deletionTimestamp"]
    deadline = time.time() + 10
    while server.request("GET", f"{RCS}/orphaning").status != 404:  # the garbage collector finishes it
        assert time.time() < deadline
        time.sleep(0.1)
    create(server, _rc("cascading"), RCS)
    gone = server.request("DELETE", f"{RCS}/cascading", {"propagationPolicy": "Background"})
    assert gone.status == 200 and server.request("GET", f"{RCS}/cascading").status == 404
