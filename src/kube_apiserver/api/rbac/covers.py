"""Comparing policy rules: whether one set of rules covers another (k8s component-helpers auth/rbac/
validation policy_comparator.go), the compaction of the uncovered rules (pkg/registry/rbac/validation
policy_compact.go) and their compact rendering in escalation errors (rbac/v1 CompactString)."""

from __future__ import annotations

from typing import Any

from ...apimachinery.gostrconv import quote_list as go_quote_list

Object = dict[str, Any]


def breakdown_rule(rule: Object) -> list[Object]:
    """BreakdownRule: equivalent rules of at most one group, resource, verb and resource name each."""
    out: list[Object] = []
    verbs = rule.get("verbs") or []
    names = rule.get("resourceNames") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                out += [{**base, "resourceNames": [name]} for name in names] if names else [base]
    # non-resource URLs only combine with verbs
    for url in rule.get("nonResourceURLs") or []:
        out += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return out


def _has_all(owned: list[str], wanted: list[str]) -> bool:
    return set(wanted) <= set(owned)


def _resources_cover(owned: list[str], wanted: list[str]) -> bool:
    if "*" in owned or _has_all(owned, wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        # a subresource is also covered by "*/<subresource>"
        if "/" not in path or f"*/{path.split('/', 1)[1]}" not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def _urls_cover(owned: list[str], wanted: list[str]) -> bool:
    return all(any(_url_covers(owner, path) for owner in owned) for path in wanted)


def rule_covers(owner: Object, sub: Object) -> bool:
    """ruleCovers: whether owner covers sub, a rule broken down by breakdown_rule."""
    verbs, groups = owner.get("verbs") or [], owner.get("apiGroups") or []
    names, sub_names = owner.get("resourceNames") or [], sub.get("resourceNames") or []
    return ("*" in verbs or _has_all(verbs, sub.get("verbs") or [])) \
        and ("*" in groups or _has_all(groups, sub.get("apiGroups") or [])) \
        and _resources_cover(owner.get("resources") or [], sub.get("resources") or []) \
        and _urls_cover(owner.get("nonResourceURLs") or [], sub.get("nonResourceURLs") or []) \
        and (not names if not sub_names else (not names or _has_all(names, sub_names)))


def covers(owner_rules: list[Object], servant_rules: list[Object]) -> tuple[bool, list[Object]]:
    """Covers: whether owner_rules hold every permission of servant_rules, and the broken-down rules
    they do not hold."""
    uncovered = [sub for servant in servant_rules if not _held_verbatim(servant, owner_rules)
                 for sub in breakdown_rule(servant) if not any(rule_covers(owner, sub) for owner in owner_rules)]
    return not uncovered, uncovered


def _held_verbatim(servant: Object, owner_rules: list[Object]) -> bool:
    """A rule the owner holds as it is covers every piece of its breakdown: comparing it whole is much cheaper
    than breaking it down (a restart reconciles every bootstrap role with its stored copy). Not for a rule with
    both resource names and URLs, whose URL pieces carry no name and so are not covered by the named rule."""
    if servant.get("resourceNames") and servant.get("nonResourceURLs"):
        return False
    return servant in owner_rules


def _simple_key(rule: Object) -> tuple[str, str, bool, str] | None:
    """isSimpleResourceRule: one group, one resource, at most one name, nothing else."""
    if len(rule.get("resourceNames") or []) > 1 or rule.get("nonResourceURLs"):
        return None
    if len(rule.get("apiGroups") or []) != 1 or len(rule.get("resources") or []) != 1:
        return None
    if set(rule) - {"apiGroups", "resources", "verbs", "resourceNames"}:
        return None
    names = rule.get("resourceNames") or []
    return rule["apiGroups"][0], rule["resources"][0], bool(names), names[0] if names else ""


def compact_rules(rules: list[Object]) -> list[Object]:
    """CompactRules: simple rules on the same group/resource/name merged into one, verbs in order seen."""
    compacted: list[Object] = []
    simple: dict[tuple[str, str, bool, str], Object] = {}
    for rule in rules:
        key = _simple_key(rule)
        if key is None:
            compacted.append(rule)
        elif key in simple:
            verbs = simple[key].setdefault("verbs", [])
            verbs += [v for v in rule.get("verbs") or [] if v not in verbs]
        else:
            simple[key] = {k: list(v) for k, v in rule.items()}
    return compacted + list(simple.values())


def compact_string(rule: Object) -> str:
    """CompactString: {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}."""
    parts = [f"{label}:{go_quote_list(rule[key])}" for label, key in (
        ("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"), ("Verbs", "verbs")) if rule.get(key)]
    return "{" + ", ".join(parts) + "}"
