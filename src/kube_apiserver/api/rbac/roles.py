"""roles and clusterroles (pkg/registry/rbac/role, clusterrole; pkg/apis/rbac/validation ValidateRole,
ValidateClusterRole, ValidatePolicyRule).

A ClusterRole's aggregationRule is validated here; filling its rules from the selected ClusterRoles is
kube-controller-manager's clusterrole-aggregation controller, not the API server's."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.labels import SelectorParseError, selector_from_label_selector
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.strategy import Strategy

Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
ROLE_INFO = ResourceInfo(GROUP, "v1", "roles", "Role", "role", True)
CLUSTER_ROLE_INFO = ResourceInfo(GROUP, "v1", "clusterroles", "ClusterRole", "clusterrole", False)
SELECTORS_PATH = field.Path("aggregationRule", "clusterRoleSelectors")


def validate_rbac_name(name: str, prefix: bool) -> list[str]:
    """ValidateRBACName: any path segment name, whether or not it is a generateName prefix."""
    return validation.is_valid_path_segment_name(name)


def validate_policy_rule(rule: Object, namespaced: bool, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    if not rule.get("verbs"):
        errs.append(field.required(path.child("verbs"), "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.append(field.invalid(path.child("nonResourceURLs"), urls,
                                      "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(field.invalid(path.child("nonResourceURLs"), urls,
                                      "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.get("apiGroups"):
        errs.append(field.required(path.child("apiGroups"), "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        errs.append(field.required(path.child("resources"), "resource rules must supply at least one resource"))
    return errs


def validate_rules(obj: Object, namespaced: bool) -> field.ErrorList:
    errs: field.ErrorList = []
    for i, rule in enumerate(obj.get("rules") or []):
        errs += validate_policy_rule(rule or {}, namespaced, field.Path("rules").index(i))
    return errs


def validate_aggregation_rule(rule: Object | None) -> field.ErrorList:
    if rule is None:
        return []
    selectors = rule.get("clusterRoleSelectors") or []
    errs: field.ErrorList = []
    if not selectors:
        errs.append(field.required(SELECTORS_PATH, "at least one clusterRoleSelector required if aggregationRule "
                                                   "is non-nil"))
    for i, selector in enumerate(selectors):
        errs += validation.validate_label_selector(selector or {}, SELECTORS_PATH.index(i))
        try:
            selector_from_label_selector(selector or {})
        except SelectorParseError:
            errs.append(field.invalid(SELECTORS_PATH.index(i), None, "invalid label selector."))
    return errs


class RoleStrategy(Strategy):
    allow_create_on_update = True
    name_validator = staticmethod(validate_rbac_name)

    # `rules` has no omitempty: a role stored without rules reads `rules: null`, as Go writes a nil slice
    # (set after the managed fields are recorded: nobody owns a nil slice).
    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj.setdefault("rules", None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        obj.setdefault("rules", None)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_rules(obj, self.info.namespaced)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        # ValidateRoleUpdate repeats ValidateRole, so kube-apiserver reports those causes twice; the
        # caller adds validate() once more.
        return self.validate(ctx, obj) + super().validate_update(ctx, obj, old)


class ClusterRoleStrategy(RoleStrategy):
    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_aggregation_rule(obj.get("aggregationRule"))
