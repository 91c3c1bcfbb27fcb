"""The controller (controller.py) against faults the server injects: 409 Conflicts on its updates and a watch
the server drops. The assertions read the server's request history (server.requests)."""

from __future__ import annotations

import threading
from urllib.parse import parse_qs

import controller
import pytest

from conftest import CONFIGMAPS, configmap, wait_for

WATCHED = {"sample.example.com/watched": "true"}

pytestmark = pytest.mark.kube_apiserver(
    controllers=[]
)  # none of the server's own controllers: a quiet server


@pytest.fixture
def start_controller(kube_apiserver):
    """Starts controller.run in a thread (once its first watch is open); stops it after the test, raising
    what made it fail, if anything did."""
    stop, failures, threads = threading.Event(), [], []

    def run() -> None:
        try:
            controller.run(kube_apiserver.kubernetes_client(), "default", stop)
        except Exception as e:  # reported by the test's teardown
            failures.append(e)

    def start() -> None:
        threads.append(threading.Thread(target=run, daemon=True))
        threads[0].start()
        # the history records a watch when it starts
        wait_for(lambda: kube_apiserver.requests(verb="watch", resource="configmaps"), what="the first watch")

    yield start
    stop.set()  # seen at its next event or when its watch ends (controller.WATCH_SECONDS)
    for thread in threads:
        thread.join(controller.WATCH_SECONDS + 30)
        assert not thread.is_alive(), "the controller did not stop"
    assert not failures, failures


def annotation(server, name):
    resp = server.request("GET", f"{CONFIGMAPS}/{name}")
    return (
        resp.json()["metadata"].get("annotations", {}).get(controller.ANNOTATION)
        if resp.status == 200
        else None
    )


def test_conflicts_are_retried_on_a_fresh_read(kube_apiserver, start_controller):
    start_controller()
    with kube_apiserver.injected(verb="update", resource="configmaps", name="settings", status=409, count=2):
        settings = configmap("settings", WATCHED, {"b": "2", "a": "1"})
        assert kube_apiserver.request("POST", CONFIGMAPS, settings).status == 201
        wait_for(lambda: annotation(kube_apiserver, "settings") == "a,b", what="the annotation")

    updates = kube_apiserver.requests(verb="update", resource="configmaps", name="settings")
    assert updates.statuses() == [409, 409, 200]  # retried exactly as often as conflicts were injected
    assert updates[0].response_object()["reason"] == "Conflict"
    # each try read the configmap first
    reads = kube_apiserver.requests(verb="get", resource="configmaps", name="settings")
    assert len(reads.where(user="admin")) >= 3


def test_a_dropped_watch_is_resumed_from_its_last_resource_version(kube_apiserver, start_controller):
    # the controller's first watch ends after its first event (a rule applies to watches started after it)
    with kube_apiserver.injected(verb="watch", resource="configmaps", watch="drop", after_events=1, count=1):
        start_controller()
        watches_before = len(kube_apiserver.requests(verb="watch", resource="configmaps"))
        first = kube_apiserver.request("POST", CONFIGMAPS, configmap("first", WATCHED, {"x": "1"})).json()
        wait_for(lambda: annotation(kube_apiserver, "first") == "x", what="the first annotation")
        wait_for(
            lambda: len(kube_apiserver.requests(verb="watch", resource="configmaps")) > watches_before,
            what="the controller to watch again",
        )
    kube_apiserver.request("POST", CONFIGMAPS, configmap("second", WATCHED, {"y": "1"}))
    wait_for(lambda: annotation(kube_apiserver, "second") == "y", what="the second annotation")

    watches = kube_apiserver.requests(verb="watch", resource="configmaps")
    resumed_from = [parse_qs(w.query).get("resourceVersion", [""])[0] for w in watches[watches_before:]]
    # the new watch starts where the dropped one stopped: the event of "first", so nothing was missed
    assert first["metadata"]["resourceVersion"] == resumed_from[0]
