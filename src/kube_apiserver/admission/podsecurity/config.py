"""PodSecurityConfiguration (pod-security.admission.config.k8s.io): the cluster's default policy and the
exempt users, runtime classes and namespaces, read from the PodSecurity entry of the
--admission-control-config-file. Without one, every default is privileged:latest and nothing is exempt."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from ...apimachinery import field as fielderr
from ...apimachinery import validation
from .api import LATEST, PRIVILEGED, LevelVersion, Policy, PolicyError, parse_level, parse_version

PLUGIN_NAME = "PodSecurity"
CONFIG_GROUP = "pod-security.admission.config.k8s.io"
CONFIG_VERSIONS = ("v1", "v1beta1", "v1alpha1")
MODES = ("enforce", "audit", "warn")


@dataclass(frozen=True)
class Exemptions:
    usernames: tuple[str, ...] = ()
    runtime_classes: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()


@dataclass(frozen=True)
class PodSecurityConfiguration:
    defaults: Policy = field(default_factory=Policy)
    exemptions: Exemptions = field(default_factory=Exemptions)


class ConfigError(ValueError):
    pass


def _strings(values: Any, path: fielderr.Path, check: Any) -> tuple[tuple[str, ...], fielderr.ErrorList]:
    """The exempt names, each valid and listed once."""
    errs: fielderr.ErrorList = []
    seen: list[str] = []
    for i, value in enumerate(values or ()):
        problems = check(str(value))
        if problems:
            errs.append(fielderr.invalid(path.index(i), value, ", ".join(problems)))
        elif value in seen:
            errs.append(fielderr.duplicate(path.index(i), value))
        else:
            seen.append(str(value))
    return tuple(seen), errs


def _defaults(raw: dict[str, Any]) -> tuple[Policy, fielderr.ErrorList]:
    errs: fielderr.ErrorList = []
    modes: dict[str, LevelVersion] = {}
    for mode in MODES:
        level, version = raw.get(mode) or PRIVILEGED, raw.get(f"{mode}-version") or LATEST
        try:
            level = parse_level(level)
        except PolicyError as err:
            errs.append(fielderr.invalid(fielderr.Path("defaults", mode), level, str(err)))
            level = PRIVILEGED
        try:
            parsed = parse_version(version)
        except PolicyError as err:
            errs.append(fielderr.invalid(fielderr.Path("defaults", f"{mode}-version"), version, str(err)))
            parsed = parse_version(LATEST)
        modes[mode] = LevelVersion(level, parsed)
    return Policy(modes["enforce"], modes["audit"], modes["warn"]), errs


def parse_configuration(raw: dict[str, Any] | None) -> PodSecurityConfiguration:
    """A PodSecurityConfiguration object, defaulted and validated (ValidatePodSecurityConfiguration)."""
    raw = raw or {}
    api_version = str(raw.get("apiVersion") or "")
    if raw and (raw.get("kind") != "PodSecurityConfiguration"
                or api_version.split("/")[0] != CONFIG_GROUP or api_version.split("/")[-1] not in CONFIG_VERSIONS):
        raise ConfigError(f"expected PodSecurityConfiguration, got {raw.get('kind')} {api_version}")
    policy, errs = _defaults(raw.get("defaults") or {})
    exempt = raw.get("exemptions") or {}
    path = fielderr.Path("exemptions")
    namespaces, ns_errs = _strings(exempt.get("namespaces"), path.child("namespaces"),
                                   lambda n: validation.name_is_dns_label(n, False))
    classes, rc_errs = _strings(exempt.get("runtimeClasses"), path.child("runtimeClasses"),
                                lambda n: validation.name_is_dns_subdomain(n, False))
    users, user_errs = _strings(exempt.get("usernames"), path.child("usernames"),
                                lambda n: [] if n else ["username must not be empty"])
    errs += ns_errs + rc_errs + user_errs
    if errs:
        raise ConfigError(f"{PLUGIN_NAME} invalid: {fielderr.aggregate_message(errs)}")
    return PodSecurityConfiguration(policy, Exemptions(users, classes, namespaces))


def load_from_admission_config(path: str) -> PodSecurityConfiguration:
    """The PodSecurity entry of an AdmissionConfiguration file (inline `configuration` or a `path` relative
    to that file); the defaults when the file or the entry is absent."""
    if not path:
        return parse_configuration(None)
    with open(path) as f:
        admission_config = yaml.safe_load(f) or {}
    for plugin in admission_config.get("plugins") or ():
        if plugin.get("name") != PLUGIN_NAME:
            continue
        if plugin.get("configuration") is not None:
            return parse_configuration(plugin["configuration"])
        if plugin.get("path"):
            with open(os.path.join(os.path.dirname(path), plugin["path"])) as f:
                return parse_configuration(yaml.safe_load(f))
    return parse_configuration(None)
