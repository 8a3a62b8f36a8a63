"""A loopback OpenAI-compatible chat endpoint: the routes, port and base URL that the fake server (tests) and the
play server (a person or program answering) share; each answers `/v1/chat/completions` its own way."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tasks.offline.server import ThreadedServer, free_port


class ChatEndpoint(ThreadedServer):
    """Subclasses implement `_chat`; `model_id` is what `/v1/models` lists."""

    def __init__(self, model_id: str, name: str):
        self.model_id = model_id
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"]),
                                Route("/v1/models", self._models, methods=["GET"])])
        self.port = free_port("127.0.0.1")
        super().__init__(app, "127.0.0.1", self.port, name)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": self.model_id, "object": "model"}]})

    async def _chat(self, request: Request) -> JSONResponse:
        raise NotImplementedError
