"""A loopback OpenAI-compatible chat endpoint: the routes, port and base URL that the fake server (tests) and the
play server (a person or program answering) share; each answers `/v1/chat/completions` its own way.

An endpoint made with a `token` answers only requests that carry it (`Authorization: Bearer TOKEN`, as the
OpenAI client sends its key): any other local process, or a page in the agent's own browser, gets HTTP 401
before its body is read. The play server has one per run; the fake server, a test's, has none.
"""

from __future__ import annotations

import hmac

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tasks.offline.server import ThreadedServer, free_port

UNAUTHORIZED = {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": None,
                          "code": "invalid_api_key"}}


class ChatEndpoint(ThreadedServer):
    """Subclasses implement `_chat`; `model_id` is what `/v1/models` lists."""

    def __init__(self, model_id: str, name: str, *, token: str | None = None):
        self.model_id = model_id
        self._token = token
        app = Starlette(routes=[Route("/v1/chat/completions", self._checked_chat, methods=["POST"]),
                                Route("/v1/models", self._models, methods=["GET"])])
        self.port = free_port("127.0.0.1")
        super().__init__(app, "127.0.0.1", self.port, name)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def authorized(self, request: Request) -> bool:
        if self._token is None:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self._token}".encode())

    async def _checked_chat(self, request: Request) -> JSONResponse:
        if not self.authorized(request):
            return JSONResponse(UNAUTHORIZED, status_code=401)
        return await self._chat(request)

    async def _models(self, request: Request) -> JSONResponse:
        if not self.authorized(request):
            return JSONResponse(UNAUTHORIZED, status_code=401)
        return JSONResponse({"object": "list", "data": [{"id": self.model_id, "object": "model"}]})

    async def _chat(self, request: Request) -> JSONResponse:
        raise NotImplementedError
