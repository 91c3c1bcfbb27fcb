"""Pod Security levels and versions from namespace labels, the evaluator's choice and order of checks per
level and version, and the PodSecurityConfiguration read from an admission configuration file."""

from __future__ import annotations

import pytest

from kube_apiserver.admission.podsecurity import ConfigError, load_from_admission_config
from kube_apiserver.admission.podsecurity.api import (
    LATEST_VERSION,
    LevelVersion,
    Policy,
    PolicyError,
    Version,
    parse_level,
    parse_version,
    policy_to_evaluate,
)
from kube_apiserver.admission.podsecurity.checks import aggregate_check_results
from kube_apiserver.admission.podsecurity.registry import MAX_VERSION, checks_for, evaluate_pod

P = "pod-security.kubernetes.io/"


def test_versions_parse_and_order() -> None:
    assert parse_version("v1.0") == Version(0) and parse_version("latest") == LATEST_VERSION
    assert str(parse_version("v1.25")) == "v1.25" and str(LATEST_VERSION) == "latest"
    for bad in ("v1.01", "1.25", "v2.0", "v1", "v1.x", ""):
        with pytest.raises(PolicyError, match='must be "latest" or "v1.x"'):
            parse_version(bad)
    assert Version(9) < Version(10) < Version(1000) < LATEST_VERSION
    with pytest.raises(PolicyError, match="must be one of privileged, baseline, restricted"):
        parse_level("Restricted")


def test_labels_over_defaults_and_warn_follows_a_stricter_enforce() -> None:
    policy, errs = policy_to_evaluate({P + "enforce": "baseline", P + "enforce-version": "v1.30"}, Policy())
    assert not errs
    assert str(policy.enforce) == "baseline:v1.30" and str(policy.warn) == "baseline:v1.30"
    assert str(policy.audit) == "privileged:latest"
    policy, _ = policy_to_evaluate({P + "enforce": "restricted", P + "warn-version": "v1.2"}, Policy())
    assert str(policy.warn) == "restricted:v1.2"
    policy, _ = policy_to_evaluate({P + "enforce": "baseline", P + "warn": "privileged"}, Policy())
    assert str(policy.warn) == "privileged:latest"  # an explicit warn level wins


def test_invalid_labels_fail_closed_for_enforce_and_open_for_audit_and_warn() -> None:
    labels = {P + "enforce": "high", P + "audit": "x", P + "warn": "y", P + "audit-version": "z"}
    policy, errs = policy_to_evaluate(labels, Policy())
    assert policy.enforce == LevelVersion("restricted") and policy.warn.level == policy.audit.level == "privileged"
    assert [str(e) for e in errs] == [
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "high": must be one of privileged, '
        "baseline, restricted",
        'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "x": must be one of privileged, baseline, '
        "restricted",
        'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "z": must be "latest" or "v1.x"',
        'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "y": must be one of privileged, baseline, '
        "restricted"]


def _names(level: str, version: Version) -> list[str]:
    return [fn.__name__ for fn in checks_for(level, version)]


def test_latest_and_future_versions_evaluate_as_the_newest_checks() -> None:
    assert MAX_VERSION == Version(34)
    assert checks_for("restricted", LATEST_VERSION) == checks_for("restricted", Version(99))
    assert _names("baseline", LATEST_VERSION) == [
        "app_armor_profile_1_0", "capabilities_baseline_1_0", "host_namespaces_1_0", "host_path_volumes_1_0",
        "host_ports_1_0", "host_probes_and_host_lifecycle_1_34", "privileged_1_0", "proc_mount_1_0",
        "se_linux_options_1_31", "seccomp_profile_baseline_1_19", "sysctls_1_32", "windows_host_process_1_0"]


def test_restricted_runs_baseline_first_without_the_checks_it_overrides() -> None:
    latest = _names("restricted", LATEST_VERSION)
    assert "capabilities_baseline_1_0" not in latest and "host_path_volumes_1_0" not in latest
    assert latest[-6:] == ["allow_privilege_escalation_1_25", "capabilities_restricted_1_25", "restricted_volumes_1_0",
                           "run_as_non_root_1_0", "run_as_user_1_23", "seccomp_profile_restricted_1_25"]
    old = _names("restricted", Version(18))
    assert "capabilities_baseline_1_0" in old and "seccomp_profile_baseline_1_0" in old  # not overridden yet
    assert "run_as_user_1_23" not in old and "host_probes_and_host_lifecycle_1_34" not in old
    assert evaluate_pod(LevelVersion("privileged"), {}, {"hostPID": True}) == []


def test_aggregated_detail_and_reason() -> None:
    pod_spec = {"hostPID": True, "containers": [{"name": "c", "image": "x", "securityContext": {"privileged": True}}]}
    result = aggregate_check_results(evaluate_pod(LevelVersion("baseline"), {}, pod_spec))
    assert result.forbidden_reason() == "host namespaces, privileged"
    assert result.forbidden_detail() == ('host namespaces (hostPID=true), privileged (container "c" must not set '
                                         "securityContext.privileged=true)")


def test_configuration_file(tmp_path) -> None:
    assert load_from_admission_config("").defaults == Policy()
    psa = tmp_path / "psa.yaml"
    psa.write_text("apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\n"
                   "defaults: {enforce: baseline, warn: restricted, warn-version: v1.30}\n"
                   "exemptions: {namespaces: [kube-system], usernames: [admin], runtimeClasses: [kata]}\n")
    config_file = tmp_path / "admission.yaml"
    config_file.write_text("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
                           "- {name: Other, path: other.yaml}\n- {name: PodSecurity, path: psa.yaml}\n")
    config = load_from_admission_config(str(config_file))
    assert str(config.defaults.enforce) == "baseline:latest" and str(config.defaults.warn) == "restricted:v1.30"
    assert config.exemptions.namespaces == ("kube-system",) and config.exemptions.usernames == ("admin",)
    assert config.exemptions.runtime_classes == ("kata",)


def test_invalid_configuration_is_refused(tmp_path) -> None:
    config_file = tmp_path / "admission.yaml"
    config_file.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n"
        "  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n"
        "    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n"
        "    exemptions: {usernames: [a, a, '']}\n")
    with pytest.raises(ConfigError) as err:
        load_from_admission_config(str(config_file))
    assert str(err.value) == (
        'PodSecurity invalid: [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, '
        'restricted, exemptions.usernames[1]: Duplicate value: "a", exemptions.usernames[2]: Invalid value: "": '
        "username must not be empty]")
