#!/usr/bin/env python3
"""Writes src/kube_apiserver/apimachinery/protobuf_messages.py, the protobuf descriptor table.

Two inputs:

- the wire format of every message (`v1.34-protobuf.json`, read from the upstream generated.proto files:
  field names, numbers, types, labels), default ../shared/api/v1.34-protobuf.json;
- the Go facts those .proto files do not carry, in hack/protobuf_go_facts.json: which fields are Go
  pointers (written and kept even when zero), which are embedded `json:",inline"` structs, which messages
  are Go named slices (`type ExtraValue []string`, JSON a bare list), which structs are API kinds
  (runtime.Object) and each package's API group. `--go-source GITDIR:COMMIT:MODULE` (repeatable) reads
  them again from the types.go files of k8s.io/api, k8s.io/apimachinery, ... at those commits.

Run from the repository root: `python3 hack/gen_protobuf.py [--go-source ...]`; commit what it writes."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "hack" / "protobuf_go_facts.json"
OUTPUT = ROOT / "src" / "kube_apiserver" / "apimachinery" / "protobuf_messages.py"
OMITEMPTY_OUTPUT = ROOT / "src" / "kube_apiserver" / "apimachinery" / "go_omitempty.py"
DEFAULT_PROTO = ROOT.parent / "shared" / "api" / "v1.34-protobuf.json"
DEFAULT_RESOURCES = ROOT.parent / "shared" / "api" / "v1.34-resources.json"
META = "k8s.io.apimachinery.pkg.apis.meta.v1"
# Packages served whatever the resources (the envelope, options, Status, watch events, aggregated discovery).
ALWAYS = (META, "k8s.io.apimachinery.pkg.runtime", "k8s.io.api.apidiscovery.v2")
# metav1.AddToGroupVersion registers these in every group version (a DeleteOptions of apps/v1 is
# meta's), and Status with the discovery documents unversioned, as v1.
IN_EVERY_GROUP_VERSION = (
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
    "WatchEvent",
)
UNVERSIONED = ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList")

REPEATED, POINTER, INLINE, PACKED, EMPTY_KEPT = 1, 2, 4, 8, 16

# ---- Go facts from types.go ----

STRUCT = re.compile(r"^type (\w+) struct \{\s*$")
NAMED_SLICE = re.compile(r"^type (\w+) \[\]\w+\s*$")
RUNTIME_OBJECT = "+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object"


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def _tag(tags: str, key: str) -> str | None:
    match = re.search(key + r':"([^"]*)"', tags)
    return match.group(1) if match else None


def _struct_fields(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """The Go facts of one struct's protobuf fields: number -> marks, "*" a pointer, "^" inline, "!" no
    omitempty (JSON writes it even when zero), "=name" the JSON name where the .proto's differs."""
    fields: dict[str, str] = {}
    index = start
    while index < len(lines) and lines[index].rstrip() != "}":
        line = lines[index].strip()
        index += 1
        if line.startswith("//") or "`" not in line:
            continue
        decl, tags = line.split("`", 1)
        proto = _tag(tags, "protobuf")
        if proto is None or proto == "-":
            continue
        tokens = decl.split()
        go_type = tokens[-1]
        json_name, *json_options = (_tag(tags, "json") or "").split(",")
        inline = "inline" in json_options
        flags = (
            ("*" if go_type.startswith("*") else "")
            + ("^" if inline else "")
            + ("!" if not inline and "omitempty" not in json_options else "")
        )
        proto_name = re.search(r"name=(\w+)", proto)
        if json_name and proto_name and proto_name.group(1) != json_name:
            flags += "=" + json_name
        fields[proto.split(",")[1]] = flags
    return fields, index


def _package_facts(source: str) -> dict[str, Any]:
    lines = source.splitlines()
    facts: dict[str, Any] = {"structs": {}, "kinds": [], "lists": []}
    comment: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("//"):
            comment.append(line)
            continue
        if not line.strip():
            continue  # markers stand apart from the doc comment, a blank line between
        struct = STRUCT.match(line)
        slice_type = NAMED_SLICE.match(line)
        if struct:
            facts["structs"][struct.group(1)], index = _struct_fields(lines, index)
            if any(RUNTIME_OBJECT in c for c in comment):
                facts["kinds"].append(struct.group(1))
        elif slice_type:
            facts["lists"].append(slice_type.group(1))
        comment = []
    return facts


