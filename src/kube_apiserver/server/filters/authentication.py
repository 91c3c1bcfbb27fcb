"""Authentication: who is asking. A bad credential or no identity at all gets 401 Unauthorized."""

from __future__ import annotations

import logging

from ...apimachinery import errors
from ...authentication.interfaces import AuthenticationError, RequestAuthenticator
from ...endpoints.http import Handler, Request, Response

log = logging.getLogger("kube_apiserver.authentication")


def with_authentication(handler: Handler, authenticator: RequestAuthenticator) -> Handler:
    async def authenticating(req: Request) -> Response:
        try:
            user = await authenticator.authenticate(req)
        except AuthenticationError as err:
            log.debug("Unable to authenticate the request: %s", err)
            user = None
        if user is None:
            raise errors.unauthorized()
        req.user = user
        # The credential ends here: nothing after authentication sees it.
        req.headers.pop("authorization", None)
        return await handler(req)
    return authenticating
