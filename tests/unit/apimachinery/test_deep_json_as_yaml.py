"""A YAML body that is JSON nested thousands of levels deep (a deep custom resource applied with kubectl, which
sends JSON) is read as JSON: libyaml's time grows with the square of the depth (seconds, on the event loop). The
result is what YAML reads; what YAML would read otherwise, or refuse, still goes through YAML."""

from __future__ import annotations

import pytest
import yaml

from kube_apiserver.apimachinery import errors, serializer

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def nested(depth: int, leaf: bytes = b'"x"') -> bytes:
    return b'{"a":' * depth + b'{"leaf":' + leaf + b"}" + b"}" * depth


@pytest.fixture
def no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("read with YAML")

    monkeypatch.setattr(serializer.yaml, "load", refuse)
    monkeypatch.setattr(serializer.yamllimits, "check", refuse)


def test_deep_json_is_read_without_yaml(no_yaml: None) -> None:
    body = b'{"kind": "Deep", "n": [1, -2, 3.5, true, null, "\\u00e9\\/"], "spec": ' + nested(2000) + b"}"
    value = serializer.decode_yaml(body)
    assert value["n"] == [1, -2, 3.5, True, None, "\u00e9/"]
    spec = value["spec"]
    for _ in range(2000):
        spec = spec["a"]
    assert spec == {"leaf": "x"}


def test_deep_json_reads_as_yaml_reads_it() -> None:
    body = nested(600, b'[12345678901234567890, 0.25, "line\\nbreak", {"k": false}]')
    assert serializer.decode_yaml(body) == yaml.load(body, Loader=LOADER)  # noqa: S506 - the safe loader


@pytest.mark.parametrize("leaf", [b"1e3", b"1.5E3", b"NaN", b'"\\ud83d\\ude00"', b'"\x7f"'])
def test_what_yaml_reads_otherwise_stays_yaml(leaf: bytes) -> None:
    body = nested(600, leaf)
    try:
        expected = yaml.load(body, Loader=LOADER)  # noqa: S506 - the safe loader
    except yaml.YAMLError:
        with pytest.raises(errors.StatusError):
            serializer.decode_yaml(body)
        return
    assert serializer.decode_yaml(body) == expected


def test_shallow_json_stays_yaml() -> None:
    assert serializer.decode_yaml(b'{"a": 1e3}') == {"a": "1e3"}  # YAML 1.1: no dot, a string


def yaml_error(body: bytes) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as err:
        serializer.decode_yaml(body)
    return err.value


@pytest.mark.parametrize("newline", [b"", b"\n"])
def test_json_deeper_than_yaml_accepts_is_refused_as_yaml_refuses_it(monkeypatch: pytest.MonkeyPatch,
                                                                     newline: bytes) -> None:
    body = b'{"s": "[[[{{{", "a":' + newline + (b'{"a":' + newline) * 10_000 + b"1" + b"}" * 10_001
    with monkeypatch.context() as yaml_only:
        yaml_only.setattr(serializer, "JSON_FAST_PATH_DEPTH", 1_000_000)
        by_yaml = yaml_error(body)
    monkeypatch.setattr(serializer.yaml, "load", None)  # not reached
    monkeypatch.setattr(serializer.yamllimits, "check", None)
    by_json = yaml_error(body)
    assert (by_json.status(), type(by_json.__cause__)) == (by_yaml.status(), type(by_yaml.__cause__))
    assert "exceeded max depth of 10000" in str(by_json)
