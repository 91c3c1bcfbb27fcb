"""authentication.k8s.io/v1: TokenReview and SelfSubjectReview (pkg/registry/authentication), answered by
the server's own authenticators; nothing is stored."""

from __future__ import annotations

from typing import Any

from ..apimachinery import errors
from ..authentication.review import TokenReviewer
from ..registry.context import Context, UserInfo
from ..registry.rest import ResourceInfo, ValidateObjectFunc
from ..registry.strategy import Strategy
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory

Object = dict[str, Any]
GROUP = "authentication.k8s.io"
DEPENDENCIES = ("token_reviewer",)
TOKEN_REVIEWS = ResourceInfo(GROUP, "v1", "tokenreviews", "TokenReview", "tokenreview", False)
SELF_SUBJECT_REVIEWS = ResourceInfo(GROUP, "v1", "selfsubjectreviews", "SelfSubjectReview", "selfsubjectreview",
                                    False)


def user_info(user: UserInfo) -> Object:
    """authentication/v1 UserInfo (username always present)."""
    return {"username": user.name, **user.to_json()}


def response(obj: Object, status: Object) -> Object:
    """The review as given, with what the server found; reviews are never stored, so they have no
    creation time (Go's zero time)."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return {**obj, "metadata": {"creationTimestamp": None, **meta}, "status": status}


class ReviewREST:
    """A create-only resource whose answer is computed, like rest.Creater without storage."""

    def __init__(self, info: ResourceInfo):
        self.info = info
        self.strategy = Strategy(info)

    async def _validate(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None) -> None:
        if create_validation is not None:
            await create_validation(ctx, obj)


class TokenReviewREST(ReviewREST):
    def __init__(self, reviewer: TokenReviewer | None):
        super().__init__(TOKEN_REVIEWS)
        self.reviewer = reviewer

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if not spec.get("token"):
            raise errors.bad_request("token is required for TokenReview in authentication")
        await self._validate(ctx, obj, create_validation)
        if self.reviewer is None:
            return response(obj, {"user": {}})
        result = await self.reviewer.review(spec["token"], list(spec.get("audiences") or []))
        status: Object = {"authenticated": True} if result.user is not None else {}
        status["user"] = user_info(result.user) if result.user is not None else {}
        if result.audiences and result.user is not None:
            status["audiences"] = result.audiences
        if result.error:
            status["error"] = result.error
        return response(obj, status)


class SelfSubjectReviewREST(ReviewREST):
    def __init__(self) -> None:
        super().__init__(SELF_SUBJECT_REVIEWS)

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        await self._validate(ctx, obj, create_validation)
        return response(obj, {"userInfo": user_info(ctx.user)})


def new_api_group_info(storage: StorageFactory, token_reviewer: TokenReviewer | None = None) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {"v1": {"selfsubjectreviews": SelfSubjectReviewREST(),
                                       "tokenreviews": TokenReviewREST(token_reviewer)}})
