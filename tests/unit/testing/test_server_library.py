"""kube_apiserver.testing.server without a server: command lines, PKI and Template copies, the client side."""

from __future__ import annotations

import os

import pytest

from kube_apiserver.testing import PKI, APIServer, Response, Template
from kube_apiserver.testing.server import _server_options


def test_command_line_errors_are_value_errors_with_pflags_message() -> None:
    with pytest.raises(ValueError, match='invalid argument "x" for "--secure-port" flag'):
        _server_options(["--secure-port", "x"])
    with pytest.raises(ValueError, match="unknown flag: --nope"):
        _server_options(["--nope"])
    with pytest.raises(ValueError, match="start no server"):
        _server_options(["--version"])
    with pytest.raises(ValueError, match="flags only"):
        _server_options(["positional"])
    assert _server_options(["--secure-port", "0"]).secure_serving.bind_port == 0


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be 'thread' or 'subprocess'"):
        APIServer(mode="docker")  # type: ignore[arg-type]


def test_a_pki_is_copied_into_a_data_dir_without_one(tmp_path) -> None:
    pki = PKI.create(str(tmp_path / "pki-source"))
    assert sorted(os.listdir(pki.directory)) == [
        "apiserver.crt",
        "apiserver.key",
        "ca.crt",
        "ca.key",
        "sa.key",
    ]
    target = tmp_path / "server"
    target.mkdir()
    pki.copy_to(str(target))
    with (
        open(target / "pki" / "ca.crt", "rb") as copied,
        open(os.path.join(pki.directory, "ca.crt"), "rb") as source,
    ):
        assert copied.read() == source.read()
    (target / "pki" / "ca.crt").write_bytes(b"the server's own")
    pki.copy_to(str(target))  # a data dir with its own credentials keeps them
    assert (target / "pki" / "ca.crt").read_bytes() == b"the server's own"


def test_a_template_seeds_only_an_empty_data_dir(tmp_path) -> None:
    source = tmp_path / "template"
    source.mkdir()
    (source / "state.db").write_bytes(b"bootstrapped")
    template = Template(str(source))
    fresh = tmp_path / "fresh"
    template.copy_to(str(fresh))
    assert (fresh / "state.db").read_bytes() == b"bootstrapped"
    used = tmp_path / "used"
    used.mkdir()
    (used / "state.db").write_bytes(b"a test's data")
    template.copy_to(str(used))
    assert (used / "state.db").read_bytes() == b"a test's data"


def test_response_json() -> None:
    assert Response(200, {}, b'{"kind": "Status"}').json() == {"kind": "Status"}


def test_stop_before_start_is_harmless() -> None:
    APIServer().stop()