def extract_go_facts(sources: list[str], packages: set[str]) -> dict[str, Any]:
    """GITDIR:COMMIT:MODULE triples (MODULE like k8s.io/api) -> facts per proto package."""
    out: dict[str, Any] = {}
    for source in sources:
        git_dir, commit, module = source.split(":")
        prefix = module.replace("-", "_").replace("/", ".")
        for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
            directory, _, name = path.rpartition("/")
            package = f"{prefix}.{directory.replace('/', '.')}"
            if (
                package not in packages
                or not name.endswith(".go")
                or name.endswith("_test.go")
                or name.startswith(("zz_generated", "generated"))
            ):
                continue
            text = _git(git_dir, "show", f"{commit}:{path}")
            entry = out.setdefault(package, {"group": None, "structs": {}, "kinds": [], "lists": []})
            group = re.search(r'^// \+groupName=(\S*)|^const GroupName = "([^"]*)"', text, re.M)
            if group and entry["group"] is None:
                entry["group"] = group.group(1) if group.group(1) is not None else group.group(2)
            facts = _package_facts(text)
            entry["structs"].update(facts["structs"])
            entry["kinds"] = sorted({*entry["kinds"], *facts["kinds"]})
            entry["lists"] = sorted({*entry["lists"], *facts["lists"]})
    for entry in out.values():
        # Only what differs from a plain field is kept: the facts file stays readable.
        entry["structs"] = {
            name: {n: f for n, f in sorted(fields.items(), key=lambda i: int(i[0])) if f}
            for name, fields in sorted(entry["structs"].items())
        }
        entry["structs"] = {name: fields for name, fields in entry["structs"].items() if fields}
    return dict(sorted(out.items()))


# ---- the table ----


def _qualify(package: str, ftype: str) -> str:
    if ftype.startswith("map<"):
        key, value = ftype[4:-1].split(",")
        return f"map<{key},{_qualify(package, value)}>"
    if ftype.startswith("."):
        return ftype[1:]
    if ftype[0].isupper():
        return f"{package}.{ftype}"
    return ftype


def _references(package: str, fields: list[list[Any]]) -> set[str]:
    refs = set()
    for spec in fields:
        ftype = _qualify(package, spec[2])
        if ftype.startswith("map<"):
            ftype = ftype[4:-1].split(",")[1]
        if "." in ftype:
            refs.add(ftype)
    return refs


def _served_packages(
    proto: dict[str, Any], facts: dict[str, Any], resources: list[dict[str, Any]]
) -> set[str]:
    served = {(r["group"], r["version"]) for r in resources}
    return {p for p, f in facts.items() if (f.get("group"), p.rsplit(".", 1)[1]) in served} | set(ALWAYS)


def _closure(proto: dict[str, Any], packages: set[str]) -> set[str]:
    """Every message of the packages, and every message those reference, however deep."""
    todo = [f"{p}.{m}" for p in packages for m in proto[p]]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        package, _, message = name.rpartition(".")
        todo.extend(_references(package, proto[package][message]))
    return seen


def _api_version(group: str | None, package: str) -> str:
    version = package.rsplit(".", 1)[1]
    return f"{group}/{version}" if group else version


def build_table(
    proto: dict[str, Any], facts: dict[str, Any], resources: list[dict[str, Any]]
) -> dict[str, Any]:
    messages: dict[str, list[tuple[int, str, str, int]]] = {}
    for name in sorted(_closure(proto, _served_packages(proto, facts, resources))):
        package, _, message = name.rpartition(".")
        go = facts.get(package, {}).get("structs", {}).get(message, {})
        fields = []
        for spec in proto[package][message]:
            json_name, number, ftype, label = spec[:4]
            marks, _, go_json_name = go.get(str(number), "").partition("=")
            json_name = go_json_name or json_name
            flags = (
                (REPEATED if label == "repeated" else 0)
                | (POINTER if "*" in marks else 0)
                | (INLINE if "^" in marks else 0)
                | (PACKED if "packed" in spec[4:] else 0)
                | (EMPTY_KEPT if "!" in marks else 0)
            )
            fields.append((number, json_name, _qualify(package, ftype), flags))
        messages[name] = fields
    kinds: dict[str, str] = {}
    lists = []
    for package, entry in facts.items():
        lists.extend(f"{package}.{m}" for m in entry["lists"] if f"{package}.{m}" in messages)
        if package not in _served_packages(proto, facts, resources) or entry["group"] is None:
            continue
        api_version = _api_version(entry["group"], package)
        for kind in entry["kinds"]:
            if f"{package}.{kind}" in messages:
                kinds[f"{api_version} {kind}"] = f"{package}.{kind}"
        for kind in IN_EVERY_GROUP_VERSION:
            kinds[f"{api_version} {kind}"] = f"{META}.{kind}"
    for kind in UNVERSIONED:
        kinds[f"v1 {kind}"] = f"{META}.{kind}"
    return {"messages": messages, "kinds": dict(sorted(kinds.items())), "lists": sorted(lists)}


