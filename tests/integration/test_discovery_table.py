"""Discovery against v1.34's table (../shared/api/v1.34-resources.json: resources, subresources, scope,
verbs; tests/data adds kinds, singular names, short names and categories). Every resource served must
match it exactly; the resources not served yet are listed, and none may be served that v1.34 lacks."""

from __future__ import annotations

import json
import pathlib

TABLE = json.loads((pathlib.Path(__file__).parent.parent / "data" / "discovery-v1.34.json").read_text())


def served(server) -> dict[tuple[str, str, str], dict]:
    out = {}
    groups = [("", "v1")]
    for group in server.request("GET", "/apis").json()["groups"]:
        groups += [(group["name"], v["version"]) for v in group["versions"]]
    for group, version in groups:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        for r in server.request("GET", path).json()["resources"]:
            out[(group, version, r["name"])] = r
    return out


def test_served_resources_match_v1_34(server):
    actual = served(server)
    expected = {(e["group"], e["version"], e["name"]): e for e in TABLE}
    assert set(actual) <= set(expected), f"served but not in v1.34: {sorted(set(actual) - set(expected))}"
    for key, resource in actual.items():
        want = expected[key]
        got = {"namespaced": resource["namespaced"], "verbs": sorted(resource["verbs"]), "kind": resource["kind"]}
        assert got == {"namespaced": want["namespaced"], "verbs": sorted(want["verbs"]), "kind": want["kind"]}, key
        if "/" not in key[2]:
            names = {"singularName": resource.get("singularName", ""),
                     "shortNames": resource.get("shortNames", []), "categories": resource.get("categories", [])}
            assert names == {k: want[k] for k in names}, key
    missing = sorted(f"{g or 'core'}/{v}/{n}" for g, v, n in set(expected) - set(actual))
    assert not missing, f"{len(actual)} of {len(expected)} v1.34 resources served; not yet: {', '.join(missing)}"
