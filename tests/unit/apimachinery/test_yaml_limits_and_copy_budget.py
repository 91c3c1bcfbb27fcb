"""Bounded work from small requests (issue 9, item 3): yaml.v2's depth and alias bounds, json-patch's copy
budget."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import orjson
import pytest

from kube_apiserver.apimachinery import patch, serializer, yamllimits
from kube_apiserver.apimachinery.errors import StatusError

# The 439-byte "billion laughs" shape: each level repeats the previous one nine times.
BOMB = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: bomb
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_yaml_alias_bomb_is_a_400_before_it_is_built():
    with pytest.raises(StatusError) as err:
        serializer.decode_yaml(BOMB)
    assert (err.value.code, err.value.message) == (
        400,
        "error converting YAML to JSON: yaml: document contains excessive aliasing",
    )


def test_yaml_aliases_within_go_ratio_decode():
    # 99% of a small document may come from aliases (yaml.v2's allowedAliasRatio): a few levels pass.
    doc = b"a: &a [1, 2, 3]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b, *b]\nd: '*'\ne: x&y\n"
    assert serializer.decode_yaml(doc)["c"] == [[[1, 2, 3]] * 3] * 4


def test_yaml_anchor_containing_itself():
    with pytest.raises(yamllimits.YAMLLimitError, match="anchor 'a' value contains itself"):
        yamllimits.check(b"a: &a [1, *a]\n")
    # An alias names the latest node of its anchor: here the inner one, which has ended.
    yamllimits.check(b"a: &a [&a [1], *a]\n")


def test_yaml_alias_count_follows_go_decode_count():
    """decoder.unmarshal's counts: the document, each node, each key and each alias node is a step; the
    steps of an alias's expansion are alias steps. It fails once over 100 alias steps are more than 99% of
    over 1,000 steps. Here: 2,317 steps before y's items (1,000 of them aliased inside z), then 1 + 1,101
    per item (1,101 aliased): 129 items stay at 98.999%, the 130th goes over."""
    plain = "".join(f"k{i}: v\n" for i in range(600))  # 1,200 steps
    x = "x: &x [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"  # 11 steps
    z = "z: &z [" + ", ".join(["*x"] * 100) + "]\n"  # 1 + 1 + 100 * (1 + 10) steps, 1,000 aliased

    def document(items: int) -> bytes:
        return (plain + x + z + "y: [" + ", ".join(["*z"] * items) + "]\n").encode()

    yamllimits.check(document(129))
    with pytest.raises(yamllimits.YAMLLimitError, match="excessive aliasing"):
        yamllimits.check(document(130))


def test_yaml_deeper_than_10000_levels_is_a_400():
    """yaml.v2's max_flow_level and max_indents."""
    assert serializer.decode_yaml(b"- " * 9999 + b"x\n") is not None
    for body in (b"a: " + b"[" * 10001 + b"]" * 10001, b"- " * 10001 + b"x\n"):
        with pytest.raises(StatusError) as err:
            serializer.decode_yaml(body)
        assert (err.value.code, err.value.message) == (
            400,
            "error converting YAML to JSON: yaml: exceeded max depth of 10000",
        )


def test_yaml_nesting_that_crashed_the_composer_is_refused():
    """PyYAML's C composer recursed once per level: 200,000 "[" took the process down (run apart here)."""
    script = textwrap.dedent("""
        from kube_apiserver.apimachinery import serializer
        from kube_apiserver.apimachinery.errors import StatusError
        try:
            serializer.decode_yaml(b"a: " + b"[" * 200_000)
        except StatusError as err:
            print(err.code, err.message)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (
        0,
        "400 error converting YAML to JSON: yaml: exceeded max depth of 10000",
    )


def test_json_patch_copy_budget_is_3mib():
    """json-patch's AccumulatedCopySizeLimit as kube-apiserver sets it: each copy of the whole document
    doubles it, and the patch stops at 3 MiB of copies instead of growing for ever."""
    doc = {"a": "x" * 1000}
    ops = [{"op": "copy", "from": "", "path": f"/c{i}"} for i in range(13)]  # 1 KB doubled 13 times: 8 MB
    started = time.perf_counter()
    with pytest.raises(StatusError) as err:
        patch.json_patch(doc, ops)
    print(f"refused in {time.perf_counter() - started:.3f}s")  # measured, not asserted
    assert err.value.code == 422
    assert err.value.message.startswith(
        "Unable to complete the copy, the accumulated size increase of copy is "
    )
    assert err.value.message.endswith(", exceeding the limit 3145728")


def test_json_patch_copies_within_budget():
    doc = {"a": {"b": [1, 2]}}
    out = patch.json_patch(
        doc, [{"op": "copy", "from": "/a", "path": "/c"}, {"op": "add", "path": "/c/b/-", "value": 3}]
    )
    assert out == {"a": {"b": [1, 2]}, "c": {"b": [1, 2, 3]}}  # a copy, not a shared reference
    exactly = {"v": "x" * (patch.MAX_COPY_BYTES - 2)}  # its JSON is the budget exactly
    assert len(orjson.dumps(exactly["v"])) == patch.MAX_COPY_BYTES
    patch.json_patch(exactly, [{"op": "copy", "from": "/v", "path": "/w"}])
