"""Flags grouped in named sections, like pflag.FlagSet and component-base's cliflag.NamedFlagSets."""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver.cli import values


def normalize_name(name: str) -> str:
    """component-base WordSepNormalizeFunc: `--secure_port` is `--secure-port`."""
    return name.replace("_", "-")


@dataclass
class Flag:
    name: str
    value: values.Value
    usage: str
    shorthand: str = ""
    default: str = ""  # pflag DefValue: the value's text when the flag was registered
    changed: bool = False

    @property
    def display_name(self) -> str:
        """How pflag names the flag in "invalid argument" errors."""
        return f"-{self.shorthand}, --{self.name}" if self.shorthand else f"--{self.name}"


class FlagSet:
    """One named section of flags (e.g. "secure serving")."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.flags: dict[str, Flag] = {}

    def var(self, value: values.Value, name: str, usage: str, shorthand: str = "") -> Flag:
        flag = Flag(name=name, value=value, usage=usage, shorthand=shorthand, default=value.string())
        self.flags[normalize_name(name)] = flag
        return flag

    def bool_var(self, target: object, attr: str, name: str, usage: str, shorthand: str = "") -> Flag:
        return self.var(values.BoolValue(target, attr), name, usage, shorthand)

    def int_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.IntValue(target, attr), name, usage)

    def float_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.FloatValue(target, attr), name, usage)

    def string_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.StringValue(target, attr), name, usage)

    def duration_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.DurationValue(target, attr), name, usage)

    def ip_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.IPValue(target, attr), name, usage)

    def string_slice_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.StringSliceValue(target, attr), name, usage)

    def string_array_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.StringArrayValue(target, attr), name, usage)

    def named_cert_key_var(self, target: object, attr: str, name: str, usage: str) -> Flag:
        return self.var(values.NamedCertKeyArrayValue(target, attr), name, usage)

    def sorted_flags(self) -> list[Flag]:
        return [self.flags[key] for key in sorted(self.flags)]


@dataclass
class NamedFlagSets:
    """Sections in registration order; --help prints them in this order."""

    order: list[str] = field(default_factory=list)
    sets: dict[str, FlagSet] = field(default_factory=dict)

    def flag_set(self, name: str) -> FlagSet:
        if name not in self.sets:
            self.order.append(name)
            self.sets[name] = FlagSet(name)
        return self.sets[name]

    def all_flags(self) -> list[Flag]:
        return [flag for name in self.order for flag in self.sets[name].flags.values()]

    def lookup(self, name: str) -> Flag | None:
        key = normalize_name(name)
        return next((fs.flags[key] for fs in self.sets.values() if key in fs.flags), None)

    def lookup_shorthand(self, char: str) -> Flag | None:
        return next((f for f in self.all_flags() if f.shorthand == char), None)
