"""The admission plugins served here, in kube-apiserver's order, as --enable-admission-plugins and
--disable-admission-plugins select them (the names the flags accept that are not served yet are skipped)."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..admission.certificates import CertificateApproval, CertificateSigning, CertificateSubjectRestriction
from ..admission.default_ingress_class import DefaultIngressClass
from ..admission.default_storage_class import DefaultStorageClass
from ..admission.default_toleration_seconds import DefaultTolerationSeconds
from ..admission.interfaces import Chain
from ..admission.lister import NamespacedLister, RouteTable
from ..admission.namespace_lifecycle import NamespaceLifecycle
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
from ..api.core.limitrange.admission import LimitRanger
from ..api.core.resourcequota.evaluators import new_evaluators
from ..authorization.authorizer import Authorizer
from ..client.informers import SharedInformerFactory
from ..serviceaccount.claims import ObjectGetter

NamespaceGetter = Callable[[str], Awaitable[dict[str, Any] | None]]


@dataclass
class AdmissionPlugins:
    chain: Chain
    # The plugins that map resources through the served routes (their REST mapper): bound once routes exist.
    listers: list[Any] = field(default_factory=list)

    def bind(self, group_versions: RouteTable, custom_resources: RouteTable | None = None) -> None:
        """`custom_resources`: the apiextensions server's routes (policy params may be custom resources;
        webhooks re-default and match equivalent versions of custom resources too)."""
        every = ChainMap(group_versions, custom_resources or {})
        for lister in self.listers:
            if isinstance(lister, ValidatingAdmissionPolicy):
                lister.bind(group_versions, custom_resources)
            elif isinstance(lister, MutatingAdmissionWebhook | ValidatingAdmissionWebhook):
                lister.bind(every)  # type: ignore[arg-type]


def new_admission(names: list[str], get_namespace: NamespaceGetter,
                  get_object: ObjectGetter | None = None, config_file: str = "",
                  authorizer: Authorizer | None = None, informers: SharedInformerFactory | None = None) -> AdmissionPlugins:
    """`informers`: the loopback client's shared informers, which the plugins' listers read (each started
    when first read) and the quota plugin writes through."""
    quotas, limit_ranges = QuotaAccessor(informers), NamespacedLister(informers, "limitranges")
    storage_classes = NamespacedLister(informers, "storageclasses", "storage.k8s.io")
    pods = NamespacedLister(informers, "pods")
    priority_classes = NamespacedLister(informers, "priorityclasses", "scheduling.k8s.io")
    runtime_classes = NamespacedLister(informers, "runtimeclasses", "node.k8s.io")
    ingress_classes = NamespacedLister(informers, "ingressclasses", "networking.k8s.io")
    factories: dict[str, Callable[[], Any]] = {
        "NamespaceLifecycle": lambda: NamespaceLifecycle(get_namespace),
        "LimitRanger": lambda: LimitRanger(limit_ranges),
        "ResourceQuota": lambda: ResourceQuota(quotas, Registry(new_evaluators())),
        "TaintNodesByCondition": TaintNodesByCondition,
        "PodSecurity": lambda: PodSecurity(get_namespace, pods, load_from_admission_config(config_file)),
        "Priority": lambda: Priority(priority_classes),
        "DefaultTolerationSeconds": DefaultTolerationSeconds,
        "DefaultStorageClass": lambda: DefaultStorageClass(storage_classes),
        "StorageObjectInUseProtection": StorageObjectInUseProtection,
        "PersistentVolumeClaimResize": lambda: PersistentVolumeClaimResize(storage_classes),
        "RuntimeClass": lambda: RuntimeClass(runtime_classes),
        "DefaultIngressClass": lambda: DefaultIngressClass(ingress_classes),
        "MutatingAdmissionWebhook": lambda: MutatingAdmissionWebhook(get_namespace),
        "ValidatingAdmissionPolicy": lambda: ValidatingAdmissionPolicy(get_namespace, authorizer),
        "ValidatingAdmissionWebhook": lambda: ValidatingAdmissionWebhook(get_namespace),
    }
    if authorizer is not None:  # the plugins that ask whether the requester may act on a signer
        factories["CertificateApproval"] = lambda: CertificateApproval(authorizer)
        factories["CertificateSigning"] = lambda: CertificateSigning(authorizer)
    factories["CertificateSubjectRestriction"] = CertificateSubjectRestriction
    if get_object is not None:  # the service accounts pods run as, read from storage
        factories["ServiceAccount"] = lambda: ServiceAccount(get_object)
    plugins = [factories[name]() for name in names if name in factories]
    if informers is not None:  # the plugin initializer's WantsExternalKubeInformerFactory
        for plugin in plugins:
            if hasattr(plugin, "set_informers"):
                plugin.set_informers(informers)
    # The webhook and policy plugins map resources (equivalents, conversion, params) through the routes.
    listers = [p for p in plugins if isinstance(p, MutatingAdmissionWebhook | ValidatingAdmissionWebhook
                                                | ValidatingAdmissionPolicy)]
    return AdmissionPlugins(Chain(plugins), listers)
