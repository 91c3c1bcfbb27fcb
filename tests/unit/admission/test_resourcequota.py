"""The ResourceQuota admission evaluator: usage charged with the resourceVersion it was computed from, a
conflicting quota read again and checked again, dry runs never charged, and ResourceList arithmetic."""

from __future__ import annotations

import asyncio
import copy

import pytest

from kube_apiserver.admission.interfaces import Attributes
from kube_apiserver.admission.resourcequota import QuotaAccessor, Registry, controller
from kube_apiserver.admission.resourcequota import resources as rl
from kube_apiserver.admission.resourcequota.controller import QuotaEvaluator
from kube_apiserver.api.core.resourcequota.evaluators import new_evaluators
from kube_apiserver.apimachinery import errors, quantity
from kube_apiserver.registry.context import UserInfo


class FakeAccessor:
    """Quotas kept in memory; the first writes of `conflicts` fail as if someone else wrote first."""

    def __init__(self, quota: dict, conflicts: int = 0):
        self.quota, self.conflicts, self.writes = quota, conflicts, 0

    async def get_quotas(self, namespace: str, live: bool = False) -> list[dict]:
        return [copy.deepcopy(self.quota)]

    def known_without_quotas(self, namespace: str) -> bool:
        return False  # it always holds its quota

    async def update_status(self, quota: dict) -> dict:
        if quota["metadata"]["resourceVersion"] != self.quota["metadata"]["resourceVersion"]:
            raise errors.conflict("resourcequotas", "", "q", errors.OPTIMISTIC_LOCK_MESSAGE)
        if self.conflicts:
            self.conflicts -= 1
            self.quota["status"]["used"]["pods"] = "1"  # another server admitted a pod meanwhile
            self.quota["metadata"]["resourceVersion"] = str(int(self.quota["metadata"]["resourceVersion"]) + 1)
            raise errors.conflict("resourcequotas", "", "q", errors.OPTIMISTIC_LOCK_MESSAGE)
        self.writes += 1
        self.quota = copy.deepcopy(quota)
        self.quota["metadata"]["resourceVersion"] = str(int(quota["metadata"]["resourceVersion"]) + 1)
        return self.quota


def new_quota(pods: str = "2") -> dict:
    return {"metadata": {"name": "q", "namespace": "ns", "resourceVersion": "10"},
            "spec": {"hard": {"pods": pods}}, "status": {"hard": {"pods": pods}, "used": {"pods": "0"}}}


def create_pod(name: str, dry_run: bool = False) -> Attributes:
    pod = {"metadata": {"name": name, "namespace": "ns"}, "spec": {"containers": [{"name": "c"}]},
           "status": {"phase": "Pending"}}
    return Attributes("CREATE", "", "v1", "Pod", "pods", "", "ns", name, pod, None, UserInfo("test"), dry_run)


def evaluate(accessor: FakeAccessor, *attrs: Attributes) -> list[BaseException | None]:
    evaluator = QuotaEvaluator(accessor, Registry(new_evaluators()))  # type: ignore[arg-type]

    async def main() -> list[BaseException | None]:
        return list(await asyncio.gather(*(evaluator.evaluate(a) for a in attrs), return_exceptions=True))
    return asyncio.run(main())


def test_a_conflict_is_read_again_and_checked_against_the_new_usage():
    accessor = FakeAccessor(new_quota(), conflicts=1)
    assert evaluate(accessor, create_pod("a")) == [None]
    assert accessor.quota["status"]["used"] == {"pods": "2"} and accessor.writes == 1
    [refused] = evaluate(accessor, create_pod("b"))
    assert isinstance(refused, errors.StatusError) and refused.code == 403
    assert refused.message == ('pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, '
                               'limited: pods=2')


def test_conflicts_past_the_retries_fail_the_request_once_the_retry_window_is_closed(monkeypatch):
    monkeypatch.setattr(controller, "CONFLICT_RETRY_WINDOW", 0.0)
    accessor = FakeAccessor(new_quota("100"), conflicts=10)
    [failed] = evaluate(accessor, create_pod("a"))
    assert isinstance(failed, errors.StatusError) and failed.code == 409
    assert accessor.conflicts == 6  # the first write and upstream's 3 retries


def test_conflicts_are_retried_while_other_servers_charge_the_quota():
    accessor = FakeAccessor(new_quota("100"), conflicts=10)
    assert evaluate(accessor, create_pod("a")) == [None]
    assert accessor.conflicts == 0 and accessor.quota["status"]["used"] == {"pods": "2"}


