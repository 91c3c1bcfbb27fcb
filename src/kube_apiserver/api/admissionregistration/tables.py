"""The tables kubectl prints (pkg/printers/internalversion/printers.go) and the protobuf messages
(k8s.io/api/admissionregistration/v1/generated.proto) of the group."""

from __future__ import annotations

from typing import Any

from ...registry.rest import TableColumn
from ...registry.table import AGE, NAME, TableConvertor, age, name
from .defaults import as_dict, as_list

Object = dict[str, Any]
GROUP = "admissionregistration.k8s.io"

WEBHOOKS = TableColumn("Webhooks", "integer", "", "Webhooks indicates the number of webhooks registered in this "
                                                  "configuration")
WEBHOOK_TABLE = TableConvertor((NAME, WEBHOOKS, AGE),
                               lambda o: [name(o), len(as_list(o.get("webhooks"))), age(o)])


def param_kind(obj: Object) -> str:
    kind = as_dict(obj.get("spec")).get("paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{kind.get('apiVersion') or ''}/{kind.get('kind') or ''}"


POLICY_TABLE = TableConvertor((
    NAME,
    TableColumn("Validations", "integer", "", "Validations indicates the number of validation rules defined in "
                                              "this configuration"),
    TableColumn("ParamKind", "string", "", "ParamKind specifies the kind of resources used to parameterize this "
                                           "policy"),
    AGE,
), lambda o: [name(o), len(as_list(as_dict(o.get("spec")).get("validations"))), param_kind(o), age(o)])


def _requirement_string(req: Object) -> str:
    """Go's generated LabelSelectorRequirement.String(), without its leading '&'."""
    values = " ".join(str(v) for v in as_list(req.get("values")))
    return f"LabelSelectorRequirement{{Key:{req.get('key') or ''},Operator:{req.get('operator') or ''}," \
           f"Values:[{values}],}}"


def selector_string(selector: Object) -> str:
    """Go's generated LabelSelector.String(), which printers.go shows for a paramRef selector."""
    labels = as_dict(selector.get("matchLabels"))
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    expressions = "".join(_requirement_string(as_dict(r)) + "," for r in as_list(selector.get("matchExpressions")))
    return f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}}," \
           f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"


def param_ref(obj: Object) -> str:
    ref = as_dict(obj.get("spec")).get("paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if ref.get("name"):
        # Whether the param is cluster-scoped is unknown here: a name without namespace gets "*".
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if isinstance(ref.get("selector"), dict):
        return selector_string(ref["selector"])
    return "<unset>"


BINDING_TABLE = TableConvertor((
    NAME,
    TableColumn("PolicyName", "string", "", "PolicyName indicates the policy definition which the policy binding "
                                            "binded to"),
    TableColumn("ParamRef", "string", "", "ParamRef indicates the param resource which sets the configration param"),
    AGE,
), lambda o: [name(o), as_dict(o.get("spec")).get("policyName") or "", param_ref(o), age(o)])
