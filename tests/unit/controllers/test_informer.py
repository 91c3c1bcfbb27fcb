"""The informer: a watch-list of any size once, then live events; relists that back off; a stop that
ends it whatever it is doing."""

from __future__ import annotations

import asyncio

from cachertesting import with_cacher
from kube_apiserver.controllers.informer import Backoff, Informer, InformerController, Resource
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher

PREFIX = "/registry/configmaps/"


class CacherStore:
    """The registry storage as an informer sees it: watch(ctx, query), storage errors as one ERROR event."""

    def __init__(self, cacher: Cacher):
        self.cacher = cacher
        self.lists = 0  # watches that asked for the whole current state

    async def watch(self, ctx, query):
        if query.resource_version in ("", "0"):
            self.lists += 1
        try:
            return await self.cacher.watch(PREFIX, query.resource_version, None, query.send_initial_events,
                                           query.allow_watch_bookmarks)
        except storage.StorageError as err:
            return FailingWatcher(410, str(err))


class FailingWatcher:
    def __init__(self, code: int = 410, message: str = "too old resource version"):
        self.events = [storage.WatchEvent(storage.ERROR, {"kind": "Status", "code": code, "message": message}, 0)]

    def __aiter__(self):
        return self

    async def __anext__(self):
        await asyncio.sleep(0)
        if not self.events:
            raise StopAsyncIteration
        return self.events.pop()

    async def stop(self) -> None:
        pass


def resource(store) -> Resource:
    return Resource("", "v1", "configmaps", "ConfigMap", True, store)


def in_loop(fn):
    def wrapper():
        asyncio.run(fn())
    wrapper.__name__ = fn.__name__
    return wrapper


cached = with_cacher(PREFIX)


async def create_many(store, count: int) -> None:
    await asyncio.gather(*(store.create(f"{PREFIX}ns/cm-{i:05d}", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:05d}", "namespace": "ns"}})
        for i in range(count)))


async def settle(turns: int = 200) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)


@cached
async def test_more_objects_than_the_buffer_are_listed_once_then_watched(store, _):
    await create_many(store, 5000)
    cacher = Cacher(store, PREFIX)  # as after a restart: its history starts with the objects
    cacher.start()
    await cacher.get_list(PREFIX, storage.ListOptions())
    seen: list[tuple[str, str]] = []

    async def handler(_resource, event_type, obj):
        seen.append((event_type, obj["metadata"]["name"]))

    registry = CacherStore(cacher)
    informer = Informer(resource(registry), handler)
    informer.start()
    try:
        await asyncio.wait_for(informer.synced.wait(), 30)
        assert len(seen) == 5000 and {t for t, _ in seen} == {"ADDED"}
        await store.create(f"{PREFIX}ns/live", {"metadata": {"name": "live", "namespace": "ns"}})
        for _ in range(100):
            if seen[-1] == ("ADDED", "live"):
                break
            await asyncio.sleep(0.02)
        await settle()
        assert seen[-1] == ("ADDED", "live") and len(seen) == 5001
        assert registry.lists == 1 and informer.lists == 1
    finally:
        await informer.stop()
        await cacher.stop()


@in_loop
async def test_a_failing_watch_is_relisted_after_a_backoff_not_at_once():
    class Failing:
        watches = 0

        async def watch(self, ctx, query):
            self.watches += 1
            return FailingWatcher()

    async def handler(*_):
        pass

    store = Failing()
    informer = Informer(resource(store), handler)
    informer.start()
    await settle(1000)  # a relist loop without a backoff would watch hundreds of times by now
    assert store.watches == 1
    await asyncio.wait_for(informer.stop(), 5)


@in_loop
async def test_a_watch_that_ends_at_once_without_events_is_an_error():
    class Empty:
        watches = 0

        async def watch(self, ctx, query):
            self.watches += 1
            watcher = FailingWatcher()
            watcher.events.clear()
            return watcher

    async def handler(*_):
        pass

    store = Empty()
    informer = Informer(resource(store), handler)
    informer.start()
    await settle(1000)
    assert store.watches == 1  # "very short watch": backs off like any failure
    await asyncio.wait_for(informer.stop(), 5)


def test_backoff_doubles_with_jitter_up_to_its_cap():
    async def main() -> list[float]:
        backoff = Backoff()
        return [backoff.next() for _ in range(10)]

    delays = asyncio.run(main())
    for i, delay in enumerate(delays):
        base = min(0.8 * 2**i, 30.0)
        assert base <= delay <= 2 * base


