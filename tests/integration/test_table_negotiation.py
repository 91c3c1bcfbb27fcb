"""as=Table is served only where the storage converts to tables (rest.TableConvertor), as kube-apiserver's
RequestScope.AllowsMediaTypeTransform decides: reviews, bindings, evictions and token requests have no
convertor, so a request accepting nothing but a Table is 406 NotAcceptable, refused before it does
anything; a Table clause with a fallback gets the fallback; every storage that lists gives its table."""

from __future__ import annotations

import pytest

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
NOT_ACCEPTABLE = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "NotAcceptable",
    "message": "only the following media types are accepted: application/json, application/yaml, "
               "application/vnd.kubernetes.protobuf", "code": 406}
AUTHN = "/apis/authentication.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
ACCESS = {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}}
REVIEWS = [
    (f"{AUTHN}/tokenreviews", {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                               "spec": {"token": "not-a-token"}}),
    (f"{AUTHN}/selfsubjectreviews", {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1"}),
    (f"{AUTHZ}/subjectaccessreviews", {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                                       "spec": {**ACCESS, "user": "someone"}}),
    (f"{AUTHZ}/selfsubjectaccessreviews", {"kind": "SelfSubjectAccessReview",
                                           "apiVersion": "authorization.k8s.io/v1", "spec": ACCESS}),
    (f"{AUTHZ}/namespaces/default/localsubjectaccessreviews", {
        "kind": "LocalSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"namespace": "default"}, "spec": {**ACCESS, "user": "someone"}}),
    (f"{AUTHZ}/selfsubjectrulesreviews", {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                                          "spec": {"namespace": "default"}}),
]


@pytest.mark.parametrize(("path", "body"), REVIEWS, ids=[p.rsplit("/", 1)[1] for p, _ in REVIEWS])
def test_reviews_have_no_table(server, path, body):
    refused = server.request("POST", path, body, {"Accept": TABLE})
    assert refused.status == 406 and refused.json() == NOT_ACCEPTABLE
    fallback = server.request("POST", path, body, {"Accept": f"{TABLE}, application/json"})
    assert fallback.status == 201, fallback.body
    assert fallback.headers["content-type"] == "application/json" and fallback.json()["kind"] == body["kind"]


def test_create_only_subresources_refuse_a_table_before_acting(server):
    pods = "/api/v1/namespaces/default/pods"
    pod = {"metadata": {"name": "table-evict"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert server.request("POST", pods, pod).status == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "table-evict"}}
    refused = server.request("POST", f"{pods}/table-evict/eviction", eviction, {"Accept": TABLE})
    assert refused.status == 406 and refused.json() == NOT_ACCEPTABLE
    kept = server.request("GET", f"{pods}/table-evict")
    assert kept.status == 200 and not kept.json()["metadata"].get("deletionTimestamp")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "table-evict"},
               "target": {"kind": "Node", "name": "node-1"}}
    assert server.request("POST", f"{pods}/table-evict/binding", binding, {"Accept": TABLE}).json() == NOT_ACCEPTABLE
    assert not server.request("GET", f"{pods}/table-evict").json()["spec"].get("nodeName")
    log = server.request("GET", f"{pods}/table-evict/log", headers={"Accept": TABLE})  # a getter, not a stream
    assert log.status == 406 and log.json() == NOT_ACCEPTABLE
    assert server.request("GET", f"{pods}/table-evict/log").status == 200
    token = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    answer = server.request("POST", "/api/v1/namespaces/default/serviceaccounts/default/token", token,
                            {"Accept": TABLE})
    assert answer.status == 406 and answer.json() == NOT_ACCEPTABLE


def test_resources_that_list_still_give_tables(server):
    configmaps = "/api/v1/namespaces/default/configmaps"
    created = server.request("POST", configmaps, {"metadata": {"name": "table-cm"}}, {"Accept": TABLE})
    assert created.status == 201 and created.json()["kind"] == "Table"
    for path in (configmaps, f"{configmaps}/table-cm", "/api/v1/namespaces", "/apis/apps/v1/deployments"):
        answer = server.request("GET", path, headers={"Accept": TABLE})
        assert answer.status == 200 and answer.json()["kind"] == "Table", path
