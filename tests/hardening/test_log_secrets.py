"""Keys that a run's log holds never reach the screen: ``ari-jupyter status`` (text and
``--json``), the status the Runs panel's route returns (``status_json``) and the job output
tails all come through the one redactor.

The log lines are what LLM clients, HTTP libraries and git really print on a bad key: the key
shapes of OpenAI, Anthropic, Gemini, Hugging Face, GitHub and xAI, and bearer, basic-auth and
URL credentials.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from ari_jupyter.base.redact import redact
from ari_jupyter.runs.service import status_json

from ._support import secrets_in
from .figures import record

LOG_SECRETS = {
    "openai": ("sk-proj-Hq3rT7vX9mZ2kL5nP8wQ1sD4fG6hJ0aBcdEF12",
               "openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect "
               "API key provided: {}. You can find your API key at https://platform.openai.com/"
               "account/api-keys.', 'type': 'invalid_request_error'}}}}"),
    "openai-legacy": ("sk-abc123DEF456ghi789JKL012mno345PQRstu678", "Incorrect API key provided: {}"),
    "anthropic": ("sk-ant-api03-Zy8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEdCbA-AbCdEf_ghijKLMN",
                  "anthropic.AuthenticationError: invalid x-api-key: {}"),
    "gemini": ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
               "google.api_core.exceptions.PermissionDenied: 403 API key not valid. key={}"),
    "gemini-url": ("AIzaSyZ9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J",
                   "POST https://generativelanguage.googleapis.com/v1beta/models/x:generate?key={} 400"),
    "huggingface": ("hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456",
                    "huggingface_hub.errors.HfHubHTTPError: 401 Client Error (token {})"),
    "github": ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
               "fatal: could not read from https://{}@github.com/org/repo.git"),
    "github-fine-grained": ("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
                            "remote: Invalid credentials {}"),
    "xai": ("xai-AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789", "xai: invalid key {}"),
    "bearer": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9payloadsig",
               "DEBUG send: b'POST /v1/chat HTTP/1.1\\r\\nAuthorization: Bearer {}\\r\\n'"),
    "bearer-header": ("Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5",
                      "> Authorization: Bearer {}"),
    "basic-auth": ("YWxpY2U6U3VwM3JTM2NyZXRQdw==", "> Authorization: Basic {}"),
    "basic-auth-curl": ("Sup3rS3cretPw42", "+ curl -sS -u alice:{} https://api.example/v1"),
    "url-credentials": ("hunter2hunter2", "Connecting to https://ari:{}@proxy.example:3128/"),
    "url-credentials-db": ("Pg5ecretPassw0rd", "sqlalchemy: postgresql://ari:{}@db:5432/ari"),
}


def _checkpoint(tmp_path: Path) -> Path:
    ckpt = tmp_path / "ws" / "checkpoints" / "20261201094500_leaky"
    ckpt.mkdir(parents=True)
    (ckpt / "experiment.md").write_text("# Leaky run\n")
    lines = ["[stage] bfts started"] + [line.format(key) for key, line in LOG_SECRETS.values()]
    (ckpt / "ari.log").write_text("\n".join(lines) + "\n")
    (ckpt / "ari_run_20261201094500.log").write_text("\n".join(lines) + "\nTraceback: failed\n")
    return ckpt


def _secrets() -> dict[str, str]:
    return {name: key for name, (key, _line) in LOG_SECRETS.items()}


def test_every_key_shape_is_masked_by_the_one_redactor():
    leaked = {name: line.format(key) for name, (key, line) in LOG_SECRETS.items()
              if secrets_in(redact(line.format(key)), {name: key})}
    record("Secrets", "key shapes in log lines (OpenAI, Anthropic, Gemini, HF, GitHub, xAI, "
           "bearer, basic auth, URL credentials): the redactor", cases=len(LOG_SECRETS),
           survived=len(LOG_SECRETS) - len(leaked), lost=len(leaked), unit="lines")
    assert leaked == {}


def _shown_by_status(ckpt: Path, env: dict) -> dict[str, str]:
    """What the status route, ``status`` and ``status --json`` show of the run."""
    return {
        "status_json (the Runs panel's route)": json.dumps(asyncio.run(status_json(ckpt))),
        "ari-jupyter status": subprocess.run(
            [sys.executable, "-m", "ari_jupyter", "status", str(ckpt)], capture_output=True,
            text=True, env=env, timeout=60).stdout,
        "ari-jupyter status --json": subprocess.run(
            [sys.executable, "-m", "ari_jupyter", "status", "--json", str(ckpt)],
            capture_output=True, text=True, env=env, timeout=60).stdout,
    }


def test_a_runs_log_tail_never_shows_a_key(tmp_path):
    ckpt = _checkpoint(tmp_path)
    env = {**os.environ, "PATH": "/usr/bin:/bin", "SLURM_CONF": str(tmp_path / "none")}
    shown = _shown_by_status(ckpt, env)
    assert "bfts started" in shown["ari-jupyter status --json"]  # the tail is there
    leaks = {where: secrets_in(text, _secrets()) for where, text in shown.items()}
    lost = sum(len(found) for found in leaks.values())
    record("Secrets", "keys in a run's log: status text, status --json, the status route",
           cases=len(LOG_SECRETS) * len(shown), survived=len(LOG_SECRETS) * len(shown) - lost,
           lost=lost, unit="places")
    assert all(not found for found in leaks.values()), leaks


# -- round 4: the key shapes of the other providers LiteLLM reaches, and the run's own .env ----

PROVIDER_SECRETS = {
    # provider: (key, the line its client (through LiteLLM) prints with it)
    "groq": ("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",
             "litellm.AuthenticationError: GroqException - Invalid API Key {}"),
    "groq-list": ("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",
                  "router: groq deployments tried: ['{}'] (all 401)"),
    "groq-bare": ("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",
                  "retrying request with gsk={} after 401"),
    "perplexity": ("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",
                   "litellm.AuthenticationError: PerplexityException - 401 {}"),
    "replicate": ("r8_Qw3rTy7uIoP1aSdFgHjK9lZxCvBnM2qWeRtY",
                  "replicate.exceptions.ReplicateError: 401 Unauthenticated (client {})"),
    "fireworks": ("fw_3ZkQw7Er5Ty9Ui1Op3As5Df7",
                  "litellm.AuthenticationError: Fireworks_aiException - bad credentials {}"),
    "cerebras": ("csk-4x9k2m7p1q8w3e6r5t0y9u8i7o6p5a4s3d2f1g0h9j8k7l6",
                 "cerebras.cloud.sdk.AuthenticationError: Wrong API Key {}"),
    "invalid-key-quoted": ("Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf",
                           "litellm.BadRequestError: {{\"error\": \"Invalid key '{}'\"}}"),
}


def test_the_key_of_every_provider_litellm_reaches_is_masked():
    leaked = {name: redact(line.format(key)) for name, (key, line) in PROVIDER_SECRETS.items()
              if secrets_in(redact(line.format(key)), {name: key})}
    record("Secrets", "key shapes of the providers LiteLLM reaches (Groq, Perplexity, Replicate, "
           "Fireworks, Cerebras, a quoted key after 'Invalid key'): the redactor",
           cases=len(PROVIDER_SECRETS), survived=len(PROVIDER_SECRETS) - len(leaked),
           lost=len(leaked), unit="lines")
    assert leaked == {}


ENV_ONLY_KEY = "Vq7Lk2Pz9Rw4Tx8Ny3Hb6Jc1Md5Fs0Gu"
"""A key of no known shape, set only in the checkpoint's .env: masked by its value."""


