"""autoscaling/v1 horizontalpodautoscalers: the autoscaling/v2 storage served converted
(registry/conversion.py), with v1's own defaults and a table computed from the stored form."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...registry.context import Context
from ...registry.conversion import Conversion, ConvertedREST
from ...registry.rest import UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST
from .conversion import to_v1, to_v2
from .defaults import decode, default_v1
from .hpa import INFO as V2_INFO
from .table import table

Object = dict[str, Any]
INFO = replace(V2_INFO, version="v1")
CONVERSION = Conversion(to_stored=to_v2, from_stored=to_v1)


class V1Strategy(Strategy):
    """What a v1 request gets before conversion: v1's defaults."""

    has_status_subresource = True

    def default(self, obj: Object) -> None:
        decode("v1", default_v1, obj)


class V1StatusREST:
    """GET, PUT and PATCH of horizontalpodautoscalers/status at v1: the v2 status REST, converted."""

    def __init__(self, status: StatusREST):
        info = replace(INFO, subresource="status")
        self.converted = ConvertedREST(info, status.strategy, status, CONVERSION)  # type: ignore[arg-type]
        self.info, self.strategy, self.table = info, status.strategy, self.converted.table

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return await self.converted.get(ctx, name, options)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        return await self.converted.update(ctx, name, obj_info, create_validation, update_validation, False, options)


def new_rest(store: Store, status: StatusREST) -> dict[str, Any]:
    rest = ConvertedREST(INFO, V1Strategy(INFO), store, CONVERSION, table(to_v2))
    return {"horizontalpodautoscalers": rest, "horizontalpodautoscalers/status": V1StatusREST(status)}
