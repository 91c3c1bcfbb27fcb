"""--help rendering, byte-for-byte like pflag's FlagUsagesWrapped and component-base's PrintSections."""

from __future__ import annotations

import re

from kube_apiserver.cli.flagset import Flag, FlagSet, NamedFlagSets
from kube_apiserver.cli.values import IntValue

# pflag's UnquoteUsage renames some types in the help text.
_TYPE_DISPLAY = {
    "bool": "",
    "float64": "float",
    "int64": "int",
    "uint64": "uint",
    "stringSlice": "strings",
    "intSlice": "ints",
    "uintSlice": "uints",
    "boolSlice": "bools",
}
_BACKQUOTED = re.compile(r"`([^`]*)`")


def unquote_usage(flag: Flag) -> tuple[str, str]:
    """pflag.UnquoteUsage: (varname, usage); a `backquoted` word in the usage names the argument."""
    match = _BACKQUOTED.search(flag.usage)
    if match:
        usage = flag.usage[: match.start()] + match.group(1) + flag.usage[match.end() :]
        return match.group(1), usage
    type_name = flag.value.type_name
    return _TYPE_DISPLAY.get(type_name, type_name), flag.usage


def _flag_head(flag: Flag) -> str:
    head = f"  -{flag.shorthand}, --{flag.name}" if flag.shorthand else f"      --{flag.name}"
    varname, _ = unquote_usage(flag)
    if varname:
        head += " " + varname
    no_opt = flag.value.no_opt_default
    if no_opt and not (flag.value.type_name == "bool" and no_opt == "true"):
        head += f'[="{no_opt}"]' if flag.value.type_name == "string" else f"[={no_opt}]"
    return head


def _flag_text(flag: Flag) -> str:
    _, text = unquote_usage(flag)
    if not flag.value.is_zero_default(flag.default):
        shown = f'"{flag.default}"' if flag.value.type_name == "string" else flag.default
        text += f" (default {shown})"
    return text


def _wrap_n(width: int, slop: int, s: str) -> tuple[str, str]:
    if width + slop > len(s):
        return s, ""
    space = max(s.rfind(c, 0, width) for c in " \t\n")
    if space <= 0:
        return s, ""
    newline = s.rfind("\n", 0, width)
    if 0 < newline < space:
        return s[:newline], s[newline + 1 :]
    return s[:space], s[space + 1 :]


def wrap(indent: int, cols: int, s: str) -> str:
    """pflag's wrap: wraps `s` to `cols` columns, continuation lines indented by `indent`."""
    if cols == 0:
        return s.replace("\n", "\n" + " " * indent)
    width, result = cols - indent, ""
    if width < 24:
        indent, width = 16, cols - 16
        result = "\n" + " " * indent
    if width < 24:
        return s.replace("\n", result)
    width -= 5
    line, s = _wrap_n(width, 5, s)
    result += line.replace("\n", "\n" + " " * indent)
    while s:
        line, s = _wrap_n(width, 5, s)
        result += "\n" + " " * indent + line.replace("\n", "\n" + " " * indent)
    return result


def flag_usages_wrapped(flags: list[Flag], cols: int) -> str:
    """pflag FlagSet.FlagUsagesWrapped for flags already in display order."""
    heads = [_flag_head(flag) for flag in flags]
    maxlen = max((len(head) + 1 for head in heads), default=0)  # +1: pflag counts its \x00 marker
    lines = []
    for head, flag in zip(heads, flags, strict=True):
        spacing = " " * (maxlen - len(head))
        lines.append(f"{head} {spacing} {wrap(maxlen + 2, cols, _flag_text(flag))}\n")
    return "".join(lines)


def _section_title(name: str) -> str:
    return name[:1].upper() + name[1:]


def _print_section(fs: FlagSet, cols: int) -> str:
    flags = fs.sorted_flags()
    if cols <= 24:
        return f"\n{_section_title(fs.name)} flags:\n\n{flag_usages_wrapped(flags, cols)}"
    # component-base's trick: a dummy wide flag pushes the help text onto its own indented lines.
    zzz = "z" * (cols - 24)
    dummy = Flag(name=zzz, value=IntValue(object(), "unused"), usage=zzz, default="0")
    text = f"\n{_section_title(fs.name)} flags:\n\n{flag_usages_wrapped([*flags, dummy], cols)}"
    lines = text[: text.index(zzz)].split("\n")
    return "\n".join(lines[:-1]) + "\n"


def print_sections(named: NamedFlagSets, cols: int) -> str:
    """component-base cliflag.PrintSections: every non-empty section as `<Name> flags:`."""
    return "".join(_print_section(named.sets[n], cols) for n in named.order if named.sets[n].flags)
