"""Admission flags (k8s.io/apiserver/pkg/server/options/admission.go with kube-apiserver's plugin list).

The flags only select plugin names; `enabled_plugin_names()` gives the resulting ordered chain. Which of
those plugins the server actually runs is up to the admission package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver.cli.flagset import FlagSet

# kube-apiserver v1.34 AllOrderedPlugins: the order plugins run in.
ALL_ORDERED_PLUGINS = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)

DEFAULT_ON_PLUGINS = frozenset(
    {
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "DefaultStorageClass",
        "PersistentVolumeClaimResize",
        "DefaultTolerationSeconds",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
        "StorageObjectInUseProtection",
        "Priority",
        "TaintNodesByCondition",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodSecurity",
        "MutatingAdmissionPolicy",
        "ValidatingAdmissionPolicy",
    }
)


def _plugin_help(verb: str, qualifier: str) -> str:
    default_on = ", ".join(p for p in ALL_ORDERED_PLUGINS if p in DEFAULT_ON_PLUGINS)
    return (
        f"admission plugins that should be {verb} {qualifier} ({default_on}). "
        f"Comma-delimited list of admission plugins: {', '.join(sorted(ALL_ORDERED_PLUGINS))}. "
        "The order of plugins in this flag does not matter."
    )


@dataclass
class AdmissionOptions:
    enable_plugins: list[str] = field(default_factory=list)
    disable_plugins: list[str] = field(default_factory=list)
    config_file: str = ""

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_slice_var(
            self,
            "enable_plugins",
            "enable-admission-plugins",
            _plugin_help("enabled", "in addition to default enabled ones"),
        )
        fs.string_slice_var(
            self,
            "disable_plugins",
            "disable-admission-plugins",
            _plugin_help("disabled", "although they are in the default enabled plugins list"),
        )
        fs.string_var(
            self, "config_file", "admission-control-config-file", "File with admission control configuration."
        )

    def enabled_plugin_names(self) -> list[str]:
        """The admission chain, in execution order: defaults + enabled - disabled."""
        disabled = (set(ALL_ORDERED_PLUGINS) - DEFAULT_ON_PLUGINS) | set(self.disable_plugins)
        disabled -= set(self.enable_plugins)
        return [plugin for plugin in ALL_ORDERED_PLUGINS if plugin not in disabled]

    def validate(self) -> list[str]:
        errors = [
            f'enable-admission-plugins plugin "{p}" is unknown' for p in self._unknown(self.enable_plugins)
        ]
        errors += [
            f'disable-admission-plugins plugin "{p}" is unknown' for p in self._unknown(self.disable_plugins)
        ]
        overlap = sorted(set(self.enable_plugins) & set(self.disable_plugins))
        if overlap:
            errors.append(
                f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins overlapped"
            )
        return errors

    @staticmethod
    def _unknown(plugins: list[str]) -> list[str]:
        return [plugin for plugin in plugins if plugin not in ALL_ORDERED_PLUGINS]
