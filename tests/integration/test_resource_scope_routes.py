"""Resources are routed by their scope, as kube-apiserver's installer routes them: a cluster-scoped resource
(built-in or custom) has no path under /namespaces/{namespace}/, and a namespaced one has no named path
outside a namespace. Such paths answer go-restful's 404 whatever the verb, so a user whose Role allows
everything in one namespace reaches no cluster-scoped object through it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Server, wait_for

RBAC = "/apis/rbac.authorization.k8s.io/v1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAMESPACE = "team"
NO_ROUTE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server could not find the requested resource", "reason": "NotFound", "details": {},
            "code": 404}
NOT_ALLOWED = {**NO_ROUTE, "message": "the server does not allow this method on the requested resource",
               "reason": "MethodNotAllowed", "code": 405}
GADGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.scope.example.com"},
    "spec": {"group": "scope.example.com", "scope": "Cluster",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("scope-routes")
    tokens = data / "tokens.csv"
    tokens.write_text("ns-admin-token,ns-admin,2001\n")
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(tokens)]).start()
    try:
        _setup(srv)
        yield srv
    finally:
        srv.stop()


def _setup(srv: Server) -> None:
    """A namespace whose admin may do anything in it (admin, and a Role of * on *), a cluster-scoped CRD
    with one object, a second namespace to try to delete through the first."""
    for name in (NAMESPACE, "bystander"):
        assert srv.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}}).status == 201
    everything = {"metadata": {"name": "everything"},
                  "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
    assert srv.request("POST", f"{RBAC}/namespaces/{NAMESPACE}/roles", everything).status == 201
    for role_kind, role in (("ClusterRole", "admin"), ("Role", "everything")):
        binding = {"metadata": {"name": f"ns-admin-{role}"}, "subjects": [{"kind": "User", "name": "ns-admin"}],
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}}
        assert srv.request("POST", f"{RBAC}/namespaces/{NAMESPACE}/rolebindings", binding).status == 201
    assert srv.request("POST", CRDS, GADGET_CRD).status == 201
    gadgets = "/apis/scope.example.com/v1/gadgets"
    wait_for(lambda: srv.request("GET", gadgets).status == 200)
    gadget = {"apiVersion": "scope.example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}}
    assert srv.request("POST", gadgets, gadget).status == 201


def _resources(srv: Server) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(group version path, API resource, its subresources) of every resource discovery lists."""
    bases = ["/api/v1"]
    for group in srv.request("GET", "/apis").json()["groups"]:
        bases += [f"/apis/{v['groupVersion']}" for v in group["versions"]]
    out = []
    for base in bases:
        listed = srv.request("GET", base).json()["resources"]
        for resource in listed:
            if "/" in resource["name"]:
                continue
            subs = [r["name"].split("/", 1)[1] for r in listed if r["name"].startswith(resource["name"] + "/")]
            out.append((base, resource, subs))
    return out


def _a_name(srv: Server, base: str, resource: dict[str, Any]) -> str:
    """An existing object's name when there is one: the 404 must not be the object's own NotFound."""
    if "list" not in resource["verbs"]:
        return "anything"
    listed = srv.request("GET", f"{base}/{resource['name']}?limit=1")
    items = listed.json().get("items") or [] if listed.status == 200 else []
    return items[0]["metadata"]["name"] if items else "anything"


def _namespace_paths(base: str, resource: str, name: str, subresources: list[str]) -> list[tuple[str, str]]:
    scoped = f"{base}/namespaces/{NAMESPACE}/{resource}"
    paths = [("GET", scoped), ("GET", f"{scoped}?watch=1"), ("GET", f"{base}/watch/namespaces/{NAMESPACE}/{resource}"),
             ("POST", scoped), ("DELETE", scoped), ("GET", f"{scoped}/{name}"), ("PUT", f"{scoped}/{name}"),
             ("PATCH", f"{scoped}/{name}"), ("DELETE", f"{scoped}/{name}")]
    return paths + [(method, f"{scoped}/{name}/{sub}") for sub in subresources for method in ("GET", "PUT")]


def _request(srv: Server, method: str, path: str, token: str) -> Any:
    body = {"metadata": {"name": "x"}} if method in ("POST", "PUT") else {} if method == "PATCH" else None
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
    return srv.request(method, path, body, headers, token=token)


def test_cluster_scoped_resources_have_no_namespace_paths(rbac_server):
    resources = [(b, r, s) for b, r, s in _resources(rbac_server) if not r["namespaced"]]
    names = {r["name"] for _, r, _ in resources}
    assert {"namespaces", "nodes", "persistentvolumes", "clusterroles", "customresourcedefinitions",
            "apiservices", "gadgets"} <= names
    wrong = []
    for base, resource, subresources in resources:
        name = _a_name(rbac_server, base, resource)
        for method, path in _namespace_paths(base, resource["name"], name, subresources):
            for token in ("admin", "ns-admin-token"):
                answer = _request(rbac_server, method, path, token)
                if answer.status != 404 or answer.json() != NO_ROUTE:
                    wrong.append((token, method, path, answer.status))
    assert not wrong


