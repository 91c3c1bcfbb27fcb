"""The impersonation filter alone: what each header asks to be checked, the identity it builds,
the refusals and the headers it leaves behind."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.authorization.authorizer import ALLOW, NO_OPINION, Attributes
from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.registry.context import UserInfo
from kube_apiserver.server.filters.impersonation import (
    build_impersonation_requests,
    split_service_account,
    unescape_extra_key,
    with_impersonation,
)

ALICE = UserInfo("alice", "1", ("devs", "system:authenticated"))


class Recording:
    """Allows everything but what `deny` names (resource, name); remembers each check."""

    def __init__(self, deny: tuple[str, str] | None = None, reason: str = ""):
        self.deny, self.reason, self.seen = deny, reason, []

    async def authorize(self, attrs: Attributes) -> tuple[str, str]:
        self.seen.append(attrs)
        if self.deny == (attrs.resource, attrs.name):
            return NO_OPINION, self.reason
        return ALLOW, ""


def run(headers: dict[str, str], authorizer: Recording, user: UserInfo | None = ALICE,
        values: dict[str, Any] | None = None) -> tuple[Response, Request | None]:
    reached: list[Request] = []

    async def inner(req: Request) -> Response:
        reached.append(req)
        return Response(200)

    req = Request("GET", "/api/v1/namespaces", b"limit=1", dict(headers))
    req.user = user
    req.values.update(values or {})
    resp = asyncio.run(with_impersonation(inner, authorizer)(req))
    return resp, (reached[0] if reached else None)


def test_no_headers_pass_through_without_checks():
    auth = Recording()
    resp, req = run({"accept": "application/json"}, auth)
    assert resp.status == 200 and req is not None and req.user is ALICE and auth.seen == []


def test_user_gets_system_authenticated_and_headers_are_removed():
    auth = Recording()
    resp, req = run({"impersonate-user": "bob", "accept": "*/*"}, auth)
    assert req is not None and req.user == UserInfo("bob", "", ("system:authenticated",), {})
    assert req.headers == {"accept": "*/*"}
    [attrs] = auth.seen
    assert (attrs.user, attrs.verb, attrs.resource, attrs.name, attrs.api_group, attrs.namespace) == (
        ALICE, "impersonate", "users", "bob", "", "")
    assert attrs.is_resource_request


def test_audit_event_records_the_impersonated_user():
    ac = SimpleNamespace(impersonated_user=None)
    run({"impersonate-user": "bob", "impersonate-extra-b": "2", "impersonate-extra-a": "1"}, Recording(),
        values={"audit": ac})
    assert ac.impersonated_user == {"username": "bob", "groups": ["system:authenticated"],
                                    "extra": {"a": ["1"], "b": ["2"]}}
    assert list(ac.impersonated_user["extra"]) == ["a", "b"]


def test_groups_extras_and_uid_each_checked():
    auth = Recording()
    headers = {"impersonate-user": "bob", "impersonate-group": "g1, g2", "impersonate-uid": "u-1",
               "impersonate-extra-scopes": "view, edit", "impersonate-extra-example.com%2fteam": "a"}
    _, req = run(headers, auth)
    assert req is not None
    assert req.user == UserInfo("bob", "u-1", ("g1", "g2", "system:authenticated"),
                                {"scopes": ["view", "edit"], "example.com/team": ["a"]})
    checks = [(a.resource, a.subresource, a.name, a.api_group, a.api_version) for a in auth.seen]
    assert checks == [
        ("users", "", "bob", "", ""), ("groups", "", "g1", "", ""), ("groups", "", "g2", "", ""),
        ("userextras", "scopes", "view", "authentication.k8s.io", "v1"),
        ("userextras", "scopes", "edit", "authentication.k8s.io", "v1"),
        ("userextras", "example.com/team", "a", "authentication.k8s.io", "v1"),
        ("uids", "", "u-1", "authentication.k8s.io", "v1")]
    assert not any(h.startswith("impersonate-") for h in req.headers)


def test_service_account_checked_in_its_namespace_with_its_groups():
    auth = Recording()
    _, req = run({"impersonate-user": "system:serviceaccount:default:builder"}, auth)
    assert req is not None and req.user.name == "system:serviceaccount:default:builder"
    assert req.user.groups == ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
    [attrs] = auth.seen
    assert (attrs.resource, attrs.namespace, attrs.name, attrs.api_group) == (
        "serviceaccounts", "default", "builder", "")


def test_named_groups_replace_a_service_accounts_own():
    _, req = run({"impersonate-user": "system:serviceaccount:ns:sa", "impersonate-group": "ops"}, Recording())
    assert req is not None and req.user.groups == ("ops", "system:authenticated")


def test_authenticated_groups_not_doubled_and_anonymous_stays_unauthenticated():
    _, req = run({"impersonate-user": "bob", "impersonate-group": "system:unauthenticated"}, Recording())
    assert req is not None and req.user.groups == ("system:unauthenticated",)
    _, req = run({"impersonate-user": "system:anonymous"}, Recording())
    assert req is not None and req.user.groups == ("system:unauthenticated",)


def test_refusal_is_403_with_kubernetes_wording():
    with pytest.raises(errors.StatusError) as err:
        run({"impersonate-user": "bob"}, Recording(deny=("users", "bob")))
    assert err.value.code == 403 and err.value.message == (
        'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the '
        'cluster scope')
    assert err.value.details == {"name": "bob", "kind": "users"}
    with pytest.raises(errors.StatusError) as err:
        run({"impersonate-user": "system:serviceaccount:kube-system:x"}, Recording(("serviceaccounts", "x"), "why"))
    assert err.value.message == (
        'serviceaccounts "x" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API '
        'group "" in the namespace "kube-system": why')
    with pytest.raises(errors.StatusError) as err:
        run({"impersonate-user": "bob", "impersonate-extra-scopes": "s"}, Recording(("userextras", "s")))
    assert err.value.message == (
        'userextras.authentication.k8s.io "s" is forbidden: User "alice" cannot impersonate resource '
        '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')


def test_refusal_stops_before_the_handler():
    auth = Recording(deny=("groups", "g1"))
    with pytest.raises(errors.StatusError):
        run({"impersonate-user": "bob", "impersonate-group": "g1, g2"}, auth)
    assert [a.name for a in auth.seen] == ["bob", "g1"]


def test_without_a_user_is_an_internal_error_in_plain_text():
    resp, req = run({"impersonate-group": "ops", "impersonate-uid": "7"}, Recording())
    assert req is None and resp.status == 500
    assert ("content-type", "text/plain; charset=utf-8") in resp.headers
    assert resp.body.decode() == (
        'Internal Server Error: "/api/v1/namespaces?limit=1": requested [{Group  ops    } '
        '{UID  7  authentication.k8s.io/v1  }] without impersonating a user\n')


def test_no_authenticated_user_is_an_internal_error():
    resp, _ = run({"impersonate-user": "bob"}, Recording(), user=None)
    assert resp.status == 500 and b"no user found for request" in resp.body


def test_extra_only_lists_its_key_in_field_path():
    reqs = build_impersonation_requests({"impersonate-user": "u", "impersonate-extra-k": "v"})
    assert [r.go_string() for r in reqs] == ["{User  u    }", "{UserExtra  v  authentication.k8s.io/v1  k}"]


@pytest.mark.parametrize(("username", "expected"), [
    ("system:serviceaccount:default:sa", ("default", "sa")),
    ("system:serviceaccount:default:sa.v1", ("default", "sa.v1")),
    ("system:serviceaccount:default", None),
    ("system:serviceaccount:a:b:c", None),
    ("system:serviceaccount:Bad:sa", None),
    ("system:serviceaccount:a.b:sa", None),
    ("bob", None),
])
def test_split_service_account(username, expected):
    assert split_service_account(username) == expected


def test_extra_key_unescaping():
    assert unescape_extra_key("example.com%2fteam") == "example.com/team"
    assert unescape_extra_key("bad%zzkey") == "bad%zzkey"
    assert unescape_extra_key("plain") == "plain"
