"""authorization.k8s.io/v1: the access reviews (pkg/registry/authorization), answered by the server's own
authorizer and its rule resolvers; nothing is stored."""

from __future__ import annotations

from typing import Any

from ..apimachinery import errors, field, fields
from ..authorization.authorizer import ALLOW, DENY, Attributes, AuthorizationError, Authorizer
from ..registry.context import Context, UserInfo
from ..registry.rest import ResourceInfo, ValidateObjectFunc
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory
from .authentication import ReviewREST, response

Object = dict[str, Any]
GROUP = "authorization.k8s.io"
DEPENDENCIES = ("authorizer",)
SUBJECT = ResourceInfo(GROUP, "v1", "subjectaccessreviews", "SubjectAccessReview", "subjectaccessreview", False)
SELF_SUBJECT = ResourceInfo(GROUP, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                            "selfsubjectaccessreview", False)
LOCAL_SUBJECT = ResourceInfo(GROUP, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview",
                             "localsubjectaccessreview", True)
SELF_SUBJECT_RULES = ResourceInfo(GROUP, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
                                  "selfsubjectrulesreview", False)
SPEC = field.Path("spec")


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def validate_attributes(spec: Object) -> field.ErrorList:
    """Exactly one of resourceAttributes and nonResourceAttributes (ValidateSelfSubjectAccessReviewSpec)."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        return [field.invalid(SPEC.child("nonResourceAttributes"), non_resource,
                              "cannot be specified in combination with resourceAttributes")]
    if resource is None and non_resource is None:
        return [field.invalid(SPEC.child("resourceAttributes"), non_resource,
                              "exactly one of nonResourceAttributes or resourceAttributes must be specified")]
    return []


def validate_subject(spec: Object) -> field.ErrorList:
    errs = validate_attributes(spec)
    if not spec.get("user") and not spec.get("groups"):
        errs.append(field.invalid(SPEC.child("user"), spec.get("user", ""),
                                  "at least one of user or group must be specified"))
    return errs


def validate_empty_meta(obj: Object, except_namespace: bool = False) -> field.ErrorList:
    meta = {k: v for k, v in _dict(obj.get("metadata")).items() if k != "managedFields" and v not in (None, "")}
    if except_namespace:
        meta.pop("namespace", None)
    if not meta:
        return []
    what = "must be empty except for namespace" if except_namespace else "must be empty"
    return [field.invalid(field.Path("metadata"), obj.get("metadata"), what)]


def attributes_from(user: UserInfo, spec: Object) -> Attributes:
    """AuthorizationAttributesFrom: what the spec asks about, for that user."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(user, resource.get("verb", ""), True, namespace=resource.get("namespace", ""),
                          api_group=resource.get("group", ""), api_version=resource.get("version") or "*",
                          resource=resource.get("resource", ""), subresource=resource.get("subresource", ""),
                          name=resource.get("name", ""), field_selector=_field_selector(resource))
    non_resource = _dict(spec.get("nonResourceAttributes"))
    return Attributes(user, non_resource.get("verb", ""), False, path=non_resource.get("path", ""))


def _field_selector(resource: Object) -> str:
    """resourceAttributes.fieldSelector as a raw selector: rawSelector, else its requirements (In or NotIn one
    value); requirements that are no selector (several values, Exists) select nothing, as upstream's parse
    error leaves none."""
    selector = _dict(resource.get("fieldSelector"))
    if selector.get("rawSelector"):
        return str(selector["rawSelector"])
    terms = []
    for requirement in selector.get("requirements") or []:
        requirement = _dict(requirement)
        operator, values = requirement.get("operator"), requirement.get("values") or []
        if operator not in ("In", "NotIn") or len(values) != 1:
            return ""
        equals = "=" if operator == "In" else "!="
        terms.append(f"{requirement.get('key', '')}{equals}{fields.escape_value(values[0])}")
    return ",".join(terms)


def spec_user(spec: Object) -> UserInfo:
    extra = {key: list(values or []) for key, values in _dict(spec.get("extra")).items()}
    return UserInfo(spec.get("user", ""), spec.get("uid", ""), tuple(spec.get("groups") or ()), extra)


