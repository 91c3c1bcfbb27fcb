"""Pod DNS: dnsPolicy, dnsConfig, hostAliases, hostname and subdomain."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions
from .volumes import validate_dns1123_label

Object = dict[str, Any]
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
MAX_NAMESERVERS = 3
MAX_SEARCH_PATHS = 32
MAX_SEARCH_CHARS = 2048


def validate_dns_policy(policy: str, path: Path) -> ErrorList:
    if not policy:
        return [field.required(path, "")]
    if policy not in DNS_POLICIES:
        return [field.not_supported(path, policy, DNS_POLICIES)]
    return []


def _search(search: str, path: Path, opts: PodValidationOptions) -> ErrorList:
    if opts.allow_relaxed_dns_search_validation:
        if search == ".":
            return []
        search = search.removesuffix(".")
        return [field.invalid(path, search, m) for m in validation.is_dns1123_subdomain_with_underscore(search)]
    search = search.removesuffix(".")
    return [field.invalid(path, search, m) for m in validation.is_dns1123_subdomain(search)]


def validate_dns_config(config: Any, policy: str, path: Path, opts: PodValidationOptions) -> ErrorList:
    if policy == "None":
        if not isinstance(config, dict):
            return [field.required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not config.get("nameservers"):
            return [field.required(path.child("nameservers"), "must provide at least one DNS nameserver when "
                                                              "`dnsPolicy` is None")]
    if not isinstance(config, dict):
        return []
    errs: ErrorList = []
    nameservers, searches = config.get("nameservers") or [], config.get("searches") or []
    if len(nameservers) > MAX_NAMESERVERS:
        errs.append(field.invalid(path.child("nameservers"), nameservers,
                                  f"must not have more than {MAX_NAMESERVERS} nameservers"))
    for i, server in enumerate(nameservers):
        errs += validation.is_valid_ip(path.child("nameservers").index(i), server)
    if len(searches) > MAX_SEARCH_PATHS:
        errs.append(field.invalid(path.child("searches"), searches,
                                  f"must not have more than {MAX_SEARCH_PATHS} search paths"))
    if len(" ".join(searches)) > MAX_SEARCH_CHARS:
        errs.append(field.invalid(path.child("searches"), searches, f"must not have more than {MAX_SEARCH_CHARS} "
                                                                    f"characters (including spaces) in the search list"))
    for i, search in enumerate(searches):
        errs += _search(search, path.child("searches").index(i), opts)
    for i, option in enumerate(config.get("options") or []):
        if not option.get("name"):
            errs.append(field.required(path.child("options").index(i), "must not be empty"))
    return errs


def validate_host_aliases(aliases: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, alias in enumerate(aliases if isinstance(aliases, list) else []):
        errs += validation.is_valid_ip(path.index(i).child("ip"), alias.get("ip") or "")
        for j, hostname in enumerate(alias.get("hostnames") or []):
            errs += [field.invalid(path.index(i).child("hostnames").index(j), hostname, m)
                     for m in validation.is_dns1123_subdomain(hostname)]
    return errs


def validate_host_names(spec: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += validate_dns1123_label(spec[key], path.child(key))
    return errs
