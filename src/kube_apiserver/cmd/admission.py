"""The admission plugins served here, in kube-apiserver's order, as --enable-admission-plugins and
--disable-admission-plugins select them (the names the flags accept that are not served yet are skipped)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..admission.certificates import CertificateApproval, CertificateSigning, CertificateSubjectRestriction
from ..admission.default_ingress_class import DefaultIngressClass
from ..admission.default_storage_class import DefaultStorageClass
from ..admission.default_toleration_seconds import DefaultTolerationSeconds
from ..admission.interfaces import Chain
from ..admission.lister import NamespacedLister
from ..admission.namespace_lifecycle import NamespaceLifecycle
from ..admission.noderestriction import NodeRestriction
from ..admission.podsecurity import PodSecurity, load_from_admission_config
from ..admission.policy import ValidatingAdmissionPolicy
from ..admission.priority import Priority
from ..admission.pvc_resize import PersistentVolumeClaimResize
from ..admission.resourcequota import QuotaAccessor, Registry, ResourceQuota
from ..admission.runtimeclass import RuntimeClass
from ..admission.serviceaccount import ServiceAccount
from ..admission.storage_protection import StorageObjectInUseProtection
from ..admission.taint_nodes_by_condition import TaintNodesByCondition
from ..admission.webhook import MutatingAdmissionWebhook, ValidatingAdmissionWebhook
from ..api.core.limitrange.admission import LIVE_LOOKUP_CACHE_SIZE as LIMIT_RANGE_LIVE_LOOKUPS
from ..api.core.limitrange.admission import LimitRanger
from ..api.core.resourcequota.evaluators import new_evaluators
from ..apimachinery.equivalence import EquivalentResourceRegistry
from ..authorization.authorizer import Authorizer
from ..client.discovery import RESTMapper
from ..client.informers import SharedInformerFactory
from ..serviceaccount.claims import ObjectGetter

NamespaceGetter = Callable[[str], Awaitable[dict[str, Any] | None]]


@dataclass
class AdmissionPlugins:
    chain: Chain
    # The discovery REST mapper the plugins map kinds with (None without a loopback client).
    rest_mapper: RESTMapper | None = None


def new_admission(names: list[str], get_namespace: NamespaceGetter,
                  get_object: ObjectGetter | None = None, config_file: str = "",
                  authorizer: Authorizer | None = None, informers: SharedInformerFactory | None = None,
                  equivalents: EquivalentResourceRegistry | None = None) -> AdmissionPlugins:
    """`informers`: the loopback client's shared informers, which the plugins' listers read (each started
    when first read) and the quota plugin writes through; the REST mapper reads discovery through their
    client. `equivalents`: the registry the API installer fills as it serves group versions (the webhook
    and policy plugins' equivalent resources, conversion and defaulting)."""
    quotas, limit_ranges = QuotaAccessor(informers), NamespacedLister(
        informers, "limitranges", live_cache_size=LIMIT_RANGE_LIVE_LOOKUPS)
    storage_classes = NamespacedLister(informers, "storageclasses", "storage.k8s.io")
    pods = NamespacedLister(informers, "pods")
    priority_classes = NamespacedLister(informers, "priorityclasses", "scheduling.k8s.io")
    runtime_classes = NamespacedLister(informers, "runtimeclasses", "node.k8s.io")
    ingress_classes = NamespacedLister(informers, "ingressclasses", "networking.k8s.io")
    factories: dict[str, Callable[[], Any]] = {
        "NamespaceLifecycle": lambda: NamespaceLifecycle(get_namespace),
        "LimitRanger": lambda: LimitRanger(limit_ranges),
        "ResourceQuota": lambda: ResourceQuota(quotas, Registry(new_evaluators())),
        "NodeRestriction": NodeRestriction,
        "TaintNodesByCondition": TaintNodesByCondition,
        "PodSecurity": lambda: PodSecurity(get_namespace, pods, load_from_admission_config(config_file)),
        "Priority": lambda: Priority(priority_classes),
        "DefaultTolerationSeconds": DefaultTolerationSeconds,
        "DefaultStorageClass": lambda: DefaultStorageClass(storage_classes),
        "StorageObjectInUseProtection": StorageObjectInUseProtection,
        "PersistentVolumeClaimResize": lambda: PersistentVolumeClaimResize(storage_classes),
        "RuntimeClass": lambda: RuntimeClass(runtime_classes),
        "DefaultIngressClass": lambda: DefaultIngressClass(ingress_classes),
        "MutatingAdmissionWebhook": lambda: MutatingAdmissionWebhook(get_namespace, equivalents),
        "ValidatingAdmissionPolicy": lambda: ValidatingAdmissionPolicy(get_namespace, authorizer, equivalents),
        "ValidatingAdmissionWebhook": lambda: ValidatingAdmissionWebhook(get_namespace, equivalents),
    }
    if authorizer is not None:  # the plugins that ask whether the requester may act on a signer
        factories["CertificateApproval"] = lambda: CertificateApproval(authorizer)
        factories["CertificateSigning"] = lambda: CertificateSigning(authorizer)
    factories["CertificateSubjectRestriction"] = CertificateSubjectRestriction
    if get_object is not None:  # the service accounts pods run as, read from storage
        factories["ServiceAccount"] = lambda: ServiceAccount(get_object)
    plugins = [factories[name]() for name in names if name in factories]
    rest_mapper = None
    if informers is not None:  # the plugin initializer's WantsExternalKubeInformerFactory and WantsRESTMapper
        rest_mapper = RESTMapper(informers.client.discovery)
        rest_mapper.follow(informers)
        for plugin in plugins:
            if hasattr(plugin, "set_informers"):
                plugin.set_informers(informers)
            if hasattr(plugin, "set_rest_mapper"):
                plugin.set_rest_mapper(rest_mapper)
    return AdmissionPlugins(Chain(plugins), rest_mapper)
