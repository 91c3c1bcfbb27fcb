"""JSON as deep as Go's decoder takes it (10,000 levels), read and written without a RecursionError."""

from __future__ import annotations

import copy

import pytest

from kube_apiserver.apimachinery import deepjson, jsontypes, patch


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [1000, 5000, 10_000])
def test_documents_up_to_go_max_depth_round_trip(depth):
    value = deepjson.loads(nested(depth))
    assert deepjson.dumps(value) == nested(depth)
    assert copy.deepcopy(value) == value  # the walks a request makes fit the recursion limit


def test_deeper_is_gos_syntax_error():
    with pytest.raises(deepjson.TooDeep, match=r"^invalid character '\[' exceeded max depth$"):
        deepjson.loads(b"[" * 10_001 + b"]" * 10_001)
    brackets_in_strings = b'["' + b"[" * 20_000 + b'"]'
    assert deepjson.loads(b"[" * 2000 + brackets_in_strings + b"]" * 2000) is not None


def test_deep_merge_patch():
    doc = deepjson.loads(nested(9000))
    patched = patch.merge_patch({"x": doc}, {"x": deepjson.loads(nested(9000)), "y": 1})
    assert patched["y"] == 1 and patched["x"] == doc


@pytest.mark.parametrize(("text", "decoded"), [
    ("YWJj", b"abc"), ("YWJj\r\nZGVm", b"abcdef"), ("YW==", b"a"), ("YWJjZA=\n=", b"abcd"), ("", b""),
])
def test_base64_as_go_decodes_it(text, decoded):
    assert jsontypes.decode_base64(text) == decoded


@pytest.mark.parametrize(("text", "offset"), [
    ("!!!", 0), ("YWJ", 0), ("YQ=", 3), ("YW=j", 2), ("YQ==YQ==", 4), ("YWJjZA==x", 8), ("YQ==\r\nx", 6),
])
def test_base64_errors_at_gos_offset(text, offset):
    with pytest.raises(jsontypes.CorruptBase64, match=f"^illegal base64 data at input byte {offset}$"):
        jsontypes.decode_base64(text)


def test_integers_beyond_64_bits_are_written():
    assert deepjson.dumps({"a": 2**64}) == b'{"a":18446744073709551616}'  # YAML reads them; orjson writes none
