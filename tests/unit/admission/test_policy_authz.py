"""The CEL authz library: checks built from `authorizer`, answered by a session's authorizer (decisions
asked once, evaluation repeated until none is missing), the decision accessors and the errors."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver import cel
from kube_apiserver.cel.library import authz

VARIABLES = ("authorizer", "object")
USER = authz.user_fields("alice", "u1", ["devs"], {"scopes": ["a"]})


def authorizer() -> dict:
    return authz.authorizer_value(USER, authz.resource_check(USER, "apps", "deployments", "", "ns", "web"))


class Recorder:
    """An authorizer allowing what `allowed` lists (by verb), recording every check it is asked."""

    def __init__(self, *allowed: str, fail: bool = False):
        self.allowed, self.fail = set(allowed), fail
        self.asked: list[authz.Check] = []

    async def __call__(self, check: authz.Check) -> tuple[str, str]:
        self.asked.append(check)
        if self.fail:
            raise RuntimeError("authorizer unavailable")
        return ("Allow", "rbac says yes") if check.verb in self.allowed else ("NoOpinion", "no rule")


def run(expression: str, recorder: Recorder, variables: dict | None = None) -> object:
    program = cel.compile(expression, variables=VARIABLES)
    session = authz.Session(recorder)
    return asyncio.run(session.evaluate(program, {"authorizer": authorizer(), **(variables or {})}))


def test_resource_check_carries_every_attribute() -> None:
    recorder = Recorder("get")
    expression = ("authorizer.group('').resource('secrets').subresource('status').namespace('prod').name('s1')"
                  ".check('get').allowed()")
    assert run(expression, recorder) is True
    assert recorder.asked == [authz.Check("alice", "u1", ("devs",), (("scopes", ("a",)),), "get", True, group="",
                                          resource="secrets", subresource="status", namespace="prod", name="s1")]


def test_request_resource_and_decision_accessors() -> None:
    recorder = Recorder()
    assert run("authorizer.requestResource.check('create').reason()", recorder) == "no rule"
    assert recorder.asked[0].resource == "deployments" and recorder.asked[0].namespace == "ns"
    assert run("authorizer.requestResource.check('create').allowed()", Recorder("create")) is True
    assert run("authorizer.path('/healthz').check('get').allowed()", Recorder("get")) is True
    assert run("authorizer.path('/x').check('get').errored()", Recorder("get")) is False
    failing = Recorder(fail=True)
    assert run("authorizer.path('/x').check('get').error()", failing) == "authorizer unavailable"
    assert run("authorizer.path('/x').check('get').errored()", failing) is True


def test_decisions_are_asked_once_per_session_and_all_of_them_count() -> None:
    recorder = Recorder("list")
    expression = ("authorizer.group('apps').resource('a').check('get').allowed() || "
                  "authorizer.group('apps').resource('b').check('list').allowed() || "
                  "authorizer.group('apps').resource('a').check('get').allowed()")
    assert run(expression, recorder) is True
    assert [check.resource for check in recorder.asked] == ["a", "b"]


def test_service_account_checks_as_that_account() -> None:
    recorder = Recorder("get")
    assert run("authorizer.serviceAccount('kube-system', 'builder').path('/metrics').check('get').allowed()",
               recorder) is True
    check = recorder.asked[0]
    assert (check.username, check.groups, check.resource_request, check.path) == (
        "system:serviceaccount:kube-system:builder",
        ("system:serviceaccounts", "system:serviceaccounts:kube-system"), False, "/metrics")


@pytest.mark.parametrize(("expression", "message"), [
    ("authorizer.path(' ').check('get').allowed()", "path must not be empty"),
    ("authorizer.group('').resource('').check('get').allowed()", "resource must not be empty"),
    ("authorizer.serviceAccount('ns', 'Bad_Name').path('/').check('get').allowed()",
     "Invalid service account name"),
    ("authorizer.serviceAccount('Bad.NS', 'sa').path('/').check('get').allowed()",
     "Invalid service account namespace"),
    ("object.check('get')", "no such overload"),
])
def test_errors(expression: str, message: str) -> None:
    with pytest.raises(cel.EvaluationError) as err:
        run(expression, Recorder(), {"object": {"a": 1}})
    assert str(err.value) == message


def test_checks_need_a_session() -> None:
    program = cel.compile("authorizer.path('/').check('get').allowed()", variables=VARIABLES)
    with pytest.raises(cel.EvaluationError, match="no authorizer available"):
        program.evaluate({"authorizer": authorizer()})


def test_library_functions_are_declared() -> None:
    with pytest.raises(cel.CompileError, match="undeclared reference to 'authorizer'"):
        cel.compile("authorizer.path('/').check('get').allowed()", variables=("object",))
    assert cel.compile("authorizer.group('').resource('pods').fieldSelector('a=b').labelSelector('x')"
                       ".check('list').allowed()", variables=VARIABLES)