@cached
async def test_stop_ends_an_informer_in_the_middle_of_a_large_list(store, cacher):
    await create_many(store, 3000)
    await cacher.get_list(PREFIX, storage.ListOptions())
    seen = []

    async def handler(_resource, event_type, obj):
        seen.append(obj)  # never suspends: only the informer's own yielding lets anything else run

    informer = Informer(resource(CacherStore(cacher)), handler)
    informer.start()
    while not seen:
        await asyncio.sleep(0)
    await asyncio.wait_for(informer.stop(), 5)
    assert len(seen) < 3000


class ScriptedStore:
    """Each watch streams the next script's events, then stays open (the last script) or ends."""

    def __init__(self, *scripts: list[storage.WatchEvent]):
        self.scripts = list(scripts)
        self.queries = []

    async def watch(self, ctx, query):
        self.queries.append(query)
        events = self.scripts.pop(0) if self.scripts else []
        return ScriptedWatcher(events, hold=not self.scripts)


class ScriptedWatcher:
    def __init__(self, events: list[storage.WatchEvent], hold: bool):
        self.events, self.hold = list(events), hold

    def __aiter__(self):
        return self

    async def __anext__(self):
        await asyncio.sleep(0)
        if self.events:
            return self.events.pop(0)
        if self.hold:
            await asyncio.Event().wait()
        raise StopAsyncIteration

    async def stop(self) -> None:
        pass


def _cm(name: str, rv: int) -> storage.WatchEvent:
    obj = {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}}
    return storage.WatchEvent(storage.ADDED, obj, rv)


def _end_of_initial_events(rv: int) -> storage.WatchEvent:
    bookmark = {"metadata": {"resourceVersion": str(rv), "annotations": {storage.INITIAL_EVENTS_END: "true"}}}
    return storage.WatchEvent(storage.BOOKMARK, bookmark, rv)


@in_loop
async def test_a_relist_hands_over_what_was_deleted_meanwhile():
    """The controllers' informer is the client's reflector: a watch-list's initial state replaces what it
    held, so an object deleted while it could not watch reaches the handler as DELETED, and one it
    already held as MODIFIED."""
    too_old = storage.WatchEvent(storage.ERROR, {"kind": "Status", "code": 410, "message": "too old"}, 0)
    store = ScriptedStore([_cm("a", 1), _cm("b", 2), _end_of_initial_events(2), too_old],
                          [_cm("a", 1), _end_of_initial_events(9)])
    seen: list[tuple[str, str]] = []

    async def handler(_resource, event_type, obj):
        seen.append((event_type, obj["metadata"]["name"]))

    informer = Informer(resource(store), handler)
    informer.informer._backoff.next = lambda: 0.0  # relist at once
    informer.start()
    try:
        for _ in range(500):
            if len(seen) == 4:
                break
            await asyncio.sleep(0.001)
        assert seen == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
        assert sorted(informer.indexer.items) == ["ns/a"] and informer.lists == 2
        assert all(q.send_initial_events and q.resource_version == "0" for q in store.queries)
    finally:
        await informer.stop()


@in_loop
async def test_a_controller_works_once_its_informers_have_listed():
    """WaitForNamedCacheSync: no key is synced before every informer holds its first list, so a lister's
    answer is the state, not the part of it streamed so far."""

    class Controller(InformerController):
        def __init__(self, store):
            self.queue = asyncio.Queue()
            self.informers = [Informer(resource(store), self._changed)]
            self.synced_with: list[list[str]] = []

        async def _changed(self, _resource, _event_type, obj):
            self.queue.put_nowait(obj["metadata"]["name"])

        async def sync(self, key):
            self.synced_with.append(sorted(self.informers[0].indexer.items))

    release = asyncio.Event()

    class Slow(ScriptedStore):
        async def watch(self, ctx, query):
            watcher = await super().watch(ctx, query)
            first = watcher.events.pop(0)
            rest = watcher.events

            async def events():
                yield first
                await release.wait()  # the rest of the initial state comes later
                for event in rest:
                    yield event
                await asyncio.Event().wait()

            return SimpleWatcher(events())

    controller = Controller(Slow([_cm("a", 1), _cm("b", 2), _end_of_initial_events(2)]))
    await controller.start()
    try:
        await settle(200)
        assert controller.synced_with == []  # "a" is queued, but the list is not complete yet
        release.set()
        for _ in range(500):
            if len(controller.synced_with) == 2:
                break
            await asyncio.sleep(0.001)
        assert controller.synced_with == [["ns/a", "ns/b"], ["ns/a", "ns/b"]]
        assert controller.informers[0].get("b", "ns")["metadata"]["resourceVersion"] == "2"
    finally:
        await controller.stop()


class SimpleWatcher:
    def __init__(self, events):
        self.events = events

    def __aiter__(self):
        return self.events.__aiter__()

    async def stop(self) -> None:
        pass