class AccessReviewREST(ReviewREST):
    def __init__(self, info: ResourceInfo, authorizer: Authorizer):
        super().__init__(info)
        self.authorizer = authorizer

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        spec = _dict(obj.get("spec"))
        errs = self.validate(ctx, obj, spec)
        if errs:
            raise errors.invalid(self.info.kind, GROUP, "", errs)
        self.check_namespace(ctx, spec)
        await self._validate(ctx, obj, create_validation)
        evaluation_error = ""
        try:
            decision, reason = await self.authorizer.authorize(attributes_from(self.user(ctx, spec), spec))
        except AuthorizationError as err:  # a failed webhook: its failure policy's decision, and the error
            decision, reason, evaluation_error = err.decision, "", str(err)
        status: Object = {"allowed": decision == ALLOW}
        if decision == DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        if evaluation_error:
            status["evaluationError"] = evaluation_error
        return response(obj, status)

    def validate(self, ctx: Context, obj: Object, spec: Object) -> field.ErrorList:
        return validate_subject(spec) + validate_empty_meta(obj)

    def check_namespace(self, ctx: Context, spec: Object) -> None:
        return None

    def user(self, ctx: Context, spec: Object) -> UserInfo:
        return spec_user(spec)


class SelfSubjectAccessReviewREST(AccessReviewREST):
    def validate(self, ctx: Context, obj: Object, spec: Object) -> field.ErrorList:
        return validate_attributes(spec) + validate_empty_meta(obj)

    def user(self, ctx: Context, spec: Object) -> UserInfo:
        return ctx.user


class LocalSubjectAccessReviewREST(AccessReviewREST):
    def validate(self, ctx: Context, obj: Object, spec: Object) -> field.ErrorList:
        errs = validate_subject(spec) + validate_empty_meta(obj, except_namespace=True)
        namespace = _dict(obj.get("metadata")).get("namespace", "")
        resource = spec.get("resourceAttributes")
        if isinstance(resource, dict) and resource.get("namespace", "") != namespace:
            errs.append(field.invalid(field.Path("spec.resourceAttributes.namespace"),
                                      resource.get("namespace", ""), "must match metadata.namespace"))
        if spec.get("nonResourceAttributes") is not None:
            errs.append(field.invalid(field.Path("spec.nonResourceAttributes"), spec["nonResourceAttributes"],
                                      "disallowed on this kind of request"))
        return errs

    def check_namespace(self, ctx: Context, spec: Object) -> None:
        if not ctx.namespace:
            raise errors.bad_request("namespace is required on this type: ")
        if _dict(spec.get("resourceAttributes")).get("namespace", "") != ctx.namespace:
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {ctx.namespace}")


class SelfSubjectRulesReviewREST(ReviewREST):
    def __init__(self, authorizer: Authorizer):
        super().__init__(SELF_SUBJECT_RULES)
        self.authorizer = authorizer

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        namespace = _dict(obj.get("spec")).get("namespace", "")
        if not namespace:
            raise errors.bad_request("no namespace on request")
        await self._validate(ctx, obj, create_validation)
        rules_for = getattr(self.authorizer, "rules_for", None)
        if rules_for is None:
            status: Object = {"resourceRules": [], "nonResourceRules": [], "incomplete": True}
            return response(obj, status)
        rules = await rules_for(ctx.user, namespace)
        status = {"resourceRules": rules.resource_rules, "nonResourceRules": rules.non_resource_rules,
                  "incomplete": rules.incomplete}
        if rules.evaluation_error:
            status["evaluationError"] = rules.evaluation_error
        return response(obj, status)


def new_api_group_info(storage: StorageFactory, authorizer: Authorizer | None = None) -> APIGroupInfo:
    assert authorizer is not None, "the access reviews ask the server's authorizer"
    return APIGroupInfo(GROUP, {"v1": {
        "localsubjectaccessreviews": LocalSubjectAccessReviewREST(LOCAL_SUBJECT, authorizer),
        "selfsubjectaccessreviews": SelfSubjectAccessReviewREST(SELF_SUBJECT, authorizer),
        "selfsubjectrulesreviews": SelfSubjectRulesReviewREST(authorizer),
        "subjectaccessreviews": AccessReviewREST(SUBJECT, authorizer),
    }})
