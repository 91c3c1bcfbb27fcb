"""networkpolicies (pkg/apis/networking, pkg/registry/networking/networkpolicy)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, NetworkingStrategy, child, items, omit_empty, parse_cidr_sloppy, selector_text

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "networkpolicies", "NetworkPolicy", "networkpolicy", True,
                    short_names=("netpol",))
PROTOCOLS = ("TCP", "UDP", "SCTP")
POLICY_TYPES = ("Ingress", "Egress")
RULES = (("ingress", "from"), ("egress", "to"))
POD_SELECTOR_DOC = (
    "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any "
    "pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the "
    "ingress rules for each are combined additively. This field is NOT optional and follows standard label "
    "selector semantics. An empty podSelector matches all pods in this namespace.")


def validate_port(port: Object, path: field.Path) -> field.ErrorList:
    """ValidateNetworkPolicyPort: a port number (with an optional endPort range) or a port name."""
    errs: field.ErrorList = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(field.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            errs.append(field.invalid(path.child("endPort"), end, "may not be specified when `port` is not specified"))
    elif isinstance(number, int):
        errs += [field.invalid(path.child("port"), number, msg) for msg in validation.is_valid_port_num(number)]
        if end is not None:
            if end < number:
                errs.append(field.invalid(path.child("endPort"), end, "must be greater than or equal to `port`"))
            errs += [field.invalid(path.child("endPort"), end, msg) for msg in validation.is_valid_port_num(end)]
    else:
        if end is not None:
            errs.append(field.invalid(path.child("endPort"), end, "may not be specified when `port` is non-numeric"))
        errs += [field.invalid(path.child("port"), number, msg) for msg in validation.is_valid_port_name(number)]
    return errs


def validate_peer(peer: Object, allow_invalid_labels: bool, path: field.Path) -> field.ErrorList:
    """ValidateNetworkPolicyPeer: at least one peer; an ipBlock stands alone."""
    errs: field.ErrorList = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            errs += validation.validate_label_selector(peer[key], path.child(key), allow_invalid_labels)
    if peer.get("ipBlock") is not None:
        count += 1
        errs += validate_ip_block(peer["ipBlock"], path.child("ipBlock"))
    if count == 0:
        errs.append(field.required(path, "must specify a peer"))
    elif count > 1 and peer.get("ipBlock") is not None:
        errs.append(field.forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def validate_ip_block(block: Object, path: field.Path) -> field.ErrorList:
    """ValidateIPBlock: CIDRs as legacy fields (StrictIPCIDRValidation is off in v1.34); each except a
    strict subset of the cidr."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [field.required(path.child("cidr"), "")]
    errs = validation.is_valid_cidr_for_legacy_field(path.child("cidr"), cidr, strict=False)
    network = parse_cidr_sloppy(cidr)
    if network is None:
        return errs
    for i, except_cidr in enumerate(block.get("except") or []):
        except_path = path.child("except").index(i)
        errs += validation.is_valid_cidr_for_legacy_field(except_path, except_cidr, strict=False)
        excepted = parse_cidr_sloppy(except_cidr)
        if excepted is None:
            continue
        inside = excepted.version == network.version and excepted.network_address in network
        if not inside or network.prefixlen >= excepted.prefixlen:
            errs.append(field.invalid(except_path, except_cidr, "must be a strict subset of `cidr`"))
    return errs


def validate_spec(spec: Object, allow_invalid_labels: bool, path: field.Path) -> field.ErrorList:
    """ValidateNetworkPolicySpec."""
    errs = validation.validate_label_selector(spec.get("podSelector") or {}, path.child("podSelector"),
                                              allow_invalid_labels)
    for rules_key, peers_key in RULES:
        for i, rule in enumerate(items(spec, rules_key)):
            rule_path = path.child(rules_key).index(i)
            for j, port in enumerate(items(rule, "ports")):
                errs += validate_port(port, rule_path.child("ports").index(j))
            for j, peer in enumerate(items(rule, peers_key)):
                errs += validate_peer(peer, allow_invalid_labels, rule_path.child(peers_key).index(j))
    types = spec.get("policyTypes") or []
    if len(types) > len(POLICY_TYPES):
        return errs + [field.invalid(path.child("policyTypes"), types, "may not specify more than two policyTypes")]
    return errs + [field.not_supported(path.child("policyTypes").index(i), kind, POLICY_TYPES)
                   for i, kind in enumerate(types) if kind not in POLICY_TYPES]


class NetworkPolicyStrategy(NetworkingStrategy):
    error_group = "extensions"  # the internal type is registered in extensions first, as in v1.34
    tracks_generation = True

    def default(self, obj: Object) -> None:
        """SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort."""
        spec = child(obj, "spec")
        child(spec, "podSelector")
        for rules_key, peers_key in RULES:
            for rule in items(spec, rules_key):
                for port in items(rule, "ports"):
                    if port.get("protocol") is None:
                        port["protocol"] = "TCP"
                for peer in items(rule, peers_key):
                    if isinstance(peer.get("ipBlock"), dict):
                        peer["ipBlock"].setdefault("cidr", "")
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]

    def validate_object(self, obj: Object) -> field.ErrorList:
        return self.validate_meta(obj) + validate_spec(obj.get("spec") or {}, False, field.Path("spec"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateNetworkPolicy then ValidateNetworkPolicyUpdate (which checks the spec again): selectors
        may keep invalid label values when the stored podSelector had them."""
        old_selector = (old.get("spec") or {}).get("podSelector") or {}
        allow = bool(validation.validate_label_selector(old_selector, field.Path("spec", "podSelector")))
        spec_errs = validate_spec(obj.get("spec") or {}, allow, field.Path("spec"))
        return self.validate_meta(obj) + spec_errs + self.meta_update(ctx, obj, old) + spec_errs

    def canonicalize(self, obj: Object) -> None:
        spec = obj.get("spec") or {}
        for rules_key, peers_key in RULES:
            for rule in items(spec, rules_key):
                omit_empty(rule, "ports", peers_key)
                for peer in items(rule, peers_key):
                    omit_empty(peer.get("ipBlock"), "except")
            omit_empty(spec, rules_key)


TABLE = TableConvertor((
    NAME,
    TableColumn("Pod-Selector", "string", "", POD_SELECTOR_DOC),
    AGE,
), lambda o: [name(o), selector_text((o.get("spec") or {}).get("podSelector") or {}), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    strategy = NetworkPolicyStrategy(INFO)
    return {"networkpolicies": Store(INFO, strategy, storage, "/registry/networkpolicies", TABLE)}
