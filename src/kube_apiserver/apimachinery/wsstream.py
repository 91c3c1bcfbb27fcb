"""The server side of the websocket channel protocols of exec and attach (k8s.io/apimachinery
pkg/util/httpstream/wsstream and the v5 remote command protocol): the handshake (RFC 6455's accept key,
the channel subprotocol both ends speak) and the frames a server sends. Each binary message starts with
its channel: 0 stdin, 1 stdout, 2 stderr, 3 the error channel (a metav1.Status ends the command), 4 resize.
Only what answers a command at once is here: nothing reads the client's frames."""

from __future__ import annotations

import base64
import hashlib
import struct

# RFC 6455's GUID, appended to the client's key to prove the server understood the handshake.
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# The binary channel protocols, best first (v5 adds the close channel 255 a client may send).
CHANNEL_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDOUT, STDERR, ERROR = 1, 2, 3
NORMAL_CLOSURE = 1000


def is_websocket_request(headers: dict[str, str]) -> bool:
    """A GET asking to upgrade to websocket (headers: lower-case names)."""
    upgrade = headers.get("upgrade", "").lower()
    connection = [token.strip().lower() for token in headers.get("connection", "").split(",")]
    return upgrade == "websocket" and "upgrade" in connection and bool(headers.get("sec-websocket-key"))


def negotiate(headers: dict[str, str]) -> str | None:
    """The best channel protocol the client offers (Sec-WebSocket-Protocol), or None."""
    offered = {p.strip() for p in headers.get("sec-websocket-protocol", "").split(",") if p.strip()}
    return next((p for p in CHANNEL_PROTOCOLS if p in offered), None)


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()  # noqa: S324 - RFC 6455


def handshake_headers(headers: dict[str, str], protocol: str) -> list[tuple[str, str]]:
    """The headers of the 101 Switching Protocols answer."""
    return [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-accept", accept_key(headers.get("sec-websocket-key", ""))),
        ("sec-websocket-protocol", protocol),
    ]


def _frame(opcode: int, payload: bytes) -> bytes:
    """One final, unmasked frame (servers do not mask)."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    return head + payload


def channel_message(channel: int, data: bytes) -> bytes:
    return _frame(0x2, bytes([channel]) + data)


def close_frame(code: int = NORMAL_CLOSURE) -> bytes:
    return _frame(0x8, struct.pack("!H", code))
