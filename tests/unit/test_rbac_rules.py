from kube_apiserver.authorization.authorizer import Attributes
from kube_apiserver.authorization.rbac import rule_allows, subject_matches
from kube_apiserver.registry.context import UserInfo

JANE = UserInfo("jane", groups=("devs",))


def resource(verb, resource, subresource="", name="", group=""):
    return Attributes(JANE, verb, True, "", "ns", group, "v1", resource, subresource, name)


def test_rules():
    rule = {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"], "resourceNames": ["p1"]}
    assert rule_allows(rule, resource("get", "pods", name="p1"))
    assert not rule_allows(rule, resource("get", "pods", name="p2"))
    assert rule_allows(rule, resource("get", "pods", "log", name="p1"))
    assert not rule_allows(rule, resource("get", "pods", "exec", name="p1"))
    assert rule_allows({"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["*"]},
                       resource("update", "deployments", "status", group="apps"))
    path = Attributes(JANE, "get", False, "/apis/apps/v1")
    assert rule_allows({"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}, path)
    assert not rule_allows({"nonResourceURLs": ["/api"], "verbs": ["get"]}, path)


def test_subjects():
    assert subject_matches({"kind": "Group", "name": "devs"}, JANE, "")
    sa = UserInfo("system:serviceaccount:ns:builder")
    assert subject_matches({"kind": "ServiceAccount", "name": "builder"}, sa, "ns")
    assert not subject_matches({"kind": "ServiceAccount", "name": "builder", "namespace": "other"}, sa, "ns")
