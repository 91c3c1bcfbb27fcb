"""Kubernetes' authz library (k8s.io/apiserver/pkg/cel/library/authz.go, with the authzSelectors
additions): `authorizer.group('apps').resource('deployments').namespace('ns').check('create').allowed()`,
`authorizer.path('/healthz').check('get')`, `authorizer.serviceAccount(ns, name)`, and the decision's
allowed(), reason(), errored(), error().

The values are tagged maps, as the other opaque types are (see kube_apiserver.cel.values); the marker
key carries the value's fields. `authorizer` is an Authorizer value that also holds
`requestResource` (cel-go declares `authorizer.requestResource` as a variable of its own; here it is
a field of `authorizer`).

The interpreter calls library functions synchronously and the server's authorizers are coroutines,
so `check()` answers from a `Session` (set around an evaluation with `session()`): a decision the
session does not hold yet is recorded as missing and fails the call; the caller then resolves the
missing decisions and evaluates again (`Session.evaluate`). Expressions are pure, so the final
evaluation is the one cel-go would have done. Decisions are cached for the session's life, as the
admission plugins' caching authorizer does."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kube_apiserver.apimachinery import validation
from kube_apiserver.cel.errors import EvaluationError, LibraryError, NoSuchOverload

AUTHORIZER = "kubernetes.authorization.Authorizer"
PATH_CHECK = "kubernetes.authorization.PathCheck"
GROUP_CHECK = "kubernetes.authorization.GroupCheck"
RESOURCE_CHECK = "kubernetes.authorization.ResourceCheck"
DECISION = "kubernetes.authorization.Decision"
ALLOW = "Allow"
_MARK = "\x00"
MAX_ROUNDS = 64  # evaluations of one expression before missing decisions count as an error
Object = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Check:
    """authorizer.AttributesRecord as the library fills it (APIVersion is always "*")."""

    username: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...]
    verb: str
    resource_request: bool
    path: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""
    label_selector: str = ""


Authorize = Callable[[Check], Awaitable[tuple[str, str]]]


class Pending(LibraryError):
    """A decision the session has not asked the authorizer for yet."""

    def __init__(self) -> None:
        super().__init__("authorization decision pending")


@dataclass
class Session:
    authorize: Authorize
    decisions: dict[Check, tuple[str, str, str]] = field(default_factory=dict)  # decision, reason, error
    missing: dict[Check, None] = field(default_factory=dict)

    def decide(self, check: Check) -> tuple[str, str, str]:
        found = self.decisions.get(check)
        if found is None:
            self.missing[check] = None
            raise Pending()
        return found

    async def resolve(self) -> None:
        missing, self.missing = list(self.missing), {}
        for check in missing:
            try:
                decision, reason = await self.authorize(check)
                self.decisions[check] = (decision, reason, "")
            except Exception as err:  # noqa: BLE001 - an authorizer error is the decision's error()
                self.decisions[check] = ("NoOpinion", "", str(err) or type(err).__name__)

    async def evaluate(self, program: Any, activation: Any) -> Any:
        """program.evaluate(activation), again after each round of missing decisions."""
        for _ in range(MAX_ROUNDS):
            with session(self):
                try:
                    result, error = program.evaluate(activation), None
                except EvaluationError as err:
                    result, error = None, err
            if not self.missing:
                if error is not None:
                    raise error
                return result
            await self.resolve()
        raise EvaluationError("too many authorization checks")


_SESSION: contextvars.ContextVar[Session | None] = contextvars.ContextVar("cel_authz_session", default=None)


@contextlib.contextmanager
def session(current: Session) -> Iterator[None]:
    token = _SESSION.set(current)
    try:
        yield
    finally:
        _SESSION.reset(token)


# ---- values ----


def _value(type_name: str, fields: Object) -> Object:
    return {_MARK + type_name: fields}


def _fields(value: Any, type_name: str) -> Object:
    """The fields of a value of `type_name` (an Authorizer may carry requestResource beside)."""
    found = value.get(_MARK + type_name) if type(value) is dict else None
    if type(found) is not dict:
        raise NoSuchOverload()
    return found


def _string(value: Any) -> str:
    if type(value) is not str:
        raise NoSuchOverload()
    return value


def user_fields(username: str, uid: str = "", groups: tuple[str, ...] | list[str] = (),
                extra: dict[str, list[str]] | None = None) -> Object:
    return {"username": username, "uid": uid, "groups": list(groups),
            "extra": {key: list(values) for key, values in (extra or {}).items()}}


def resource_check(user: Object, group: str, resource: str, subresource: str = "", namespace: str = "",
                   name: str = "") -> Object:
    return _value(RESOURCE_CHECK, {"user": user, "group": group, "resource": resource, "subresource": subresource,
                                   "namespace": namespace, "name": name, "fieldSelector": "", "labelSelector": ""})


def authorizer_value(user: Object, request_resource: Object | None = None) -> Object:
    """The `authorizer` variable: checks as `user`; with `request_resource` (a resource_check), the
    `authorizer.requestResource` variable too."""
    value = _value(AUTHORIZER, {"user": user})
    if request_resource is not None:
        value["requestResource"] = request_resource
    return value


# ---- functions ----


def path(authz: Any, path_: Any) -> Object:
    user = _fields(authz, AUTHORIZER)["user"]
    if not _string(path_).strip():
        raise LibraryError("path must not be empty")
    return _value(PATH_CHECK, {"user": user, "path": path_})


def group(authz: Any, group_: Any) -> Object:
    return _value(GROUP_CHECK, {"user": _fields(authz, AUTHORIZER)["user"], "group": _string(group_)})


def service_account(authz: Any, namespace: Any, name: Any) -> Object:
    _fields(authz, AUTHORIZER)
    namespace, name = _string(namespace), _string(name)
    if validation.is_dns1123_subdomain(name):
        raise LibraryError("Invalid service account name")
    if validation.is_dns1123_label(namespace):
        raise LibraryError("Invalid service account namespace")
    # serviceaccount.ServiceAccountInfo.UserInfo()
    user = user_fields(f"system:serviceaccount:{namespace}:{name}",
                       groups=["system:serviceaccounts", f"system:serviceaccounts:{namespace}"])
    return _value(AUTHORIZER, {"user": user})


def resource(group_check: Any, resource_: Any) -> Object:
    fields = _fields(group_check, GROUP_CHECK)
    if not _string(resource_).strip():
        raise LibraryError("resource must not be empty")
    return resource_check(fields["user"], fields["group"], resource_)


def _with(key: str) -> Callable[[Any, Any], Object]:
    def setter(check: Any, value: Any) -> Object:
        fields = dict(_fields(check, RESOURCE_CHECK))
        fields[key] = _string(value)
        return _value(RESOURCE_CHECK, fields)

    setter.__name__ = key
    return setter


def _user_key(user: Object) -> tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    extra = tuple(sorted((key, tuple(values)) for key, values in (user.get("extra") or {}).items()))
    return user.get("username") or "", user.get("uid") or "", tuple(user.get("groups") or ()), extra


def _decision(check: Check) -> Object:
    current = _SESSION.get()
    if current is None:
        raise LibraryError("no authorizer available")
    decision, reason, error = current.decide(check)
    return _value(DECISION, {"decision": decision, "reason": reason, "error": error})


def check(target: Any, verb: Any) -> Object:
    verb = _string(verb)
    if type(target) is dict and _MARK + PATH_CHECK in target:
        fields = _fields(target, PATH_CHECK)
        return _decision(Check(*_user_key(fields["user"]), verb, False, path=fields["path"]))
    fields = _fields(target, RESOURCE_CHECK)
    return _decision(Check(*_user_key(fields["user"]), verb, True, group=fields["group"],
                           resource=fields["resource"], subresource=fields["subresource"],
                           namespace=fields["namespace"], name=fields["name"],
                           field_selector=fields["fieldSelector"], label_selector=fields["labelSelector"]))


def _decision_field(key: str) -> Callable[[Any], Any]:
    def getter(decision: Any) -> Any:
        fields = _fields(decision, DECISION)
        if key == "allowed":
            return fields["decision"] == ALLOW
        if key == "errored":
            return fields["error"] != ""
        return fields[key]

    getter.__name__ = key
    return getter


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "path": path,
    "group": group,
    "serviceAccount": service_account,
    "resource": resource,
    "subresource": _with("subresource"),
    "namespace": _with("namespace"),
    "name": _with("name"),
    "fieldSelector": _with("fieldSelector"),
    "labelSelector": _with("labelSelector"),
    "check": check,
    "allowed": _decision_field("allowed"),
    "errored": _decision_field("errored"),
    "error": _decision_field("error"),
    "reason": _decision_field("reason"),
}
