"""The local model's set-up errors say their cause and fix, without starting anything heavy."""

from __future__ import annotations

import socket

import pytest

from agent.clients.chat import ModelNotServed, make_chat_model
from agent.clients.policies import needs_key
from agent.commands.run import pick_model
from agent.config import ModelConfig
from agent.measuring.local_server import LOCAL_MODEL, LocalModelError, LocalModelServer, serving, weights_path


def test_local_is_a_first_class_model_name():
    model = pick_model("local", [])
    assert model is LOCAL_MODEL and model.provider == "local" and not needs_key(model)
    assert model.context_tokens == 4096 and model.max_output_tokens and model.max_retries == 0


def test_a_local_model_without_a_running_server_is_a_clear_configuration_error():
    with pytest.raises(ModelNotServed, match="local server is not running"):
        make_chat_model(LOCAL_MODEL, "t")


def test_serving_passes_other_models_through_untouched():
    other = ModelConfig(name="m", model="x")
    with serving(other) as served:
        assert served is other
    given = LOCAL_MODEL.model_copy(update={"base_url": "http://127.0.0.1:1/v1"})
    with serving(given) as served:  # a base_url means someone else serves it
        assert served is given


def test_a_bad_weights_path_names_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("SGR_LOCAL_GGUF", str(tmp_path / "missing.gguf"))
    with pytest.raises(LocalModelError, match="missing.gguf: no such file"):
        weights_path()


def test_a_busy_port_is_refused_before_starting(monkeypatch, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("SGR_LOCAL_GGUF", str(gguf))
    monkeypatch.setattr("agent.measuring.local_server.server_available", lambda: None)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LocalModelError, match=f"port {port} on 127.0.0.1 is already in use"):
            LocalModelServer(port=port).start()


def test_a_server_that_dies_while_starting_is_reported(monkeypatch, tmp_path):
    gguf = tmp_path / "not-a-model.gguf"
    gguf.write_bytes(b"this is not a GGUF file")
    monkeypatch.setenv("SGR_LOCAL_GGUF", str(gguf))
    monkeypatch.setattr("agent.measuring.local_server.server_available", lambda: None)
    server = LocalModelServer(startup_timeout=60, log_path=tmp_path / "server.log")
    monkeypatch.setattr(server, "command", lambda: ["python3", "-c", "import sys; sys.exit(3)"])
    with pytest.raises(LocalModelError, match="exited with code 3 while starting"):
        server.start()
    assert server.process is None


def test_the_local_model_installer_refuses_an_unknown_option_before_doing_anything():
    import subprocess

    done = subprocess.run(["bash", "scripts/install_local_model.sh", "--bogus"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "usage:" in done.stderr and "--build-only DIR" in done.stderr
