"""pflag-style flag values bound to attributes of options dataclasses.

Each value knows its pflag type name (shown in --help), how to parse a command-line string (raising
ValueError with Go's message) and how to render itself the way Go's Value.String() does.
"""

from __future__ import annotations

import csv
import ipaddress
from typing import Any

from kube_apiserver.apimachinery import goduration, gostrconv
from kube_apiserver.cli.portrange import PortRange


class Value:
    """A pflag.Value writing to `target.attr`."""

    type_name = ""
    no_opt_default = ""  # pflag NoOptDefVal: the value used for a bare `--flag`
    zero_defaults: tuple[str, ...] = ("", "0", "false", "<nil>")

    def __init__(self, target: object, attr: str) -> None:
        self.target = target
        self.attr = attr
        self.set_once = False

    def get(self) -> Any:
        return getattr(self.target, self.attr)

    def set(self, raw: str) -> None:
        setattr(self.target, self.attr, self.convert(raw))
        self.set_once = True

    def convert(self, raw: str) -> Any:
        raise NotImplementedError

    def render(self, value: Any) -> str:
        return str(value)

    def string(self) -> str:
        return self.render(self.get())

    def is_zero_default(self, default: str) -> bool:
        """pflag's defaultIsZeroValue: whether --help omits "(default ...)"."""
        return default in self.zero_defaults


class BoolValue(Value):
    type_name = "bool"
    no_opt_default = "true"
    zero_defaults = ("false",)

    def convert(self, raw: str) -> bool:
        return gostrconv.parse_bool(raw)

    def render(self, value: Any) -> str:
        return "true" if value else "false"


class IntValue(Value):
    type_name = "int"
    zero_defaults = ("0",)

    def convert(self, raw: str) -> int:
        return gostrconv.parse_int(raw)


class FloatValue(Value):
    type_name = "float64"
    zero_defaults = ("0",)

    def convert(self, raw: str) -> float:
        return gostrconv.parse_float(raw)

    def render(self, value: Any) -> str:
        return gostrconv.format_float(float(value))


class StringValue(Value):
    type_name = "string"
    zero_defaults = ("",)

    def convert(self, raw: str) -> str:
        return raw


class DurationValue(Value):
    """Go time.Duration; stored as float seconds."""

    type_name = "duration"
    zero_defaults = ("0", "0s")

    def convert(self, raw: str) -> float:
        return goduration.parse_duration(raw)

    def render(self, value: Any) -> str:
        return goduration.format_duration(float(value))


class IPValue(Value):
    """net.IP; stored as the normalized address string, or None."""

    type_name = "ip"
    zero_defaults = ("<nil>",)

    def set(self, raw: str) -> None:
        if raw != "":  # pflag leaves the value untouched for an empty string
            super().set(raw)

    def convert(self, raw: str) -> str:
        try:
            return str(ipaddress.ip_address(raw.strip()))
        except ValueError:
            raise ValueError(f"failed to parse IP: {gostrconv.quote(raw)}") from None

    def render(self, value: Any) -> str:
        return "<nil>" if value is None else str(value)


class StringSliceValue(Value):
    """pflag stringSlice: comma separated (CSV quoting allowed); repeated flags append."""

    type_name = "stringSlice"
    zero_defaults = ("[]",)

    def convert(self, raw: str) -> list[str]:
        items = next(csv.reader([raw]), []) if raw else []
        return [*self.get(), *items] if self.set_once else items

    def render(self, value: Any) -> str:
        return "[" + ",".join(value) + "]"


class StringArrayValue(Value):
    """pflag stringArray: each flag is one value (no comma splitting); repeated flags append, the
    first replacing the default."""

    type_name = "stringArray"
    zero_defaults = ("[]",)

    def convert(self, raw: str) -> list[str]:
        return [*self.get(), raw] if self.set_once else [raw]

    def render(self, value: Any) -> str:
        return "[" + ",".join(value) + "]"


class MapStringBoolValue(Value):
    """component-base MapStringBool: "k1=true,k2=false"; repeated flags merge."""

    type_name = "mapStringBool"

    def convert(self, raw: str) -> dict[str, bool]:
        result: dict[str, bool] = dict(self.get()) if self.set_once else {}
        for item in (part.strip() for part in raw.split(",")):
            if not item:
                continue
            key, sep, text = item.partition("=")
            if not sep:
                raise ValueError("malformed pair, expect string=bool")
            result[key.strip()] = _pair_bool(key.strip(), text.strip())
        return result

    def render(self, value: Any) -> str:
        return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(value.items()))


def _pair_bool(key: str, text: str) -> bool:
    try:
        return gostrconv.parse_bool(text)
    except ValueError as err:
        raise ValueError(f"invalid value of {key}: {text}, err: {err}") from None


class ConfigurationMapValue(Value):
    """component-base ConfigurationMap ("key=value" pairs, bare "key" means ""); repeated flags merge."""

    type_name = "mapStringString"

    def convert(self, raw: str) -> dict[str, str]:
        result: dict[str, str] = dict(self.get())
        for item in raw.split(","):
            if item:
                key, _, text = item.partition("=")
                result[key.strip()] = text.strip()
        return result

    def render(self, value: Any) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))


class PortRangeValue(Value):
    type_name = "portRange"

    def convert(self, raw: str) -> PortRange:
        return PortRange.parse(raw)


class LevelValue(Value):
    """klog verbosity level (-v)."""

    type_name = "Level"
    zero_defaults = ("0",)

    def convert(self, raw: str) -> int:
        return gostrconv.parse_uint(raw, 32)


class VersionValue(Value):
    """component-base verflag: --version, --version=raw, --version=false."""

    type_name = "version"
    no_opt_default = "true"
    zero_defaults = ("false",)

    def convert(self, raw: str) -> str:
        if raw == "raw":
            return raw
        if raw.startswith("v"):
            raise ValueError("setting the reported version (--version=vX.Y.Z) is not supported")
        return "true" if gostrconv.parse_bool(raw) else "false"


class NamedCertKeyArrayValue(Value):
    """cliflag.NamedCertKeyArray (--tls-sni-cert-key): "cert,key" or "cert,key:name1,name2", repeatable."""

    type_name = "namedCertKey"
    zero_defaults = ("[]",)

    def convert(self, raw: str) -> list[tuple[str, str, tuple[str, ...]]]:
        pair, sep, names = raw.partition(":")
        patterns: tuple[str, ...] = ()
        if sep:
            if not names.strip():
                raise ValueError("empty names list is not allowed")
            patterns = tuple(name.strip() for name in names.strip().split(","))
        files = pair.strip().split(",")
        if len(files) != 2:
            raise ValueError("expected comma separated certificate and key file paths")
        entry = (files[0].strip(), files[1].strip(), patterns)
        return [*self.get(), entry] if self.set_once else [entry]

    def render(self, value: Any) -> str:
        return "[" + ";".join(f"{c},{k}" + (":" + ",".join(n) if n else "") for c, k, n in value) + "]"