def render(table: dict[str, Any], source: dict[str, Any]) -> str:
    out = [
        '"""Protobuf messages of the API: GENERATED by hack/gen_protobuf.py, do not edit.',
        "",
        "From the generated.proto files of",
        *(f"- {module} {info['tag']} ({info['commit']})," for module, info in sorted(source.items())),
        "and hack/protobuf_go_facts.json (Go pointers, inline structs, named slices, kinds). MESSAGES maps a",
        "message, by proto package, to its fields (number, JSON name, type, flags: 1 repeated, 2 Go pointer,",
        "4 inline struct, 8 packed, 16 no omitempty: JSON has it even when zero); KINDS maps",
        '"apiVersion kind" to the message of that kind."""',
        "",
        "# fmt: off",
        "MESSAGES: dict[str, tuple[tuple[int, str, str, int], ...]] = {",
    ]
    for name, fields in table["messages"].items():
        out.append(f"    {name!r}: (")
        out.extend(f"        {field!r}," for field in fields)
        out.append("    ),")
    out.append("}")
    out.append("")
    out.append("KINDS: dict[str, str] = {")
    out.extend(f"    {k!r}: {v!r}," for k, v in table["kinds"].items())
    out.append("}")
    out.append("")
    out.append("# Go named slices (type ExtraValue []string): their JSON is the bare list of `items`.")
    out.append("LISTS: frozenset[str] = frozenset({")
    out.extend(f"    {name!r}," for name in table["lists"])
    out.append("})")
    out.append("# fmt: on")
    return "\n".join(out) + "\n"


WIRE_SCALARS = frozenset({"int32", "int64", "bool", "string", "bytes", "double"})


def omitted_when_zero(fields: list[tuple[int, str, str, int]]) -> list[str]:
    """The JSON names of the scalar fields Go's encoding/json leaves out when zero: omitempty, not a
    pointer, not inline, not repeated. (An empty slice or map is left out too when written, but a decoded
    `[]` is a non-nil empty slice in memory, which validation messages show: those stay as sent.)"""
    return sorted(
        name
        for _, name, ftype, flags in fields
        if not flags & (POINTER | INLINE | EMPTY_KEPT | REPEATED) and ftype in WIRE_SCALARS
    )


def render_omitempty(table: dict[str, Any], source: dict[str, Any]) -> str:
    out = [
        '"""The fields Go leaves out of JSON when they hold their zero value: GENERATED by hack/gen_protobuf.py,',
        "do not edit.",
        "",
        "From the same sources as protobuf_messages.py (" + ", ".join(sorted(source)) + "):",
        "per message, the non-pointer omitempty scalar fields. A body decoded into a Go struct cannot tell them",
        "from absent when they are false, 0 or \"\" (a Service's `externalName: \"\"`), so they are never stored,",
        'returned or owned in managedFields. Small on purpose: the typed decoding of every request reads it."""',
        "",
        "# fmt: off",
        "OMIT_WHEN_ZERO: dict[str, frozenset[str]] = {",
    ]
    for name, fields in table["messages"].items():
        names = omitted_when_zero(fields)
        if names:
            out.append(f"    {name!r}: frozenset({{{', '.join(map(repr, names))}}}),")
    out.append("}")
    out.append("# fmt: on")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--proto", type=Path, default=DEFAULT_PROTO)
    parser.add_argument("--resources", type=Path, default=DEFAULT_RESOURCES)
    parser.add_argument(
        "--go-source",
        action="append",
        default=[],
        help="GITDIR:COMMIT:MODULE whose types.go files give the Go facts (rewrites the facts file)",
    )
    args = parser.parse_args()
    data = json.loads(args.proto.read_text())
    if args.go_source:
        facts = extract_go_facts(args.go_source, set(data["packages"]))
        FACTS.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    facts = json.loads(FACTS.read_text())
    table = build_table(data["packages"], facts, json.loads(args.resources.read_text()))
    OUTPUT.write_text(render(table, data["source"]))
    OMITEMPTY_OUTPUT.write_text(render_omitempty(table, data["source"]))
    print(f"{OUTPUT.relative_to(ROOT)}: {len(table['messages'])} messages, {len(table['kinds'])} kinds")


if __name__ == "__main__":
    main()
