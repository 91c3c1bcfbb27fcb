"""matchConditions: CEL expressions over object, oldObject and request, all of which must be true for
a webhook to be called (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions, and the request
variable of pkg/admission/plugin/cel). Shared by the webhook plugins and the admission policies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..interfaces import Attributes
from .rules import GVK, GVR

Object = dict[str, Any]
VARIABLES = ("object", "oldObject", "request", "authorizer")


def user_info(attrs: Attributes) -> Object:
    """authenticationv1.UserInfo as JSON (username always present, as AdmissionReview writes it)."""
    return {"username": attrs.user.name, **attrs.user.to_json()}


OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def operation_options(attrs: Attributes) -> Object | None:
    """GetOperationOptions: the request's options object; the handlers' when they pass it, else the
    options object the operation implies."""
    if attrs.options:
        return attrs.options
    kind = OPTIONS_KINDS.get(attrs.operation)
    if kind is None:
        return None
    options: Object = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if attrs.dry_run:
        options["dryRun"] = ["All"]
    return options


def admission_request(attrs: Attributes, resource: GVR, kind: GVK, request_resource: GVR, request_kind: GVK,
                      subresource: str) -> Object:
    """The AdmissionRequest fields but uid and the objects, in admission/v1 order (omitempty honoured)."""
    request: Object = {"kind": kind.as_dict(), "resource": resource.as_dict()}
    if subresource:
        request["subResource"] = subresource
    request["requestKind"] = request_kind.as_dict()
    request["requestResource"] = request_resource.as_dict()
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    request["operation"] = attrs.operation
    request["userInfo"] = user_info(attrs)
    return request


@dataclass(frozen=True)
class Result:
    matches: bool
    error: str = ""


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error()."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class Matcher:
    """Compiled once per stored configuration; a false condition wins over errors in the others, and
    errors fail the request or skip the webhook as the failure policy says."""

    def __init__(self, conditions: list[Object], failure_policy: str | None, variables: tuple[str, ...] = VARIABLES):
        from ... import cel  # imported on first use: the CEL libraries are only needed once there is CEL

        self.evaluation_error = cel.EvaluationError
        self.fail = failure_policy in (None, "Fail")
        self.programs: list[tuple[str, Any]] = []
        for condition in conditions:
            try:
                program: Any = cel.compile(str(condition.get("expression") or ""), variables=variables)
            except cel.CompileError as err:
                program = err  # only reachable for expressions stored before the environment changed
            self.programs.append((str(condition.get("name") or ""), program))

    def __bool__(self) -> bool:
        return bool(self.programs)

    def match(self, activation: Object) -> Result:
        errors: list[str] = []
        for _name, program in self.programs:
            if isinstance(program, Exception):
                errors.append(str(program))
                continue
            try:
                value = program.evaluate(activation)
            except self.evaluation_error as err:
                errors.append(str(err))
                continue
            if value is False:
                return Result(False)
            if value is not True:
                errors.append(f"expected bool result, got {type(value).__name__}")
        if errors:
            return Result(False, _aggregate(errors)) if self.fail else Result(False)
        return Result(True)
