"""rolebindings and clusterrolebindings (pkg/registry/rbac/rolebinding, clusterrolebinding;
pkg/apis/rbac/validation ValidateRoleBinding, ValidateClusterRoleBinding; pkg/apis/rbac/v1 defaults)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from .roles import GROUP, validate_rbac_name

Object = dict[str, Any]
ROLE_BINDING_INFO = ResourceInfo(GROUP, "v1", "rolebindings", "RoleBinding", "rolebinding", True)
CLUSTER_ROLE_BINDING_INFO = ResourceInfo(GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding",
                                         "clusterrolebinding", False)
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")
ROLE_REF = field.Path("roleRef")


def set_defaults(obj: Object) -> None:
    """SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding and SetDefaults_Subject."""
    if not isinstance(obj.get("roleRef"), dict):
        obj["roleRef"] = {}
    if not obj["roleRef"].get("apiGroup"):
        obj["roleRef"]["apiGroup"] = GROUP
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


def validate_role_ref(ref: Object, kinds: tuple[str, ...]) -> field.ErrorList:
    errs: field.ErrorList = []
    if ref.get("apiGroup", "") != GROUP:
        errs.append(field.not_supported(ROLE_REF.child("apiGroup"), ref.get("apiGroup", ""), [GROUP]))
    if ref.get("kind", "") not in kinds:
        errs.append(field.not_supported(ROLE_REF.child("kind"), ref.get("kind", ""), kinds))
    ref_name = ref.get("name", "")
    if not ref_name:
        errs.append(field.required(ROLE_REF.child("name"), ""))
    errs += [field.invalid(ROLE_REF.child("name"), ref_name, msg) for msg in validate_rbac_name(ref_name, False)]
    return errs


def validate_subject(subject: Object, namespaced: bool, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    kind, subject_name, api_group = subject.get("kind", ""), subject.get("name", ""), subject.get("apiGroup", "")
    if not subject_name:
        errs.append(field.required(path.child("name"), ""))
    if kind == "ServiceAccount":
        if subject_name:
            errs += [field.invalid(path.child("name"), subject_name, msg)
                     for msg in validation.validate_service_account_name(subject_name, False)]
        if api_group:
            errs.append(field.not_supported(path.child("apiGroup"), api_group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(field.required(path.child("namespace"), ""))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            errs.append(field.not_supported(path.child("apiGroup"), api_group, [GROUP]))
    else:
        errs.append(field.not_supported(path.child("kind"), kind, SUBJECT_KINDS))
    return errs


def role_ref_struct(obj: Object) -> field.OrderedStruct:
    """The internal rbac.RoleRef as Go renders it in an error (JSON of its Go field names)."""
    ref = obj.get("roleRef") or {}
    return field.OrderedStruct((("APIGroup", ref.get("apiGroup", "")), ("Kind", ref.get("kind", "")),
                                ("Name", ref.get("name", ""))))


class RoleBindingStrategy(Strategy):
    allow_create_on_update = True
    name_validator = staticmethod(validate_rbac_name)
    role_kinds: tuple[str, ...] = ("Role", "ClusterRole")

    def default(self, obj: Object) -> None:
        set_defaults(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj) + validate_role_ref(obj.get("roleRef") or {}, self.role_kinds)
        for i, subject in enumerate(obj.get("subjects") or []):
            errs += validate_subject(subject or {}, self.info.namespaced, field.Path("subjects").index(i))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        # Validate*BindingUpdate repeats Validate*Binding, so kube-apiserver reports those causes twice;
        # the caller adds validate() once more.
        errs = self.validate(ctx, obj) + super().validate_update(ctx, obj, old)
        if role_ref_struct(obj) != role_ref_struct(old):
            errs.append(field.invalid(ROLE_REF, role_ref_struct(obj), "cannot change roleRef"))
        return errs


class ClusterRoleBindingStrategy(RoleBindingStrategy):
    role_kinds = ("ClusterRole",)


def subjects_strings(obj: Object) -> tuple[str, str, str]:
    """rbac.SubjectsStrings, joined as the printer joins them: users, groups, service accounts."""
    users, groups, sas = [], [], []
    for subject in obj.get("subjects") or []:
        kind, subject_name = subject.get("kind", ""), subject.get("name", "")
        if kind == "ServiceAccount":
            sas.append(f"{subject.get('namespace', '')}/{subject_name}")
        elif kind == "User":
            users.append(subject_name)
        elif kind == "Group":
            groups.append(subject_name)
    return ", ".join(users), ", ".join(groups), ", ".join(sas)


def _row(obj: Object) -> list[Any]:
    ref = obj.get("roleRef") or {}
    return [name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(obj), *subjects_strings(obj)]


def binding_table(kind: str, role_ref_doc: str) -> TableConvertor:
    """The printer columns of k8s' printers.go; the server prints them wide."""
    return TableConvertor((
        NAME,
        TableColumn("Role", "string", "", role_ref_doc),
        AGE,
        TableColumn("Users", "string", "", f"Users in the {kind}", 1),
        TableColumn("Groups", "string", "", f"Groups in the {kind}", 1),
        TableColumn("ServiceAccounts", "string", "", f"ServiceAccounts in the {kind}", 1),
    ), _row)


ROLE_BINDING_TABLE = binding_table("roleBinding", (
    "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the "
    "RoleRef cannot be resolved, the Authorizer must return an error."))
CLUSTER_ROLE_BINDING_TABLE = binding_table("clusterRoleBinding", (
    "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the "
    "Authorizer must return an error."))