def test_a_key_of_the_checkpoints_own_env_never_reaches_status_or_a_job_tail(tmp_path, monkeypatch):
    from ari_jupyter.runs.jobs import Job, RunScope, attribute

    ckpt = tmp_path / "ws" / "checkpoints" / "20261201094500_envkey"
    ckpt.mkdir(parents=True)
    logs = tmp_path / "ws" / "slurm_logs"
    logs.mkdir()
    (ckpt / "experiment.md").write_text("# Env key run\n")
    (ckpt / ".env").write_text(f"ARI_BACKEND=openai\nOPENAI_API_KEY={ENV_ONLY_KEY}\n"
                               f"SLURM_LOG_DIR={logs}\n")
    said = f"client configured: {ENV_ONLY_KEY} (retrying)"
    (ckpt / "ari.log").write_text(f"[stage] bfts started\n{said}\n")
    (ckpt / "ari_run_20261201094500.log").write_text(f"{said}\nTraceback: failed\n")
    (logs / "slurm_job_12.out").write_text(f"node_1: {said}\n")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # only the .env holds it
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(PATH="/usr/bin:/bin", SLURM_CONF=str(tmp_path / "none"))
    scope = RunScope.of(ckpt)
    job = Job("12", "node_1", "RUNNING", user=scope.user,
              work_dir=str(tmp_path / "ws" / "experiments" / ckpt.name / "node_1"))
    shown = {**_shown_by_status(ckpt, env),
             "a job's output tail": "\n".join(line for found in attribute([job], scope)
                                              for line in found.tail)}
    assert "client configured" in shown["ari-jupyter status --json"]  # the tail is there
    assert "node_1: client configured" in shown["a job's output tail"]
    leaks = {where: secrets_in(text, {"env-only": ENV_ONLY_KEY}) for where, text in shown.items()}
    lost = sum(len(found) for found in leaks.values())
    record("Secrets", "a key of the checkpoint's own .env in its logs and job output: status, "
           "status --json, the status route, the job tail", cases=len(shown),
           survived=len(shown) - lost, lost=lost, unit="places")
    assert all(not found for found in leaks.values()), leaks
