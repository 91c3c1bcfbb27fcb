"""Rewriting the links of a proxied HTML page (k8s.io/apimachinery/pkg/util/proxy transport.go rewriteHTML,
rewriteResponse): every start tag is written again as Go's html.Token.String writes it, with the URL
attributes of atomsToAttrs passed through the rewriter; all other bytes are kept as they came. gzip and
deflate bodies are decoded and encoded again; another encoding is left alone."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from html.parser import HTMLParser

URL_ATTRS: dict[str, frozenset[str]] = {
    tag: frozenset(attrs.split()) for tag, attrs in {
        "a": "href", "applet": "codebase", "area": "href", "audio": "src", "base": "href", "blockquote": "cite",
        "body": "background", "button": "formaction", "command": "icon", "del": "cite", "embed": "src",
        "form": "action", "frame": "longdesc src", "head": "profile", "html": "manifest",
        "iframe": "longdesc src", "img": "longdesc src usemap", "input": "src usemap formaction", "ins": "cite",
        "link": "href", "object": "classid codebase data usemap", "q": "cite", "script": "src",
        "source": "src", "video": "poster src"}.items()}
# html.escape of golang.org/x/net/html
_ESCAPES = str.maketrans({"&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "\r": "&#13;"})


def token_string(tag: str, attrs: list[tuple[str, str | None]], self_closing: bool) -> str:
    """html.Token.String of a start or self-closing tag."""
    text = tag + "".join(f' {key}="{(value or "").translate(_ESCAPES)}"' for key, value in attrs)
    return f"<{text}/>" if self_closing else f"<{text}>"


class _Rewriter(HTMLParser):
    def __init__(self, text: str, rewrite: Callable[[str], str]):
        super().__init__(convert_charrefs=False)
        self.rewrite = rewrite
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.replacements: list[tuple[int, int, str]] = []  # offset, raw length, new text

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], self_closing: bool) -> None:
        raw = self.get_starttag_text() or ""
        names = URL_ATTRS.get(tag, frozenset())
        attrs = [(k, self.rewrite(v) if k in names and v is not None else v) for k, v in attrs]
        line, column = self.getpos()
        self.replacements.append((self.line_starts[line - 1] + column, len(raw),
                                  token_string(tag, attrs, self_closing)))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, True)


def rewrite_html(body: bytes, rewrite: Callable[[str], str]) -> bytes:
    text = body.decode("utf-8", errors="surrogateescape")  # the content is taken as UTF-8, as Go does
    parser = _Rewriter(text, rewrite)
    parser.feed(text)
    parser.close()
    pieces, at = [], 0
    for offset, length, new in parser.replacements:
        pieces += [text[at:offset], new]
        at = offset + length
    pieces.append(text[at:])
    return "".join(pieces).encode("utf-8", errors="surrogateescape")


def rewrite_html_response(body: bytes, headers: list[tuple[str, str]], rewrite: Callable[[str], str]) -> bytes:
    """rewriteResponse: the body decoded per Content-Encoding, rewritten and encoded again."""
    if any(name.lower() == "location" for name, _ in headers):
        return body  # a redirect's Location is rewritten instead of its page
    encoding = next((v for k, v in headers if k.lower() == "content-encoding"), "")
    try:
        if encoding == "gzip":
            return gzip.compress(rewrite_html(gzip.decompress(body), rewrite))
        if encoding == "deflate":
            squeezer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
            raw = rewrite_html(zlib.decompress(body, -zlib.MAX_WBITS), rewrite)
            return squeezer.compress(raw) + squeezer.flush()
    except (OSError, EOFError, zlib.error):
        return body  # not what it says it is: passed on untouched
    return rewrite_html(body, rewrite) if encoding == "" else body
