"""The websocket handshake and frames of exec's channel protocols."""

from __future__ import annotations

from kube_apiserver.apimachinery import wsstream


def test_accept_key_is_rfc_6455s() -> None:
    # RFC 6455 section 1.3's example
    assert wsstream.accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_the_best_channel_protocol_offered_is_chosen() -> None:
    headers = {
        "upgrade": "websocket",
        "connection": "Upgrade",
        "sec-websocket-key": "k",
        "sec-websocket-protocol": "v4.channel.k8s.io, v5.channel.k8s.io",
    }
    assert wsstream.is_websocket_request(headers)
    assert wsstream.negotiate(headers) == "v5.channel.k8s.io"
    assert wsstream.negotiate({"sec-websocket-protocol": "base64.channel.k8s.io"}) is None
    assert not wsstream.is_websocket_request({"upgrade": "SPDY/3.1", "connection": "Upgrade"})


def test_frames_are_final_unmasked_and_sized() -> None:
    assert wsstream.channel_message(1, b"hi") == b"\x82\x03\x01hi"
    long = wsstream.channel_message(2, b"x" * 200)
    assert long[:4] == b"\x82\x7e\x00\xc9" and long[4] == 2
    assert wsstream.close_frame() == b"\x88\x02\x03\xe8"
