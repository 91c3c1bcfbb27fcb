"""The audit.k8s.io/v1 Policy (pkg/audit/policy: reader.go, checker.go; pkg/apis/audit/validation): loaded and
validated once at start, then asked per request which level and which omitted stages apply. The first rule
that matches wins; no match means level None."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..apimachinery import field as fld
from ..apimachinery.validation import is_dns1123_subdomain
from . import GROUP_VERSION, LEVEL_NONE, LEVELS, STAGES

log = logging.getLogger("kube_apiserver.audit")


@dataclass(frozen=True, slots=True)
class RequestAuditConfig:
    level: str
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


@dataclass(frozen=True)
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PolicyRule:
    level: str
    users: frozenset[str] = frozenset()
    user_groups: frozenset[str] = frozenset()
    verbs: frozenset[str] = frozenset()
    resources: tuple[GroupResources, ...] = ()
    namespaces: frozenset[str] = frozenset()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None

    def matches(self, user: Any, info: Any) -> bool:
        """ruleMatches: every field the rule sets must match; resources/namespaces and nonResourceURLs
        each restrict the rule to one kind of request."""
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or self.user_groups.isdisjoint(user.groups)):
            return False
        if self.verbs and info.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(info)
        if self.non_resource_urls:
            return not info.is_resource_request and any(_path_matches(info.path, spec)
                                                        for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, info: Any) -> bool:
        if not info.is_resource_request:
            return False
        if self.namespaces and info.namespace not in self.namespaces:  # cluster-scoped: ""
            return False
        if not self.resources:
            return True
        resource, subresource = info.resource, info.subresource
        combined = f"{resource}/{subresource}" if subresource else resource
        for gr in self.resources:
            if gr.group != info.api_group and gr.group != "*":
                continue
            if not gr.resources:
                return True
            if gr.resource_names and info.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res in (combined, "*"):
                    return True
                if subresource and res.startswith("*/") and subresource == res[2:]:
                    return True
                if res.endswith("/*") and resource == res[:-2]:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    return spec in ("*", path) or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


@dataclass
class Policy:
    rules: list[PolicyRule] = field(default_factory=list)
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False

    def evaluate(self, user: Any, info: Any) -> RequestAuditConfig:
        """EvaluatePolicyRule: the first matching rule's level, its stages joined with the policy's."""
        for rule in self.rules:
            if rule.matches(user, info):
                omit = rule.omit_managed_fields
                return RequestAuditConfig(rule.level, rule.omit_stages | self.omit_stages,
                                          self.omit_managed_fields if omit is None else omit)
        return RequestAuditConfig(LEVEL_NONE, self.omit_stages, self.omit_managed_fields)


class PolicyError(Exception):
    pass


def load_policy_file(path: str) -> Policy:
    """LoadPolicyFromFile; every error says which file (upstream's wording)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise PolicyError(f"failed to read file path {path!r}: {err}") from None
    try:
        return load_policy(raw)
    except PolicyError as err:
        raise PolicyError(f"{err}: from file {path}") from None


def load_policy(raw: bytes) -> Policy:
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as err:
        raise PolicyError(f"failed decoding: {err}") from None
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: the policy is not an object")
    if doc.get("apiVersion") != GROUP_VERSION or doc.get("kind") != "Policy":
        raise PolicyError(f"unknown group version field {doc.get('apiVersion')}, Kind={doc.get('kind')} in policy")
    unknown = sorted(set(doc) - {"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"})
    if unknown:  # strict decoding failed; upstream falls back to lenient decoding and warns
        log.warning("Audit policy contains errors, falling back to lenient decoding: unknown fields %s", unknown)
    errs = validate_policy(doc)
    if errs:
        raise PolicyError(fld.aggregate_message(fld.to_aggregate(errs)))
    rules = [_rule(r) for r in _list(doc.get("rules"))]
    if not rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return Policy(rules, frozenset(_list(doc.get("omitStages"))), bool(doc.get("omitManagedFields")))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rule(r: dict[str, Any]) -> PolicyRule:
    resources = tuple(GroupResources(str(gr.get("group") or ""), tuple(_list(gr.get("resources"))),
                                     frozenset(_list(gr.get("resourceNames"))))
                      for gr in _list(r.get("resources")) if isinstance(gr, dict))
    omit = r.get("omitManagedFields")
    return PolicyRule(str(r.get("level")), frozenset(_list(r.get("users"))), frozenset(_list(r.get("userGroups"))),
                      frozenset(_list(r.get("verbs"))), resources, frozenset(_list(r.get("namespaces"))),
                      tuple(_list(r.get("nonResourceURLs"))), frozenset(_list(r.get("omitStages"))),
                      None if omit is None else bool(omit))


def validate_policy(doc: dict[str, Any]) -> list[fld.FieldError]:
    """ValidatePolicy: omitStages, then each rule's level, URLs, resources and stages."""
    errs = _validate_omit_stages(_list(doc.get("omitStages")), fld.Path("omitStages"))
    for i, rule in enumerate(_list(doc.get("rules"))):
        path = fld.Path("rules").index(i)
        rule = rule if isinstance(rule, dict) else {}
        errs += _validate_level(rule.get("level") or "", path.child("level"))
        urls = _list(rule.get("nonResourceURLs"))
        errs += _validate_urls(urls, path.child("nonResourceURLs"))
        errs += _validate_resources(_list(rule.get("resources")), path.child("resources"))
        errs += _validate_omit_stages(_list(rule.get("omitStages")), path.child("omitStages"))
        if urls and (_list(rule.get("resources")) or _list(rule.get("namespaces"))):
            errs.append(fld.invalid(path.child("nonResourceURLs"), urls,
                                    "rules cannot apply to both regular resources and non-resource URLs"))
    return errs


def _validate_level(level: str, path: fld.Path) -> list[fld.FieldError]:
    if level in LEVELS:
        return []
    return [fld.required(path, "")] if level == "" else [fld.not_supported(path, level, LEVELS)]


def _validate_urls(urls: list[Any], path: fld.Path) -> list[fld.FieldError]:
    errs = []
    for i, url in enumerate(urls):
        url = str(url)
        if url == "*":
            continue
        if not url.startswith("/"):
            errs.append(fld.invalid(path.index(i), url, "non-resource URL rules must begin with a '/' character"))
        if url and "*" in url[:-1]:
            errs.append(fld.invalid(path.index(i), url,
                                    "non-resource URL wildcards '*' must be the final character of the rule"))
    return errs


def _validate_resources(groups: list[Any], path: fld.Path) -> list[fld.FieldError]:
    errs = []
    for gr in groups:
        gr = gr if isinstance(gr, dict) else {}
        group = str(gr.get("group") or "")
        if group and group != "*":
            msgs = is_dns1123_subdomain(group)
            if msgs:
                errs.append(fld.invalid(path.child("group"), group, ",".join(msgs)))
        names = _list(gr.get("resourceNames"))
        if names and not _list(gr.get("resources")):
            errs.append(fld.invalid(path.child("resourceNames"), names,
                                    "using resourceNames requires at least one resource"))
    return errs


def _validate_omit_stages(stages: list[Any], path: fld.Path) -> list[fld.FieldError]:
    return [fld.invalid(path.index(i), str(stage), "allowed stages are " + ",".join(STAGES))
            for i, stage in enumerate(stages) if stage not in STAGES]
