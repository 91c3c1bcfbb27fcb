"""The static cost of a rule as cel-go estimates it (checker/cost.go, v0.26) with Kubernetes' call
costs (k8s.io/apiserver pkg/cel/library/cost.go) and apiextensions' size estimator (sizes of
``self`` paths from the schema's MaxElements, compilation.go).

A port of the coster on :mod:`.celast` trees typed by :mod:`.celtyping`: identifiers and field
selections cost 1, literals 0, calls 1 plus their arguments, except the calls priced by the size of
what they traverse; a comprehension costs its range times its step and condition. Sizes follow
cel-go's quirks too (a path-less node borrows the root's bound, a scalar field's is its DeclType's
MaxElements, 0), since the estimate decides which CRDs are accepted and must match upstream's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .celast import ACCU, Call, Comprehension, Expr, Ident, ListExpr, Literal, MapExpr, Select, StructExpr
from .celk8scost import (
    LIST_CREATE,
    MAP_CREATE,
    MAX,
    ONE,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    STRUCT_CREATE,
    UNKNOWN,
    Est,
    Node,
    add,
    factor,
    kubernetes_call_cost,
    mul,
    union,
)
from .celtypes import CelType
from .celtyping import Checked


@dataclass
class _Entry:
    """entrySizeEstimate: the sizes of a container's keys and values."""

    container: str
    key: Est
    val: Est

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, union(self.key, other.key), union(self.val, other.val))


@dataclass
class _Local:
    path: list[str] | None
    size: Est | None
    entry: _Entry | None


