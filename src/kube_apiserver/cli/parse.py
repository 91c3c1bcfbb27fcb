"""pflag's command-line parsing: `--flag=value`, `--flag value`, bare boolean `--flag`, `-v3`, `-v=3`,
`-v 3`, `--` to end flags, interspersed positional arguments, and pflag's error messages."""

from __future__ import annotations

from kube_apiserver.apimachinery.gostrconv import quote as go_quote
from kube_apiserver.cli.flagset import Flag, NamedFlagSets


class FlagError(Exception):
    """A command-line parse error (cobra then prints usage and `Error: <message>`)."""


def parse_args(flags: NamedFlagSets, argv: list[str]) -> list[str]:
    """Applies `argv` to the flags' targets; returns the positional arguments."""
    positional: list[str] = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if len(arg) < 2 or not arg.startswith("-"):
            positional.append(arg)
        elif arg == "--":
            positional.extend(args)
            break
        elif arg.startswith("--"):
            args = _parse_long(flags, arg, args)
        else:
            args = _parse_short(flags, arg[1:], args)
    return positional


def _set(flag: Flag, value: str) -> None:
    try:
        flag.value.set(value)
    except ValueError as err:
        raise FlagError(
            f"invalid argument {go_quote(value)} for {go_quote(flag.display_name)} flag: {err}"
        ) from None
    flag.changed = True


def _parse_long(flags: NamedFlagSets, arg: str, args: list[str]) -> list[str]:
    body = arg[2:]
    if body.startswith(("-", "=")):
        raise FlagError(f"bad flag syntax: {arg}")
    name, has_value, value = body.partition("=")
    flag = flags.lookup(name)
    if flag is None:
        raise FlagError(f"unknown flag: --{name}")
    if not has_value and flag.value.no_opt_default:
        value = flag.value.no_opt_default
    elif not has_value and args:
        value, args = args[0], args[1:]
    elif not has_value:
        raise FlagError(f"flag needs an argument: {arg}")
    _set(flag, value)
    return args


def _parse_short(flags: NamedFlagSets, shorthands: str, args: list[str]) -> list[str]:
    while shorthands:
        shorthands, args = _parse_single_short(flags, shorthands, args)
    return args


def _parse_single_short(flags: NamedFlagSets, shorthands: str, args: list[str]) -> tuple[str, list[str]]:
    char, rest = shorthands[0], shorthands[1:]
    flag = flags.lookup_shorthand(char)
    if flag is None:
        raise FlagError(f"unknown shorthand flag: '{char}' in -{shorthands}")
    if rest.startswith("=") and len(rest) > 1:
        value, rest = rest[1:], ""
    elif flag.value.no_opt_default:
        value = flag.value.no_opt_default
    elif rest:
        value, rest = rest, ""
    elif args:
        value, args = args[0], args[1:]
    else:
        raise FlagError(f"flag needs an argument: '{char}' in -{shorthands}")
    _set(flag, value)
    return rest, args
