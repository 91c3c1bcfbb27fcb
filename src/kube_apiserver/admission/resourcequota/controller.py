"""The quota evaluator of the ResourceQuota admission plugin
(k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go): a request is checked against every
quota of its namespace that applies to it, and its usage is added to those quotas' status.used before it
is admitted. Requests of one namespace are checked in batches, one batch at a time; quota status is
written with the
resourceVersion it was computed from (a compare-and-swap: several servers may charge one quota), and on a
conflict the quotas are read again from the storage and the requests checked again."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from ...apimachinery import errors
from ..interfaces import CREATE, UPDATE, Attributes, forbidden
from . import resources as rl
from .accessor import QuotaAccessor
from .generic import Evaluator, Registry, hard_names, matches
from .resources import ResourceList

Object = dict[str, Any]
RETRIES = 3
CONFLICT_RETRY_WINDOW = 5.0  # seconds a batch retries conflicting quota writes (within the timeout below)
EVALUATION_TIMEOUT = 10.0  # seconds a request waits for its namespace's worker
# Virtual resources that are not stored, and events (install.DefaultIgnoredResources).
IGNORED = frozenset(
    {
        ("", "bindings"),
        ("", "componentstatuses"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("", "events"),
        ("events.k8s.io", "events"),
    }
)


def used_of(quota: Object) -> ResourceList:
    return rl.parse((quota.get("status") or {}).get("used"))


def hard_of(quota: Object) -> ResourceList:
    return rl.parse((quota.get("status") or {}).get("hard"))


def _has_usage_stats(quota: Object, interesting: list[str]) -> bool:
    used = (quota.get("status") or {}).get("used") or {}
    return all(name in used for name in hard_names(quota) if name in interesting)


def _interesting(quotas: list[Object], attrs: Attributes, evaluator: Evaluator) -> list[int]:
    """The quotas that apply to the object, refusing it when one cannot take it (constraints, no usage)."""
    obj, indexes = attrs.object or {}, []
    for i, quota in enumerate(quotas):
        if not matches(evaluator, quota, obj):
            continue
        name = quota["metadata"]["name"]
        restricted = evaluator.matching_resources(hard_names(quota))
        why = evaluator.constraints(restricted, obj)
        if why is not None:
            raise forbidden(attrs, f"failed quota: {name}: {why}")
        if not _has_usage_stats(quota, restricted):
            raise forbidden(
                attrs, f"status unknown for quota: {name}, resources: {rl.pretty_print_names(restricted)}"
            )
        indexes.append(i)
    return indexes


def _deltas(
    quotas: list[Object], indexes: list[int], attrs: Attributes, evaluator: Evaluator, usage: ResourceList
) -> dict[int, ResourceList]:
    """The usage each applicable quota is charged: the object's, or on update what it adds."""
    deltas = {i: usage for i in indexes}
    if attrs.operation == UPDATE:
        old = attrs.old_object
        if old is None:
            raise forbidden(attrs, "unable to get previous usage since prior version of object was not found")
        if (old.get("metadata") or {}).get("resourceVersion"):
            delta = rl.subtract_non_negative(usage, evaluator.usage(old))
            deltas.update({i: delta for i in indexes if matches(evaluator, quotas[i], old)})
    nonzero = {i: rl.remove_zeros(delta) for i, delta in deltas.items()}
    return {i: delta for i, delta in nonzero.items() if delta}


def _charge(quota: Object, delta: ResourceList, attrs: Attributes) -> Object:
    """The quota with its usage raised by `delta`, or the exceeded-quota refusal."""
    hard = hard_of(quota)
    requested = rl.mask(delta, hard)
    used = used_of(quota)
    new_used = rl.add(used, requested)
    if attrs.subresource != "status":
        allowed, exceeded = rl.less_than_or_equal(rl.mask(new_used, requested), hard)
        if not allowed:
            raise forbidden(
                attrs,
                f"exceeded quota: {quota['metadata']['name']}, "
                f"requested: {rl.pretty_print(rl.mask(requested, exceeded))}, "
                f"used: {rl.pretty_print(rl.mask(used, exceeded))}, "
                f"limited: {rl.pretty_print(rl.mask(hard, exceeded))}",
            )
    charged = copy.deepcopy(quota)
    charged.setdefault("status", {})["used"] = rl.to_strings(new_used)
    return charged


def check_request(quotas: list[Object], attrs: Attributes, evaluator: Evaluator) -> list[Object]:
    """CheckRequest: the quotas as they would be with the request admitted (not yet written)."""
    if not evaluator.handles(attrs):
        return quotas
    indexes = _interesting(quotas, attrs, evaluator)
    if not indexes:
        return quotas
    obj = attrs.object or {}
    if attrs.namespace and isinstance(obj.get("metadata"), dict):
        obj["metadata"].setdefault("namespace", attrs.namespace)
    usage = evaluator.usage(obj)
    if negative := rl.negative(usage):
        raise forbidden(attrs, f"quota usage is negative for resource(s): {rl.pretty_print_names(negative)}")
    deltas = _deltas(quotas, indexes, attrs, evaluator, usage)
    out = list(quotas)
    for i, delta in deltas.items():
        out[i] = _charge(quotas[i], delta, attrs)
    return out


class _Waiter:
    """One request waiting for its namespace's worker (admissionWaiter). It stays undecided (upstream's
    default deny) until a quota write that charges it succeeds, or it is refused."""

    def __init__(self, attrs: Attributes, evaluator: Evaluator):
        self.attrs, self.evaluator = attrs, evaluator
        self.undecided = True
        self.result: errors.StatusError | None = None
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def decide(self, result: errors.StatusError | None) -> None:
        self.undecided, self.result = False, result


