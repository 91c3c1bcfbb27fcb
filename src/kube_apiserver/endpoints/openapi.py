"""OpenAPI v3 (/openapi/v3 and one document per group version), derived from the installed routes:
every path, operation, parameter and x-kubernetes-* extension follows from the resource definitions.
Component schemas of the built-in kinds come from the upstream schemas (issue #3)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..apimachinery.openapischema import NO_SCHEMAS, SchemaSource
from .http import Request, Response
from .installer import ResourceRoutes

Doc = dict[str, Any]

QUERY = {
    "dryRun": "When present, indicates that modifications should not be persisted. Valid values are: - All: "
              "all dry run stages will be processed",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making these changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the request "
                       "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn, "
                       "Strict.",
    "force": "Force is going to \"force\" Apply requests.",
    "pretty": "If 'true', then the output is pretty printed.",
    "labelSelector": "A selector to restrict the list of returned objects by their labels.",
    "fieldSelector": "A selector to restrict the list of returned objects by their fields.",
    "limit": "limit is a maximum number of responses to return for a list call.",
    "continue": "The continue option should be set when retrieving more results from the server.",
    "resourceVersion": "resourceVersion sets a constraint on what resource versions a request may be served "
                       "from.",
    "resourceVersionMatch": "resourceVersionMatch determines how resourceVersion is applied to list calls.",
    "timeoutSeconds": "Timeout for the list/watch call.",
    "watch": "Watch for changes to the described resources and return them as a stream of add, update, and "
             "remove notifications.",
    "allowWatchBookmarks": "allowWatchBookmarks requests watch events with type \"BOOKMARK\".",
    "sendInitialEvents": "`sendInitialEvents=true` may be set together with `watch=true`.",
    "gracePeriodSeconds": "The duration in seconds before the object should be deleted.",
    "propagationPolicy": "Whether and how garbage collection will be performed.",
}
INTEGER_PARAMS = {"limit", "timeoutSeconds", "gracePeriodSeconds"}
BOOLEAN_PARAMS = {"watch", "allowWatchBookmarks", "sendInitialEvents", "force"}
WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
LIST_PARAMS = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
               "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
ACTIONS = {  # verb -> (http method, x-kubernetes-action, operationId verb, query parameters)
    "get": ("get", "get", "read", ()),
    "update": ("put", "put", "replace", WRITE_PARAMS),
    "patch": ("patch", "patch", "patch", (*WRITE_PARAMS, "force")),
    "delete": ("delete", "delete", "delete", ("dryRun", "gracePeriodSeconds", "propagationPolicy")),
    "list": ("get", "list", "list", LIST_PARAMS),
    "create": ("post", "post", "create", WRITE_PARAMS),
    "deletecollection": ("delete", "deletecollection", "deleteCollection",
                         ("dryRun", "gracePeriodSeconds", "propagationPolicy", *LIST_PARAMS)),
}
ITEM_VERBS = ("get", "update", "patch", "delete")
COLLECTION_VERBS = ("list", "create", "deletecollection")


def _param(name: str) -> Doc:
    kind = "integer" if name in INTEGER_PARAMS else "boolean" if name in BOOLEAN_PARAMS else "string"
    return {"name": name, "in": "query", "description": QUERY[name], "schema": {"type": kind, "uniqueItems": True}}


def _path_param(name: str, description: str) -> Doc:
    return {"name": name, "in": "path", "description": description, "required": True,
            "schema": {"type": "string", "uniqueItems": True}}


def _camel_group(group: str) -> str:
    return "".join(p.capitalize() for p in group.replace(".k8s.io", "").replace("-", ".").split(".")) or "Core"


def _operation(verb: str, route: ResourceRoutes, namespaced_path: bool, schemas: SchemaSource) -> Doc:
    info = route.scope.info
    _, action, op_verb, params = ACTIONS[verb]
    scope = "Namespaced" if namespaced_path else ("" if not info.namespaced else "")
    suffix = "ForAllNamespaces" if info.namespaced and not namespaced_path else ""
    sub = info.subresource.capitalize()
    op_id = f"{op_verb}{_camel_group(info.group)}{info.version.capitalize()}{scope}{info.kind}{sub}{suffix}"
    ref = {"$ref": f"#/components/schemas/{_schema_name(info, schemas)}"}
    op: Doc = {"tags": [f"{(info.group or 'core').replace('.', '')}_{info.version}"],
               "operationId": op_id, "parameters": [_param(p) for p in params],
               "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}},
                             "401": {"description": "Unauthorized"}},
               "x-kubernetes-action": action,
               "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version,
                                                   "kind": info.kind}}
    if verb in ("create", "update"):
        op["requestBody"] = {"content": {"*/*": {"schema": ref}}, "required": True}
    if verb == "patch":
        # custom resources take no strategic merge patch; kubectl apply reads this to pick its patch
        types = [t for t in ("application/json-patch+json", "application/merge-patch+json",
                             "application/strategic-merge-patch+json", "application/apply-patch+yaml")
                 if not (route.scope.custom_resource and "strategic" in t)]
        op["requestBody"] = {"content": {t: {"schema": {"type": "object"}} for t in types}, "required": True}
    return op


def _schema_name(info: Any, schemas: SchemaSource) -> str:
    return schemas.name_of(info.group, info.version, info.kind) or f"{info.group or 'core'}.{info.version}.{info.kind}"


def _referenced(names: list[str], definitions: dict[str, Doc]) -> dict[str, Doc]:
    """The named definitions and everything they reference, transitively."""
    found: dict[str, Doc] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in found or name not in definitions:
            continue
        found[name] = definitions[name]
        pending.extend(_refs(definitions[name]))
    return dict(sorted(found.items()))


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"].rsplit("/", 1)[1]] if isinstance(node.get("$ref"), str) else []
        for value in node.values():
            out.extend(_refs(value))
        return out
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


def _published_v3(schema: Doc) -> Doc:
    """kube-openapi publishes int-or-string types (IntOrString) with their OpenAPIV3OneOfTypes in v3
    (kubectl explain then names them), as a plain string in v2."""
    if schema.get("format") != "int-or-string" or schema.get("type") != "string":
        return schema
    rest = {k: v for k, v in schema.items() if k != "type"}
    return {**rest, "oneOf": [{"type": "integer"}, {"type": "string"}]}


def group_version_document(group: str, version: str, routes: dict[str, ResourceRoutes],
                           schemas: SchemaSource = NO_SCHEMAS) -> Doc:
    root = f"/apis/{group}/{version}" if group else f"/api/{version}"
    paths: dict[str, Doc] = {}
    kinds: list[str] = []
    for key, route in sorted(routes.items()):
        info = route.scope.info
        resource, _, sub = key.partition("/")
        base = f"{root}/namespaces/{{namespace}}/{resource}" if info.namespaced else f"{root}/{resource}"
        item = f"{base}/{{name}}" + (f"/{sub}" if sub else "")
        common = [_path_param("name", f"name of the {info.kind}")]
        if info.namespaced:
            common.append(_path_param("namespace", "object name and auth scope, such as for teams and projects"))
        paths[item] = {"parameters": common, **{
            ACTIONS[v][0]: _operation(v, route, info.namespaced, schemas) for v in ITEM_VERBS if v in route.handlers}}
        if not sub:
            collection = {ACTIONS[v][0]: _operation(v, route, info.namespaced, schemas)
                          for v in COLLECTION_VERBS if v in route.handlers}
            if collection:
                ns_param = [_path_param("namespace", "object name and auth scope")] if info.namespaced else []
                paths[base] = {"parameters": ns_param, **collection}
            if info.namespaced and "list" in route.handlers:
                paths[f"{root}/{resource}"] = {"get": _operation("list", route, False, schemas)}
            kinds.append(_schema_name(info, schemas))
    components = {name: _published_v3(schema) for name, schema in _referenced(kinds, schemas.definitions()).items()}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.0"}, "paths": paths,
            "components": {"schemas": components}}


@dataclass
class OpenAPIService:
    """Shared by the chain; documents are rendered once per change and served with their hash."""

    schemas: SchemaSource = NO_SCHEMAS
    # "api/v1" or "apis/g/v" -> the routes; documents are rendered on first request (fast start-up)
    group_versions: dict[str, tuple[str, str, dict[str, ResourceRoutes]]] = field(default_factory=dict)
    rendered: dict[str, bytes] = field(default_factory=dict)
    # The schemas of group versions whose kinds are not built in (custom resources).
    own_schemas: dict[str, SchemaSource] = field(default_factory=dict)

    def add(self, group: str, version: str, routes: dict[str, ResourceRoutes],
            schemas: SchemaSource | None = None) -> None:
        key = f"apis/{group}/{version}" if group else f"api/{version}"
        self.group_versions[key] = (group, version, routes)
        self.rendered.pop(key, None)
        if schemas is not None:
            self.own_schemas[key] = schemas

    def schemas_of(self, key: str) -> SchemaSource:
        return self.own_schemas.get(key, self.schemas)

    def remove(self, group: str, version: str) -> None:
        key = f"apis/{group}/{version}" if group else f"api/{version}"
        self.group_versions.pop(key, None)
        self.rendered.pop(key, None)
        self.own_schemas.pop(key, None)

    def document(self, key: str) -> bytes | None:
        if key not in self.rendered and key in self.group_versions:
            self.rendered[key] = orjson.dumps(group_version_document(*self.group_versions[key],
                                                                     self.schemas_of(key)))
        return self.rendered.get(key)

    @staticmethod
    def _hash(body: bytes) -> str:
        return hashlib.sha512(body).hexdigest().upper()

    async def serve_root(self, req: Request) -> Response:
        paths = {k: {"serverRelativeURL": f"/openapi/v3/{k}?hash={self._hash(self.document(k) or b'')}"}
                 for k in sorted(self.group_versions)}
        return Response(200, orjson.dumps({"paths": paths}), headers=[("cache-control", "no-cache, private")])

    async def serve_document(self, req: Request) -> Response:
        key = req.path[len("/openapi/v3/"):].rstrip("/")
        body = self.document(key)
        if body is None:
            return Response(404, b"404 page not found\n", "text/plain; charset=utf-8")
        digest = self._hash(body)
        requested = req.param("hash")
        if requested and requested != digest:
            return Response(301, b"", "", [("location", f"/openapi/v3/{key}?hash={digest}")])
        cache = "public, immutable" if requested else "no-cache, private"
        return Response(200, body, "application/json", [("etag", f'"{digest}"'), ("cache-control", cache),
                                                         ("vary", "Accept")])
