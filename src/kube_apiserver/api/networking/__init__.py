"""networking.k8s.io/v1: Ingress (with status), IngressClass, NetworkPolicy, IPAddress, ServiceCIDR (with
status)."""

from __future__ import annotations

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import ingress, ingressclass, ip_address, networkpolicy, service_cidr
from .common import GROUP


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    classes = ingressclass.new_store(storage)
    rest = {**networkpolicy.new_rest(storage), **ingress.new_rest(storage), "ingressclasses": classes,
            **ip_address.new_rest(storage), **service_cidr.new_rest(storage)}
    return APIGroupInfo(GROUP, {"v1": rest})