class Estimator:
    def __init__(self, checked: Checked, root: CelType | None) -> None:
        self.checked = checked
        self.root = root
        self.paths: dict[Expr, list[str]] = {}
        self.sizes: dict[Expr, Est] = {}
        self.entries: dict[Expr, _Entry] = {}
        self.locals: dict[str, list[_Local]] = {}

    # ---- sizes and paths ----

    def path_of(self, e: Expr) -> list[str] | None:
        if isinstance(e, Ident) and (local := self._peek(e.name)) is not None:
            return local.path
        return self.paths.get(e)

    def _peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def estimate_size(self, path: list[str] | None) -> Est | None:
        """apiextensions' sizeEstimator: the MaxElements of the schema node a path reaches."""
        if not path or self.root is None:
            return None
        node: CelType | None = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = (node.fields or {}).get(name) if node.kind == "object" else None
        return None if node is None else (0, node.max_elements)

    def compute_size(self, e: Expr) -> Est | None:
        if e in self.sizes:
            return self.sizes[e]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        size = self.estimate_size(self.path_of(e))
        if size is not None:
            self.sizes[e] = size
            return size
        if self.checked.type_of(e).is_scalar():
            return ONE
        if isinstance(e, Ident) and (local := self._peek(e.name)) is not None:
            return local.size
        return None

    def size_or_unknown(self, node: Expr | Node) -> Est:
        size = node.size if isinstance(node, Node) else self.compute_size(node)
        return UNKNOWN if size is None else size

    def node(self, e: Expr) -> Node:
        path = self.path_of(e)
        if path and path[0] == ACCU:
            path = None
        return Node(e, path, self.checked.type_of(e), self.compute_size(e))

    def entry_of(self, e: Expr | None) -> _Entry | None:
        if e is None:
            return None
        if e in self.entries:
            return self.entries[e]
        if isinstance(e, Ident) and (local := self._peek(e.name)) is not None:
            return local.entry
        return None

    # ---- costs ----

    def cost(self, e: Expr) -> Est:
        if isinstance(e, Literal):
            return (0, 0)
        if isinstance(e, Ident):
            local = self._peek(e.name)
            self.paths[e] = local.path if local is not None and local.path is not None else (
                [] if local is not None else [e.name])
            return ONE
        if isinstance(e, Select):
            return self._select(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, ListExpr):
            return self._list(e)
        if isinstance(e, MapExpr):
            return self._map(e)
        if isinstance(e, Comprehension):
            return self._comprehension(e)
        if isinstance(e, StructExpr):
            total: Est = (0, 0)
            for _, value in e.fields:
                total = add(total, self.cost(value))
            return add(total, (STRUCT_CREATE, STRUCT_CREATE))
        return (0, 0)

    def _select(self, e: Select) -> Est:
        if e.test_only:
            return add(ONE, self.cost(e.operand))
        total = self.cost(e.operand)
        if self.checked.type_of(e.operand).kind in ("map", "object"):
            total = add(total, ONE)
        self.paths[e] = [*(self.path_of(e.operand) or []), e.field]
        return total

    def _list(self, e: ListExpr) -> Est:
        total: Est = (0, 0)
        item: Est = (0 if not e.elements else MAX, 0)
        for x in e.elements:
            total = add(total, self.cost(x))
            item = union(item, self.size_or_unknown(x))
        self.entries[e] = _Entry("list", ONE, item)
        return add(total, (LIST_CREATE, LIST_CREATE))

    def _map(self, e: MapExpr) -> Est:
        total: Est = (0, 0)
        keys: Est = (0 if not e.entries else MAX, 0)
        vals: Est = keys
        for k, v in e.entries:
            total = add(add(total, self.cost(k)), self.cost(v))
            keys = union(keys, self.size_or_unknown(k))
            vals = union(vals, self.size_or_unknown(v))
        self.entries[e] = _Entry("map", keys, vals)
        return add(total, (MAP_CREATE, MAP_CREATE))

    def _comprehension(self, e: Comprehension) -> Est:
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.locals.setdefault(e.accu_var, []).append(
            _Local(self.path_of(e.accu_init), self.compute_size(e.accu_init), self.entry_of(e.accu_init)))
        entry = self.entry_of(e.iter_range)
        container = entry.container if entry is not None else self.checked.type_of(e.iter_range).kind
        size = (entry.val if container == "list" else entry.key) if entry is not None else None
        sub = "@items" if container == "list" else "@keys"
        self.locals.setdefault(e.iter_var, []).append(_Local([*(self.path_of(e.iter_range) or []), sub], size, None))
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.locals[e.iter_var].pop()
        total = add(total, self.cost(e.result))
        self.locals[e.accu_var].pop()
        count = self.size_or_unknown(e.iter_range)
        total = add(total, mul(count, add(step, loop)))
        if isinstance(e.accu_init, Literal):
            size = self.compute_size(e.accu_init)
            if size is not None:
                self.sizes[e] = size
        elif isinstance(e.accu_init, ListExpr | MapExpr):
            self.sizes[e] = count
            step_entry = self.entry_of(e.loop_step)
            if step_entry is not None:
                self.entries[e] = step_entry
        return total

    def _call(self, e: Call) -> Est:
        if e.function == "dyn" and e.args:
            cost = self.cost(e.args[0])
            if (size := self.compute_size(e.args[0])) is not None:
                self.sizes[e] = size
            if (entry := self.entry_of(e.args[0])) is not None:
                self.entries[e] = entry
            return add(ONE, cost)
        arg_costs = []
        args = []
        for a in e.args:
            arg_costs.append(self.cost(a))
            args.append(self.node(a))
        total: Est = (0, 0)
        target = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self.node(e.target)
        fn_cost: Est = (MAX, 0)
        result: Est | None = None
        for overload in self.checked.overloads.get(e, [e.function]):
            cost, size = self._function(e, overload, target, args, arg_costs)
            fn_cost = union(fn_cost, cost)
            if size is not None:
                result = size if result is None else union(result, size)
            if overload in ("index_list", "index_map") and e.args:
                entry = self.entry_of(e.args[0])
                result = entry.val if entry is not None else None
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[e] = [*(self.path_of(e.args[0]) or []), sub]
            if result is None:
                result = self.compute_size(e)
        if result is not None:
            self.sizes[e] = result
        return add(total, fn_cost)

    def _function(self, e: Call, overload: str, target: Node | None, args: list[Node],
                  arg_costs: list[Est]) -> tuple[Est, Est | None]:
        arg_sum: Est = (0, 0)
        for c in arg_costs:
            arg_sum = add(arg_sum, c)
        special = self._overload_estimate(overload, args)
        if special is None:
            special = kubernetes_call_cost(e.function, overload, target, args, self.estimate_size)
        if special is not None:
            return add(special[0], arg_sum), special[1]
        return self._standard(e, overload, target, args, arg_costs, arg_sum)

    def _overload_estimate(self, overload: str, args: list[Node]) -> tuple[Est, Est | None] | None:
        """The cel-go sets extension's estimators (ext/sets.go)."""
        factor = {"list_sets_contains_list": 1, "list_sets_intersects_list": 1,
                  "list_sets_equivalent_list": 2}.get(overload)
        if factor is None or len(args) != 2:
            return None
        sizes = [a.size or self.estimate_size(a.path) or UNKNOWN for a in args]
        return add(factor(mul(sizes[0], sizes[1]), factor), ONE), None

    def _standard(self, e: Call, overload: str, target: Node | None, args: list[Node], arg_costs: list[Est],
                  arg_sum: Est) -> tuple[Est, Est | None]:
        """checker.coster.functionCost's own cases."""
        if overload == "string_format" and target is not None:
            return add(factor(self.size_or_unknown(target), STRING_TRAVERSAL), arg_sum), None
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return add(factor(self.size_or_unknown(args[0]), STRING_TRAVERSAL), arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return add(factor(self.size_or_unknown(args[1]), 1), arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = factor(add(self.size_or_unknown(target), ONE), STRING_TRAVERSAL)
            regex = factor(self.size_or_unknown(args[0]), REGEX_LENGTH)
            return add(mul(text, regex), arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            text = factor(self.size_or_unknown(target), STRING_TRAVERSAL)
            sub = factor(self.size_or_unknown(args[0]), STRING_TRAVERSAL)
            return add(mul(text, sub), arg_sum), None
        if overload in ("logical_and", "logical_or"):
            return (arg_costs[0][0], add(arg_costs[0], arg_costs[1])[1]), None
        if overload == "conditional":
            size = union(self.size_or_unknown(args[1]), self.size_or_unknown(args[2]))
            then = self.entry_of(args[1].expr)
            entry = then.union(self.entry_of(args[2].expr)) if then is not None else None
            if entry is not None:
                self.entries[e] = entry
            return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = add(self.size_or_unknown(args[0]), self.size_or_unknown(args[1]))
            left = self.entry_of(args[0].expr)
            entry = left.union(self.entry_of(args[1].expr)) if left is not None else None
            if entry is not None:
                self.entries[e] = entry
            if overload == "add_list":
                return add(ONE, arg_sum), size
            return add(factor(size, STRING_TRAVERSAL), arg_sum), size
        if overload in ("equals", "not_equals") or overload.endswith(("_string", "_bytes")) and (
                overload.startswith(("less", "greater"))):
            lhs, rhs = self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
            smallest = min(lhs[1], rhs[1])
            return add(factor((1 if smallest > 0 else 0, smallest), STRING_TRAVERSAL), arg_sum), None
        return add(ONE, arg_sum), None


def _literal_size(e: Expr) -> Est | None:
    """computeExprSize."""
    if isinstance(e, Literal):
        if e.kind == "string":
            return (len(e.value), len(e.value))
        if e.kind == "bytes":
            return (len(e.value), len(e.value))
        return ONE
    if isinstance(e, ListExpr):
        return (len(e.elements), len(e.elements))
    if isinstance(e, MapExpr):
        return (len(e.entries), len(e.entries))
    return None


def estimate(e: Expr, checked: Checked, root: CelType | None) -> int:
    """The maximum estimated cost of ``e``."""
    return Estimator(checked, root).cost(e)[1]