def test_concurrent_requests_of_a_namespace_are_charged_one_at_a_time():
    accessor = FakeAccessor(new_quota("3"))
    results = evaluate(accessor, *(create_pod(f"p{i}") for i in range(5)))
    assert [r is None for r in results].count(True) == 3
    assert accessor.quota["status"]["used"] == {"pods": "3"}


def test_a_burst_in_one_namespace_is_charged_in_one_status_write():
    accessor = FakeAccessor(new_quota("3"))
    results = evaluate(accessor, *(create_pod(f"p{i}") for i in range(5)))
    assert [r is None for r in results] == [True, True, True, False, False]
    assert accessor.writes == 1 and accessor.quota["status"]["used"] == {"pods": "3"}


def test_a_batch_that_conflicts_is_checked_again_whole():
    accessor = FakeAccessor(new_quota("3"), conflicts=1)  # another server charged one pod meanwhile
    results = evaluate(accessor, *(create_pod(f"p{i}") for i in range(4)))
    assert [r is None for r in results] == [True, True, False, False]
    assert accessor.writes == 1 and accessor.quota["status"]["used"] == {"pods": "3"}


def test_dry_run_is_checked_but_not_charged():
    accessor = FakeAccessor(new_quota("1"))
    assert evaluate(accessor, create_pod("a", dry_run=True)) == [None]
    assert accessor.writes == 0 and accessor.quota["status"]["used"] == {"pods": "0"}


@pytest.mark.parametrize(("a", "b", "total"), [("0", "128Mi", "128Mi"), ("1Gi", "512Mi", "1536Mi"),
                                                ("100m", "1", "1100m"), ("1", "1Mi", "1048577")])
def test_quantities_add_in_the_format_go_keeps(a, b, total):
    assert rl.to_strings(rl.add({"x": quantity.parse(a)}, {"x": quantity.parse(b)})) == {"x": total}


def test_subtract_never_goes_negative_and_pretty_print_sorts():
    used = rl.subtract_non_negative({"cpu": quantity.parse("1"), "pods": quantity.parse("1")},
                                    {"cpu": quantity.parse("2"), "memory": quantity.parse("1Gi")})
    assert rl.to_strings(used) == {"cpu": "0", "memory": "0", "pods": "1"}
    assert rl.pretty_print({"pods": quantity.parse("1"), "cpu": quantity.parse("500m")}) == "cpu=500m,pods=1"


class EmptyInformer:
    """An informer that has listed no quota anywhere."""

    stopped = False

    def __init__(self) -> None:
        self.synced = asyncio.Event()
        self.synced.set()
        self.indexer = self

    def list(self, namespace: str | None = None) -> list[dict]:
        return []


class CountingQuotaClient:
    """The loopback client's resourcequotas: counts the live lists, and finds `quotas` in every namespace."""

    def __init__(self, quotas: list[dict]) -> None:
        self.quotas, self.lists = quotas, 0

    def resource(self, group: str, version: str, resource: str) -> CountingQuotaClient:
        return self

    def namespace(self, namespace: str) -> CountingQuotaClient:
        return self

    async def list(self, **params: object) -> dict:
        self.lists += 1
        await asyncio.sleep(0.01)
        return {"kind": "ResourceQuotaList", "apiVersion": "v1", "items": copy.deepcopy(self.quotas)}


class EmptyInformers:
    def __init__(self, client: CountingQuotaClient) -> None:
        self.client, self.informer = client, EmptyInformer()

    def for_resource(self, group: str, version: str, resource: str) -> EmptyInformer:
        return self.informer


def test_a_namespace_without_cached_quotas_is_looked_up_live_once_per_ttl():
    client = CountingQuotaClient([new_quota()])
    accessor = QuotaAccessor(EmptyInformers(client))  # type: ignore[arg-type]

    async def main() -> list[list[dict]]:
        burst = await asyncio.gather(*(accessor.get_quotas("ns") for _ in range(5)))  # one shared list
        assert client.lists == 1
        later = await accessor.get_quotas("ns")  # within the TTL: the LRU answers
        assert client.lists == 1
        accessor.quotas.live_lookups.ttl = 0.0
        accessor.quotas.live_lookups.clear()
        await accessor.get_quotas("ns")
        await accessor.get_quotas("ns")  # expired at once: listed again
        assert client.lists == 3
        await accessor.get_quotas("ns", live=True)  # a retry after a conflict always reads the storage
        assert client.lists == 4
        return [*burst, later]

    answers = asyncio.run(main())
    assert [[q["metadata"]["name"] for q in answer] for answer in answers] == [["q"]] * 6