def test_namespace_admin_lists_and_deletes_no_cluster_object(rbac_server):
    srv, token = rbac_server, "ns-admin-token"
    scoped = f"/api/v1/namespaces/{NAMESPACE}"
    assert srv.request("GET", f"{scoped}/configmaps", token=token).status == 200  # the namespace is theirs
    assert srv.request("GET", "/api/v1/namespaces", token=token).status == 403
    assert srv.request("GET", f"{scoped}/namespaces", token=token).status == 404
    assert srv.request("DELETE", f"{scoped}/namespaces/bystander", token=token).status == 404
    assert srv.request("DELETE", f"{scoped}/namespaces/{NAMESPACE}", token=token).status == 404
    assert srv.request("DELETE", f"/apis/scope.example.com/v1/namespaces/{NAMESPACE}/gadgets", token=token).status \
        == 404
    assert srv.request("DELETE", f"{RBAC}/namespaces/{NAMESPACE}/clusterroles/admin", token=token).status == 404
    for path in ("/api/v1/namespaces/bystander", f"/api/v1/namespaces/{NAMESPACE}",
                 "/apis/scope.example.com/v1/gadgets/g1", f"{RBAC}/clusterroles/admin"):
        kept = srv.request("GET", path)
        assert kept.status == 200 and not kept.json()["metadata"].get("deletionTimestamp"), path
    # The namespace's own paths stay: /namespaces/{name} and its subresources are not namespace-scoped paths.
    assert srv.request("GET", f"/api/v1/namespaces/{NAMESPACE}/status").status == 200
    assert srv.request("GET", f"/api/v1/namespaces/{NAMESPACE}/status/extra").json() == NO_ROUTE


def test_namespaced_resources_have_no_named_cluster_paths(rbac_server):
    """Outside a namespace a namespaced resource has one route, list and watch, if it lists: a name is 404,
    other methods on the collection 405 (404 for a resource that does not list: bindings)."""
    wrong = []
    for base, resource, subresources in _resources(rbac_server):
        if not resource["namespaced"]:
            continue
        collection = f"{base}/{resource['name']}"
        across = NOT_ALLOWED if "list" in resource["verbs"] else NO_ROUTE  # only a lister is routed there
        checks = [("GET", f"{collection}/x", NO_ROUTE), ("PUT", f"{collection}/x", NO_ROUTE),
                  ("DELETE", f"{collection}/x", NO_ROUTE), ("POST", f"{collection}/x", NO_ROUTE),
                  ("POST", collection, across), ("DELETE", collection, across)]
        checks += [("GET", f"{collection}/x/{sub}", NO_ROUTE) for sub in subresources]
        for method, path, expected in checks:
            answer = _request(rbac_server, method, path, "admin")
            if answer.status != expected["code"] or answer.json() != expected:
                wrong.append((method, path, answer.status))
    assert not wrong
    listed = rbac_server.request("GET", "/api/v1/configmaps")
    assert listed.status == 200 and listed.json()["items"]


# Discovery verb -> the HTTP method of its route and whether the route is the object's path (else the
# collection's); a subresource has only its object's path.
VERB_ROUTES = {"get": ("GET", True), "update": ("PUT", True), "patch": ("PATCH", True), "delete": ("DELETE", True),
               "list": ("GET", False), "create": ("POST", False), "deletecollection": ("DELETE", False)}


def test_methods_without_a_route_are_405_and_paths_without_one_404(rbac_server):
    """go-restful's answers: a path some route of the resource matches, with another method, is 405 (the
    generic MethodNotAllowed); a path no route matches is 404, e.g. an object's path of a create-only
    resource (tokenreviews/x)."""
    wrong = []
    for base, resource, _ in _resources(rbac_server):
        verbs = set(resource["verbs"])
        scope = f"/namespaces/{NAMESPACE}" if resource["namespaced"] else ""
        collection = f"{base}{scope}/{resource['name']}"
        paths = {False: collection, True: f"{collection}/x"}
        for item, path in paths.items():
            routed = {method for verb, (method, on_item) in VERB_ROUTES.items() if verb in verbs and on_item == item}
            for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
                if method in routed:
                    continue
                expected = NOT_ALLOWED if routed else NO_ROUTE
                answer = _request(rbac_server, method, path, "admin")
                if answer.status != expected["code"] or answer.json() != expected:
                    wrong.append((method, path, answer.status))
    assert not wrong
    tokenreviews = "/apis/authentication.k8s.io/v1/tokenreviews"
    assert rbac_server.request("GET", tokenreviews).json() == NOT_ALLOWED
    assert rbac_server.request("GET", f"{tokenreviews}/x").json() == NO_ROUTE
    status = f"/api/v1/namespaces/{NAMESPACE}/status"
    assert rbac_server.request("DELETE", status).json() == NOT_ALLOWED
    assert rbac_server.request("GET", f"/api/v1/watch/namespaces/{NAMESPACE}/status").json() == NO_ROUTE
