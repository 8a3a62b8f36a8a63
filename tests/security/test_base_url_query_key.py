"""Issue 40 item 8: a key in `base_url`'s query string (`https://host/v1?key=...`, as some gateways take it) was
written in clear to manifest.json. It is redacted there, and the chat client registers it as a secret, so no
artefact or message that quotes the base_url (an error naming the endpoint) carries it either."""

from __future__ import annotations

import json

from agent.clients.chat import make_chat_model
from agent.config import BenchConfig, ModelConfig
from agent.rundir.manifest import config_snapshot
from browser.trace import Redactor

KEY = "Qk7-gateway-secret-40"


def test_base_url_query_key_never_in_the_manifest():
    config = BenchConfig.model_validate({"models": [
        {"name": "m", "base_url": f"https://llm.example/v1?api-version=2024-02&key={KEY}"},
        {"name": "n", "base_url": f"https://llm.example/v1?access_token={KEY}x"}]})
    snapshot = json.dumps(config_snapshot(config))
    assert KEY not in snapshot
    assert "https://llm.example/v1?api-version=2024-02&key=<redacted>" in snapshot  # the rest kept
    assert "access_token=<redacted>" in snapshot


def test_base_url_query_key_redacted_in_every_message():
    model = ModelConfig(name="m", model="m", base_url=f"https://llm.example/v1?sig={KEY}", api_key_env=None)
    make_chat_model(model, "t")
    error = f"model 'm' (m at {model.base_url}): APIConnectionError: Connection error."
    assert KEY not in Redactor.from_environment().text(error)
