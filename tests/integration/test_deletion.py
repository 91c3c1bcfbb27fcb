"""Deletion: finalizers, propagation policies, preconditions, dry run."""

from __future__ import annotations

CM = "/api/v1/namespaces/default/configmaps"


def cm(name: str, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}


def test_finalizers_hold_the_object_until_the_last_is_removed(server):
    server.request("POST", CM, cm("fin", finalizers=["example.com/a", "example.com/b"]))
    first = server.request("DELETE", f"{CM}/fin")
    assert first.status == 200
    meta = first.json()["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    assert server.request("GET", f"{CM}/fin").status == 200
    again = server.request("DELETE", f"{CM}/fin")  # a second delete changes nothing
    assert again.json()["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    patch = {"metadata": {"finalizers": ["example.com/b"]}}
    assert server.request("PATCH", f"{CM}/fin", patch, {"Content-Type": "application/merge-patch+json"}).status == 200
    assert server.request("GET", f"{CM}/fin").status == 200
    done = server.request("PATCH", f"{CM}/fin", {"metadata": {"finalizers": None}},
                          {"Content-Type": "application/merge-patch+json"})
    assert done.status == 200
    assert server.request("GET", f"{CM}/fin").status == 404


def test_propagation_policies_set_their_finalizers(server):
    server.request("POST", CM, cm("orphaned"))
    orphan = server.request("DELETE", f"{CM}/orphaned", {"propagationPolicy": "Orphan"})
    assert orphan.json()["metadata"]["finalizers"] == ["orphan"]
    server.request("POST", CM, cm("fg"))
    fg = server.request("DELETE", f"{CM}/fg?propagationPolicy=Foreground")
    assert fg.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    server.request("POST", CM, cm("bg"))
    bg = server.request("DELETE", f"{CM}/bg", {"propagationPolicy": "Background"})
    assert bg.json()["status"] == "Success"
    bad = server.request("DELETE", f"{CM}/fg", {"propagationPolicy": "Sideways"})
    assert bad.status == 422 and "Unsupported value: \"Sideways\"" in bad.json()["message"]


def test_preconditions(server):
    created = server.request("POST", CM, cm("pre")).json()
    wrong = server.request("DELETE", f"{CM}/pre", {"preconditions": {"uid": "not-the-uid"}})
    assert wrong.status == 409
    assert wrong.json()["message"] == (f'Operation cannot be fulfilled on configmaps "pre": Precondition failed: '
                                       f'UID in precondition: not-the-uid, UID in object meta: '
                                       f'{created["metadata"]["uid"]}')
    stale = server.request("DELETE", f"{CM}/pre", {"preconditions": {"resourceVersion": "1"}})
    assert stale.status == 409
    ok = server.request("DELETE", f"{CM}/pre", {"preconditions": {"uid": created["metadata"]["uid"],
                                                                   "resourceVersion": created["metadata"]["resourceVersion"]}})
    assert ok.status == 200 and ok.json()["details"]["uid"] == created["metadata"]["uid"]


def test_dry_run_writes_nothing(server):
    created = server.request("POST", f"{CM}?dryRun=All", cm("dry"))
    assert created.status == 201 and created.json()["metadata"]["uid"]
    assert server.request("GET", f"{CM}/dry").status == 404
    server.request("POST", CM, cm("dry"))
    assert server.request("DELETE", f"{CM}/dry?dryRun=All").status == 200
    assert server.request("GET", f"{CM}/dry").status == 200
    bad = server.request("POST", f"{CM}?dryRun=Some", cm("dry2"))
    assert bad.status == 422
    assert bad.json()["message"] == ('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Some": '
                                     'supported values: "All"')


def test_pretty_output(server):
    server.request("POST", CM, cm("pretty"))
    body = server.request("GET", f"{CM}/pretty?pretty=true").body.decode()
    assert body.startswith('{\n  "') and body.endswith("\n}")  # json.MarshalIndent: no newline after it