class QuotaEvaluator:
    """Requests are queued by namespace; one worker per namespace takes every request waiting there and
    checks them together against the quotas, so that a burst costs one status write per quota (as
    upstream's work queue batches them), which also keeps few writes racing other servers' for the
    quota's resourceVersion."""

    def __init__(self, accessor: QuotaAccessor, registry: Registry):
        self.accessor = accessor
        self.registry = registry
        self.waiting: dict[str, list[_Waiter]] = {}
        self.workers: dict[str, asyncio.Task[None]] = {}

    async def evaluate(self, attrs: Attributes) -> None:
        if (attrs.group, attrs.resource) in IGNORED or attrs.operation not in (CREATE, UPDATE):
            return
        evaluator = self.registry.get(attrs.group, attrs.resource)
        if not evaluator.handles(attrs):
            return
        if self.accessor.known_without_quotas(attrs.namespace):
            return  # what a worker would find: no quota in the namespace, nothing to check or charge
        waiter = _Waiter(attrs, evaluator)
        self.waiting.setdefault(attrs.namespace, []).append(waiter)
        if attrs.namespace not in self.workers:
            self.workers[attrs.namespace] = asyncio.ensure_future(self._work(attrs.namespace))
        try:
            async with asyncio.timeout(EVALUATION_TIMEOUT):  # not wait_for: it can swallow a cancellation
                await asyncio.shield(waiter.finished)
        except TimeoutError:
            raise errors.internal_error("resource quota evaluation timed out") from None
        if waiter.undecided:
            raise errors.internal_error("resource quota evaluation did not complete")
        if waiter.result is not None:
            raise waiter.result

    async def _work(self, namespace: str) -> None:
        try:
            while batch := self.waiting.pop(namespace, None):
                try:
                    await self._check_attributes(namespace, batch)
                except Exception as err:  # noqa: BLE001 - every waiter gets an answer
                    _fail_undecided(batch, errors.internal_error(err))
                finally:
                    for waiter in batch:
                        if not waiter.finished.done():
                            waiter.finished.set_result(None)
        finally:
            del self.workers[namespace]

    async def _check_attributes(self, namespace: str, batch: list[_Waiter]) -> None:
        try:
            quotas = await self.accessor.get_quotas(namespace)
        except errors.StatusError as err:
            _fail_undecided(batch, err, every=True)
            return
        if not quotas:  # no quota in the namespace: nothing to check, nothing to charge
            for waiter in batch:
                waiter.decide(None)
            return
        await self._check_quotas(namespace, quotas, batch)

    async def _check_quotas(self, namespace: str, quotas: list[Object], batch: list[_Waiter]) -> None:
        """checkQuotas: charge every request in turn, write the quotas whose usage changed with the
        resourceVersion they were read at, and on a failed write check the batch again against those
        quotas read anew from the storage. A conflict means another server's charge was written meanwhile
        (progress), so conflicts are retried until the retry window closes, where upstream stops after 3
        retries: with several servers charging one quota, a request that fits it would otherwise be
        refused with a 409; other failures are retried 3 times."""
        retries, deadline = RETRIES, asyncio.get_running_loop().time() + CONFLICT_RETRY_WINDOW
        while True:
            failed, last_error = await self._charge_and_write(quotas, batch)
            if last_error is None:
                return
            conflicts_only = all(err.code == 409 for err in failed.values())
            if not (conflicts_only and asyncio.get_running_loop().time() < deadline):
                if retries <= 0:
                    _fail_undecided(batch, last_error)
                    return
                retries -= 1
            try:
                fresh = await self.accessor.get_quotas(namespace, live=True)
            except errors.StatusError as err:
                _fail_undecided(batch, err)
                return
            quotas = [q for q in fresh if q["metadata"]["name"] in failed]  # a deleted quota no longer counts

    async def _charge_and_write(
        self, quotas: list[Object], batch: list[_Waiter]
    ) -> tuple[dict[str, errors.StatusError], errors.StatusError | None]:
        """The quotas whose write failed, by name, and the last failure; the batch admitted when none."""
        charged = _charge_batch(quotas, batch)
        failed: dict[str, errors.StatusError] = {}
        last_error = None
        for old, new in zip(quotas, charged, strict=True):
            if rl.equals(used_of(old), used_of(new)):
                continue
            try:
                await self.accessor.update_status(new)
            except errors.StatusError as err:
                failed[new["metadata"]["name"]] = last_error = err
        if last_error is None:
            for waiter in batch:  # their charges are written
                if waiter.undecided:
                    waiter.decide(None)
        return failed, last_error


def _charge_batch(quotas: list[Object], batch: list[_Waiter]) -> list[Object]:
    """The quotas charged with every request of the batch that fits, in order; a request is decided when
    refused, or when it charges nothing (or is a dry run), and otherwise waits for the write."""
    for waiter in batch:
        waiter.undecided = True  # a retry checks every request of the batch again
        try:
            charged = check_request(quotas, waiter.attrs, waiter.evaluator)
        except errors.StatusError as err:
            waiter.decide(err)
            continue
        if waiter.attrs.dry_run:
            waiter.decide(None)
            continue
        if all(rl.equals(used_of(old), used_of(new)) for old, new in zip(quotas, charged, strict=True)):
            waiter.decide(None)
        quotas = charged
    return quotas


def _fail_undecided(batch: list[_Waiter], err: errors.StatusError, every: bool = False) -> None:
    for waiter in batch:
        if every or waiter.undecided:
            waiter.decide(err)
