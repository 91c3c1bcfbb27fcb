"""Feature flags: "Features" section (k8s.io/apiserver/pkg/server/options/feature.go) and --feature-gates.

FEATURE_GATES lists the generic API server gates as of v1.34 (name -> (default, stage)). Unknown gate
names are accepted with a warning instead of kube-apiserver's error, because deployment tools often pass
one --feature-gates value (with kubelet or scheduler gates) to every component.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver import logs
from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.cli.values import MapStringBoolValue

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"

FEATURE_GATES: dict[str, tuple[bool, str]] = {
    "AllAlpha": (False, ALPHA),
    "AllBeta": (False, BETA),
    "APIResponseCompression": (True, BETA),
    "APIServerIdentity": (True, BETA),
    "APIServingWithRoutine": (False, ALPHA),
    "AggregatedDiscoveryRemoveBetaType": (True, DEPRECATED),
    "AllowParsingUserUIDFromCertAuth": (True, BETA),
    "AllowUnsafeMalformedObjectDeletion": (False, ALPHA),
    "CBORServingAndStorage": (False, ALPHA),
    "ConcurrentWatchObjectDecode": (False, BETA),
    "CoordinatedLeaderElection": (False, BETA),
    "DeclarativeValidation": (True, BETA),
    "DeclarativeValidationTakeover": (False, BETA),
    "DetectCacheInconsistency": (True, BETA),
    "KMSv1": (False, DEPRECATED),
    "ListFromCacheSnapshot": (True, BETA),
    "MutatingAdmissionPolicy": (False, BETA),
    "OpenAPIEnums": (True, BETA),
    "RemoteRequestHeaderUID": (True, BETA),
    "SeparateCacheWatchRPC": (False, DEPRECATED),
    "SizeBasedListCostEstimate": (True, BETA),
    "StorageVersionAPI": (False, ALPHA),
    "StorageVersionHash": (True, BETA),
    "StructuredAuthenticationConfigurationEgressSelector": (True, BETA),
    "TokenRequestServiceAccountUIDValidation": (True, BETA),
    "UnauthenticatedHTTP2DOSMitigation": (True, BETA),
    "UnknownVersionInteroperabilityProxy": (False, ALPHA),
    "WatchCacheInitializationPostStartHook": (False, BETA),
    "WatchList": (True, BETA),
}


def _known_features() -> list[str]:
    """featuregate.KnownFeatures(): GA and deprecated gates are not advertised."""
    return sorted(
        f"{name}=true|false ({stage} - default={'true' if default else 'false'})"
        for name, (default, stage) in FEATURE_GATES.items()
        if stage not in (GA, DEPRECATED)
    )


def _feature_gates_help() -> str:
    return (
        "A set of key=value pairs that describe feature gates for alpha/experimental features. "
        "Options are:\n" + "\n".join(_known_features())
    )


@dataclass
class FeatureOptions:
    enable_profiling: bool = True
    enable_contention_profiling: bool = False
    enable_priority_and_fairness: bool = True
    feature_gates: dict[str, bool] = field(default_factory=dict)

    def add_flags(self, fs: FlagSet) -> None:
        fs.bool_var(
            self, "enable_profiling", "profiling", "Enable profiling via web interface host:port/debug/pprof/"
        )
        fs.bool_var(
            self,
            "enable_contention_profiling",
            "contention-profiling",
            "Enable block profiling, if profiling is enabled",
        )
        fs.bool_var(
            self,
            "enable_priority_and_fairness",
            "enable-priority-and-fairness",
            "If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with "
            "priority and fairness",
        )

    def add_feature_gates_flag(self, fs: FlagSet) -> None:
        """--feature-gates lives in kube-apiserver's "Generic" section."""
        fs.var(MapStringBoolValue(self, "feature_gates"), "feature-gates", _feature_gates_help())

    def enabled(self, gate: str) -> bool:
        """Whether a feature gate is on: its --feature-gates value, else AllAlpha/AllBeta, else its default."""
        if gate in self.feature_gates:
            return self.feature_gates[gate]
        default, stage = FEATURE_GATES.get(gate, (False, ALPHA))
        if stage in (ALPHA, BETA) and f"All{stage.capitalize()}" in self.feature_gates:
            return self.feature_gates[f"All{stage.capitalize()}"]
        return default

    def complete(self) -> None:
        for gate in sorted(set(self.feature_gates) - set(FEATURE_GATES)):
            logs.warning("unrecognized feature gate: %s (ignored)", gate)
