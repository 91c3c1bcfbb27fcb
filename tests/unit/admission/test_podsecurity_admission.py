"""The PodSecurity plugin's decisions with in-memory namespaces and pods: enforce, warn, workloads,
exemptions, ignored updates and subresources, and the warnings about existing pods when a namespace's
enforce level tightens."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.admission.interfaces import CREATE, UPDATE, Attributes
from kube_apiserver.admission.podsecurity import PodSecurity, PodSecurityConfiguration
from kube_apiserver.admission.podsecurity import admission as psa
from kube_apiserver.admission.podsecurity.config import Exemptions
from kube_apiserver.apimachinery import errors
from kube_apiserver.registry.context import UserInfo

ENFORCE = "pod-security.kubernetes.io/enforce"
PRIV = {"privileged": True}


def pod(name: str, context: dict | None = None, image: str = "nginx", owner: str = "", **spec) -> dict:
    container = {"name": "c", "image": image, **({"securityContext": context} if context else {})}
    meta: dict = {"name": name}
    if owner:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}]
    return {"metadata": meta, "spec": {"containers": [container], **spec}}


class Pods:
    def __init__(self, items: list[dict]):
        self.items = items

    async def list(self, namespace: str, live: bool = False) -> list[dict]:
        return list(self.items)


def plugin(labels: dict[str, str] | None, pods: list[dict] | None = None,
           exemptions: Exemptions | None = None) -> PodSecurity:
    async def get_namespace(name: str) -> dict | None:
        return None if labels is None else {"metadata": {"name": name, "labels": labels}}
    config = PodSecurityConfiguration(exemptions=exemptions or Exemptions())
    return PodSecurity(get_namespace, Pods(pods or []), config)


def attrs(obj: dict, resource: str = "pods", operation: str = CREATE, old: dict | None = None, group: str = "",
          subresource: str = "", namespace: str = "ns", kind: str = "Pod", user: str = "alice") -> Attributes:
    name = obj["metadata"]["name"]
    return Attributes(operation, group, "v1", kind, resource, subresource, namespace, name, obj, old, UserInfo(user))


def run(p: PodSecurity, a: Attributes) -> list[str]:
    asyncio.run(p.validate(a))
    return a.warnings


def test_enforce_refuses_with_the_forbidden_status() -> None:
    with pytest.raises(errors.StatusError) as err:
        run(plugin({ENFORCE: "baseline"}), attrs(pod("p", PRIV)))
    assert (err.value.code, err.value.details) == (403, {"name": "p", "kind": "pods"})
    assert err.value.message == ('pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged '
                                 '(container "c" must not set securityContext.privileged=true)')


def test_warn_only_when_enforce_passes_and_once_per_request() -> None:
    p = plugin({ENFORCE: "baseline", "pod-security.kubernetes.io/warn": "restricted",
                "pod-security.kubernetes.io/warn-version": "v1.24"})
    a = attrs(pod("p"))
    run(p, a)
    assert run(p, a) == [  # evaluated twice (an update retried), warned once
        'would violate PodSecurity "restricted:v1.24": allowPrivilegeEscalation != false (container "c" must set '
        'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set '
        'securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set '
        'securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set '
        'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")']


def test_workloads_warn_but_are_never_refused() -> None:
    template = pod("ignored", PRIV)
    deployment = {"metadata": {"name": "d"}, "spec": {"template": template}}
    warnings = run(plugin({ENFORCE: "baseline"}), attrs(deployment, "deployments", group="apps", kind="Deployment"))
    assert warnings == ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set '
                        "securityContext.privileged=true)"]
    cronjob = {"metadata": {"name": "cj"}, "spec": {"jobTemplate": {"spec": {"template": template}}}}
    assert run(plugin({ENFORCE: "baseline"}), attrs(cronjob, "cronjobs", group="batch", kind="CronJob"))
    configmap = {"metadata": {"name": "cm"}, "data": {}}
    assert run(plugin({ENFORCE: "restricted"}), attrs(configmap, "configmaps", kind="ConfigMap")) == []


def test_privileged_namespaces_ignored_subresources_and_missing_namespaces() -> None:
    assert run(plugin({}), attrs(pod("p", PRIV, hostPID=True))) == []
    assert run(plugin({ENFORCE: "restricted"}), attrs(pod("p", PRIV), subresource="status", operation=UPDATE)) == []
    with pytest.raises(errors.StatusError) as err:
        run(plugin(None), attrs(pod("p")))
    assert (err.value.code, err.value.message) == (500, 'Internal error occurred: failed to lookup namespace "ns"')
    deployment = {"metadata": {"name": "d"}, "spec": {"template": pod("t", PRIV)}}
    assert run(plugin(None), attrs(deployment, "deployments", group="apps")) == []


def test_only_image_changes_and_new_ephemeral_containers_are_checked_on_update() -> None:
    p = plugin({ENFORCE: "baseline"})
    old = pod("p", PRIV)
    relabelled = pod("p", PRIV)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert run(p, attrs(relabelled, operation=UPDATE, old=old)) == []
    with pytest.raises(errors.StatusError):
        run(p, attrs(pod("p", PRIV, image="nginx:2"), operation=UPDATE, old=old))
    debugged = pod("p")
    debugged["spec"]["ephemeralContainers"] = [{"name": "dbg", "image": "busybox", "securityContext": PRIV}]
    with pytest.raises(errors.StatusError) as err:
        run(p, attrs(debugged, operation=UPDATE, old=pod("p"), subresource="ephemeralcontainers"))
    assert 'container "dbg" must not set securityContext.privileged=true' in err.value.message


def test_exemptions() -> None:
    exempt = Exemptions(usernames=("system:serviceaccount:kube-system:replicaset-controller",),
                        runtime_classes=("kata",), namespaces=("ops",))
    p = plugin({ENFORCE: "restricted"}, exemptions=exempt)
    assert run(p, attrs(pod("p", PRIV), namespace="ops")) == []
    assert run(p, attrs(pod("p", PRIV), user=exempt.usernames[0])) == []
    assert run(p, attrs(pod("p", PRIV, runtimeClassName="kata"))) == []
    with pytest.raises(errors.StatusError):
        run(p, attrs(pod("p", PRIV, runtimeClassName="runc")))


def _namespace(name: str, labels: dict[str, str]) -> dict:
    return {"metadata": {"name": name, "labels": labels}}


def _relabel(p: PodSecurity, old: dict[str, str], new: dict[str, str], name: str = "ns") -> list[str]:
    return run(p, attrs(_namespace(name, new), "namespaces", UPDATE, _namespace(name, old), namespace="",
                        kind="Namespace"))


def test_tightened_enforce_summarizes_violations_one_pod_per_controller_first(monkeypatch) -> None:
    existing = [pod("web-2", owner="rs"), pod("web-1", owner="rs"), pod("web-3", owner="rs"), pod("solo", PRIV),
                pod("zz", hostNetwork=True), pod("aa", hostNetwork=True)]
    p = plugin({}, existing)
    assert _relabel(p, {}, {ENFORCE: "baseline"}) == [
        'existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"',
        "aa (and 1 other pod): host namespaces",
        "solo: privileged"]
    restricted = _relabel(p, {ENFORCE: "baseline"}, {ENFORCE: "restricted"})
    assert ("web-1 (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, "
            "runAsNonRoot != true, seccompProfile") in restricted
    monkeypatch.setattr(psa, "MAX_PODS_TO_CHECK", 4)
    limited = plugin({}, existing)  # replicas of one controller go last, so they are the ones skipped
    assert _relabel(limited, {}, {ENFORCE: "baseline"})[0] == ("new PodSecurity enforce level only checked against "
                                                               "the first 4 of 6 existing pods")


def test_unchanged_loosened_or_privileged_enforce_checks_nothing() -> None:
    p = plugin({}, [pod("solo", PRIV)])
    assert _relabel(p, {ENFORCE: "baseline"}, {ENFORCE: "baseline", "other": "label"}) == []
    assert _relabel(p, {ENFORCE: "restricted"}, {ENFORCE: "baseline"}) == []
    assert _relabel(p, {ENFORCE: "baseline"}, {ENFORCE: "privileged"}) == []
    # the same level at another version may forbid more
    assert _relabel(p, {ENFORCE: "baseline", ENFORCE + "-version": "v1.0"}, {ENFORCE: "baseline"})


def test_invalid_namespace_labels_are_refused_unless_already_invalid() -> None:
    p = plugin({})
    with pytest.raises(errors.StatusError) as err:
        run(p, attrs(_namespace("bad", {ENFORCE: "x"}), "namespaces", kind="Namespace", namespace=""))
    assert err.value.code == 422 and err.value.message == (
        'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "x": '
        "must be one of privileged, baseline, restricted")
    assert _relabel(p, {ENFORCE: "x"}, {ENFORCE: "x", "team": "a"}) == []  # the same errors as before: allowed
    with pytest.raises(errors.StatusError):
        _relabel(p, {ENFORCE: "x"}, {ENFORCE: "y"})


def test_exempt_namespace_relabelled_is_warned_that_its_policy_is_ignored() -> None:
    p = plugin({}, [pod("solo", PRIV)], Exemptions(namespaces=("ops",)))
    assert _relabel(p, {}, {ENFORCE: "baseline", "pod-security.kubernetes.io/audit": "restricted"}, "ops") == [
        'namespace "ops" is exempt from Pod Security, and the policy (enforce=baseline:latest, '
        "audit=restricted:latest) will be ignored"]
