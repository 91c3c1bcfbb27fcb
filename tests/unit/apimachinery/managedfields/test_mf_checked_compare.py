"""compare(checked=True) finds what validate(allow_duplicates=True, strict=False) finds on either side, on its
own walk: an update's managedFields are recorded only for objects SMD can type, as upstream's."""

from __future__ import annotations

import copy

import pytest
from mf_support import deployment, schema_for

from kube_apiserver.apimachinery.managedfields.compare import compare
from kube_apiserver.apimachinery.managedfields.schematype import of_root
from kube_apiserver.apimachinery.managedfields.validate import validate

POD = schema_for("", "v1", "Pod")
DEPLOYMENT = schema_for("apps", "v1", "Deployment")


def pod(**spec):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}
    body["spec"].update(spec)
    return body


def with_change(obj, change):
    out = copy.deepcopy(obj)
    change(out)
    return out


VALID = [pod(), pod(nodeSelector={"x": "y"}), pod(tolerations=[{"key": "k"}, {"key": "k"}])]
INVALID = [
    with_change(pod(), lambda o: o["metadata"].update(labels="not-a-map")),
    with_change(pod(), lambda o: o["spec"].update(containers={"name": "c"})),  # a map where a list goes
    with_change(pod(), lambda o: o["spec"]["containers"].append({"image": "no-name"})),  # no list-map key
    with_change(pod(), lambda o: o["spec"].update(nodeSelector=["atomic", "map", "as", "list"])),
    # Inside an atomic map (a NodeSelector) the walk does not go: still checked.
    with_change(pod(), lambda o: o["spec"].update(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": "x"}]}}})),
    # Two items with one key (kept: allow_duplicates), one of which is mistyped below.
    with_change(pod(), lambda o: o["spec"]["containers"].extend(
        [{"name": "d", "image": "i"}, {"name": "d", "image": "i", "env": "not-a-list"}])),
]


@pytest.mark.parametrize("live", VALID + INVALID)
@pytest.mark.parametrize("new", VALID + INVALID)
def test_checked_compare_agrees_with_validate_on_both_sides(live, new):
    expected = bool(validate(live, POD, allow_duplicates=True, strict=False)
                    or validate(new, POD, allow_duplicates=True, strict=False))
    assert compare(live, new, POD, checked=True).invalid is expected


def test_the_comparison_itself_is_unchanged_by_the_check():
    live, new = deployment(), deployment(replicas=3, paused=True)
    plain, checked = compare(live, new, DEPLOYMENT), compare(live, new, DEPLOYMENT, checked=True)
    assert (plain.added, plain.modified, plain.removed) == (checked.added, checked.modified, checked.removed)
    assert not checked.invalid and not plain.invalid


def test_deduced_positions_take_any_shape():
    root = of_root(None)
    assert not compare({"a": {"b": 1}}, {"a": [1, 2]}, root, checked=True).invalid


@pytest.mark.parametrize("live", [{}] + VALID + INVALID)
@pytest.mark.parametrize("new", [{}] + VALID + INVALID)
def test_what_one_side_adds_the_other_side_removes(live, new):
    # Added subtrees take a one-sided walk; removed ones the two-sided walk: both must find the same fields
    # and the same verdict, whichever side holds the subtree.
    forward, backward = compare(live, new, POD, checked=True), compare(new, live, POD, checked=True)
    assert forward.added == backward.removed
    assert forward.removed == backward.added
    assert forward.modified == backward.modified
    assert forward.invalid is backward.invalid
