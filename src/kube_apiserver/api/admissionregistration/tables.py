"""The tables kubectl prints (pkg/printers/internalversion/printers.go) and the protobuf messages
(k8s.io/api/admissionregistration/v1/generated.proto) of the group."""

from __future__ import annotations

from typing import Any

from ...apimachinery import protobuf
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

# Message names carry an AR prefix where another group has a message of the same name.
protobuf.define("""
MutatingWebhookConfiguration: metadata=1:ObjectMeta webhooks=2:MutatingWebhook[]
ValidatingWebhookConfiguration: metadata=1:ObjectMeta webhooks=2:ValidatingWebhook[]
MutatingWebhook: name=1:string clientConfig=2:ARWebhookClientConfig rules=3:ARRuleWithOperations[] failurePolicy=4:string? matchPolicy=9:string? namespaceSelector=5:LabelSelector? objectSelector=11:LabelSelector? sideEffects=6:string? timeoutSeconds=7:int32? admissionReviewVersions=8:string[] reinvocationPolicy=10:string? matchConditions=12:ARMatchCondition[]
ValidatingWebhook: name=1:string clientConfig=2:ARWebhookClientConfig rules=3:ARRuleWithOperations[] failurePolicy=4:string? matchPolicy=9:string? namespaceSelector=5:LabelSelector? objectSelector=10:LabelSelector? sideEffects=6:string? timeoutSeconds=7:int32? admissionReviewVersions=8:string[] matchConditions=11:ARMatchCondition[]
ARWebhookClientConfig: url=3:string? service=1:ARServiceReference? caBundle=2:bytes
ARServiceReference: namespace=1:string name=2:string path=3:string? port=4:int32?
ARRuleWithOperations: operations=1:string[] rule=2:ARRule^
ARRule: apiGroups=1:string[] apiVersions=2:string[] resources=3:string[] scope=4:string?
ARMatchCondition: name=1:string expression=2:string
ValidatingAdmissionPolicy: metadata=1:ObjectMeta spec=2:ValidatingAdmissionPolicySpec status=3:ValidatingAdmissionPolicyStatus
ValidatingAdmissionPolicySpec: paramKind=1:ARParamKind? matchConstraints=2:ARMatchResources? validations=3:ARValidation[] failurePolicy=4:string? auditAnnotations=5:ARAuditAnnotation[] matchConditions=6:ARMatchCondition[] variables=7:ARVariable[]
ValidatingAdmissionPolicyStatus: observedGeneration=1:int64 typeChecking=2:ARTypeChecking? conditions=3:Condition[]
ARTypeChecking: expressionWarnings=1:ARExpressionWarning[]
ARExpressionWarning: fieldRef=2:string warning=3:string
ARParamKind: apiVersion=1:string kind=2:string
ARMatchResources: namespaceSelector=1:LabelSelector? objectSelector=2:LabelSelector? resourceRules=3:ARNamedRuleWithOperations[] excludeResourceRules=4:ARNamedRuleWithOperations[] matchPolicy=7:string?
ARNamedRuleWithOperations: resourceNames=1:string[] ruleWithOperations=2:ARRuleWithOperations^
ARValidation: expression=1:string message=2:string reason=3:string? messageExpression=4:string
ARVariable: name=1:string expression=2:string
ARAuditAnnotation: key=1:string valueExpression=2:string
ValidatingAdmissionPolicyBinding: metadata=1:ObjectMeta spec=2:ValidatingAdmissionPolicyBindingSpec
ValidatingAdmissionPolicyBindingSpec: policyName=1:string paramRef=2:ARParamRef? matchResources=3:ARMatchResources? validationActions=4:string[]
ARParamRef: name=1:string namespace=2:string selector=3:LabelSelector? parameterNotFoundAction=4:string?
""")
for _kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
              "ValidatingAdmissionPolicyBinding"):
    protobuf.register_kind(f"{GROUP}/v1", _kind)
