"""admissionregistration.k8s.io/v1: MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
ValidatingAdmissionPolicy (with /status) and ValidatingAdmissionPolicyBinding, all cluster-scoped
(pkg/apis/admissionregistration, pkg/registry/admissionregistration).

Only the API objects live here: the webhook admission plugins that call the configured webhooks are in
kube_apiserver.admission.webhook (which also holds the rule and selector matching policies reuse)."""

from __future__ import annotations

from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.subresource import StatusREST
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from .strategy import BindingStrategy, PolicyStatusStrategy, PolicyStrategy, WebhookConfigurationStrategy
from .tables import BINDING_TABLE, GROUP, POLICY_TABLE, WEBHOOK_TABLE

CATEGORIES = ("api-extensions",)
MUTATING = ResourceInfo(GROUP, "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
                        "mutatingwebhookconfiguration", False, categories=CATEGORIES)
VALIDATING = ResourceInfo(GROUP, "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
                          "validatingwebhookconfiguration", False, categories=CATEGORIES)
POLICIES = ResourceInfo(GROUP, "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy",
                        "validatingadmissionpolicy", False, categories=CATEGORIES)
BINDINGS = ResourceInfo(GROUP, "v1", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding",
                        "validatingadmissionpolicybinding", False, categories=CATEGORIES)


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    mutating = Store(MUTATING, WebhookConfigurationStrategy(MUTATING, True), storage,
                     "/registry/mutatingwebhookconfigurations", WEBHOOK_TABLE)
    validating = Store(VALIDATING, WebhookConfigurationStrategy(VALIDATING, False), storage,
                       "/registry/validatingwebhookconfigurations", WEBHOOK_TABLE)
    policy_strategy = PolicyStrategy(POLICIES)
    policies = Store(POLICIES, policy_strategy, storage, "/registry/validatingadmissionpolicies", POLICY_TABLE)
    bindings = Store(BINDINGS, BindingStrategy(BINDINGS), storage, "/registry/validatingadmissionpolicybindings",
                     BINDING_TABLE)
    return APIGroupInfo(GROUP, {"v1": {
        "mutatingwebhookconfigurations": mutating,
        "validatingwebhookconfigurations": validating,
        "validatingadmissionpolicies": policies,
        "validatingadmissionpolicies/status": StatusREST(policies, strategy=PolicyStatusStrategy(policy_strategy)),
        "validatingadmissionpolicybindings": bindings,
    }})
