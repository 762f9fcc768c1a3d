"""`bench/eval.py --model` over the real openai client and a Chat Completions server on 127.0.0.1: its replies are
kept in the store, so the same run again makes no request."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from servers.openai_api import FakeOpenAI, Recorded, Reply

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
QUESTIONS = {
    "repo": "vllm-project/vllm", "timezone": "America/Los_Angeles", "now": "2026-03-20T10:00:00-07:00",
    "questions": [
        # Words alone: the model picks among the candidates. A time: it explains the store's set. A thread.
        {"kind": "text", "q": "anything about split-K for fused MoE?", "expected": [36187]},
        {"kind": "time", "q": "what merged on March 17?", "expected": [36187]},
        {"kind": "text", "q": "who merged it?", "history": ["anything about split-K for fused MoE?"], "expected": [36187]},
    ],
}


def _first_named(request: Recorded) -> Reply:
    """Cites the first PR the prompt names: as a pick when asked for one, as text otherwise."""
    named = re.search(r"\[#(\d+)\]", request.user)
    number = int(named.group(1)) if named else 1
    if request.wants_json:
        return Reply(json.dumps({"answer": [number], "text": f"[#{number}] is the one."}))
    return Reply(f"[#{number}] is the one.")


def _run(tmp_path: Path, api: FakeOpenAI, dump: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PRDIGEST_DB": str(tmp_path / "prdigest.db"),
           "PRDIGEST_MODEL": "eval-model", "OPENAI_BASE_URL": api.base_url, "OPENAI_API_KEY": "test-key"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "eval.py"), "--model", "--questions", str(tmp_path / "questions.json"),
         "--seeds", str(tmp_path / "seeds"), "--dump", str(tmp_path / dump)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_second_run_is_answered_from_the_store(tmp_path):
    (tmp_path / "seeds").mkdir()
    shutil.copy(FIXTURES / "report-2026-03-07.md", tmp_path / "seeds")
    (tmp_path / "questions.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    with FakeOpenAI(_first_named) as api:
        first = _run(tmp_path, api, "first.jsonl")
        calls, requests = api.calls, len(api.requests)
        second = _run(tmp_path, api, "second.jsonl")
        assert len(api.requests) == requests  # not one request the second time
    assert calls >= 3 and any(request.wants_json for request in api.requests)
    assert f"answering with eval-model; its replies are kept in {tmp_path / 'prdigest.db'}" in first
    # The thread asks its first question again: the store answers it the first time already.
    assert f"model eval-model: {calls} calls, {api.tokens_in:,} tokens in, {api.tokens_out:,} out; 1 reply served from the store" in first
    assert f"model eval-model: 0 calls, 0 tokens in, 0 out; {calls + 1} replies served from the store" in second
    # The same answers, the model's words in them.
    answered = (tmp_path / "first.jsonl").read_text(encoding="utf-8")
    assert answered == (tmp_path / "second.jsonl").read_text(encoding="utf-8")
    assert len(answered.splitlines()) == 3


def test_without_a_model_configured_it_says_what_to_set(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "eval.py"), "--model", "--set", "own"],
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == "--model: no model configured: set PRDIGEST_MODEL, plus OPENAI_API_KEY or OPENAI_BASE_URL"
