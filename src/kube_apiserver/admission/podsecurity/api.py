"""Pod Security levels, policy versions and the namespace labels that select them
(k8s.io/pod-security-admission/api)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import total_ordering

from ...apimachinery import field

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)
LATEST = "latest"

LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LEVEL_LABEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL = LABEL_PREFIX + "enforce-version"
AUDIT_LEVEL_LABEL = LABEL_PREFIX + "audit"
AUDIT_VERSION_LABEL = LABEL_PREFIX + "audit-version"
WARN_LEVEL_LABEL = LABEL_PREFIX + "warn"
WARN_VERSION_LABEL = LABEL_PREFIX + "warn-version"

LEVEL_ERROR = f"must be one of {', '.join(LEVELS)}"
VERSION_ERROR = 'must be "latest" or "v1.x"'
_VERSION = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")
LABELS_PATH = field.Path("metadata", "labels")


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    """A policy version: v1.<minor>, or latest (newer than every version, even future ones)."""

    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return LATEST if self.latest else f"v1.{self.minor}"

    def __lt__(self, other: Version) -> bool:
        if self.latest:
            return False
        return other.latest or self.minor < other.minor


LATEST_VERSION = Version(latest=True)


class PolicyError(ValueError):
    pass


def parse_level(value: str) -> str:
    if value not in LEVELS:
        raise PolicyError(LEVEL_ERROR)
    return value


def parse_version(value: str) -> Version:
    if value == LATEST:
        return LATEST_VERSION
    match = _VERSION.match(value)
    if match is None:
        raise PolicyError(VERSION_ERROR)
    return Version(int(match.group(1)))


def compare_levels(a: str, b: str) -> int:
    """-1, 0 or 1 as a is less, as or more restrictive than b."""
    return (LEVELS.index(a) > LEVELS.index(b)) - (LEVELS.index(a) < LEVELS.index(b))


@dataclass(frozen=True, slots=True)
class LevelVersion:
    level: str = PRIVILEGED
    version: Version = LATEST_VERSION

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        """Privileged is the same at every version."""
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


@dataclass(frozen=True, slots=True)
class Policy:
    enforce: LevelVersion = LevelVersion()
    audit: LevelVersion = LevelVersion()
    warn: LevelVersion = LevelVersion()

    def fully_privileged(self) -> bool:
        return PRIVILEGED == self.enforce.level == self.audit.level == self.warn.level

    def equivalent(self, other: Policy) -> bool:
        return (self.enforce.equivalent(other.enforce) and self.audit.equivalent(other.audit)
                and self.warn.equivalent(other.warn))


class _LabelReader:
    """Parses one namespace's labels, collecting an Invalid field error per bad label."""

    def __init__(self, labels: dict[str, str]):
        self.labels = labels
        self.errors: field.ErrorList = []

    def level(self, label: str, current: str, fail_open: bool) -> tuple[str, bool]:
        """(level, parsed): an unparsable audit or warn level is privileged (fails open)."""
        if label not in self.labels:
            return current, False
        try:
            return parse_level(self.labels[label]), True
        except PolicyError as err:
            self._invalid(label, err)
            # enforce keeps Go's zero value (restricted) so a typo never loosens enforcement
            return (PRIVILEGED if fail_open else RESTRICTED), False

    def version(self, label: str, current: Version) -> Version:
        if label not in self.labels:
            return current
        try:
            return parse_version(self.labels[label])
        except PolicyError as err:
            self._invalid(label, err)
            return LATEST_VERSION

    def _invalid(self, label: str, err: PolicyError) -> None:
        self.errors.append(field.invalid(LABELS_PATH.key(label), self.labels[label], str(err)))


def policy_to_evaluate(labels: dict[str, str] | None, defaults: Policy) -> tuple[Policy, field.ErrorList]:
    """The namespace's policy: its labels over the configured defaults (api.PolicyToEvaluate)."""
    if not labels:
        return defaults, []
    reader = _LabelReader(labels)
    enforce_level, has_enforce = reader.level(ENFORCE_LEVEL_LABEL, defaults.enforce.level, False)
    enforce = LevelVersion(enforce_level, reader.version(ENFORCE_VERSION_LABEL, defaults.enforce.version))
    audit_level, _ = reader.level(AUDIT_LEVEL_LABEL, defaults.audit.level, True)
    audit = LevelVersion(audit_level, reader.version(AUDIT_VERSION_LABEL, defaults.audit.version))
    warn_level, _ = reader.level(WARN_LEVEL_LABEL, defaults.warn.level, True)
    warn = LevelVersion(warn_level, reader.version(WARN_VERSION_LABEL, defaults.warn.version))
    # Warn defaults to an explicitly set, more restrictive enforce level.
    if WARN_LEVEL_LABEL not in labels and has_enforce and compare_levels(enforce.level, warn.level) > 0:
        warn = replace(warn, level=enforce.level)
        if WARN_VERSION_LABEL not in labels:
            warn = replace(warn, version=enforce.version)
    return Policy(enforce, audit, warn), reader.errors
