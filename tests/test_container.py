"""The container without a container engine: the Dockerfile's install steps are one script (deploy/install.sh),
run here as the image runs it, into a fresh virtual environment, with the source tree mounted read-only; then the
image's command serves against a /data-style folder, and the image's own HEALTHCHECK command is run against it.

No index is reached: the script's pip takes --no-index, and the dependencies come from the environment running
the tests (on PYTHONPATH), whose setuptools builds the package (--no-build-isolation)."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import httpx
import pytest
from servers.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from servers.slack_socket import FakeSocketMode

from bot.config import VARIABLES

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
INSTALL = "deploy/install.sh"


def instructions(name: str) -> list[str]:
    """The arguments of every `name` instruction of the Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.split(None, 1)[:1] == [name]]


def env_of_image() -> dict[str, str]:
    found = {}
    for given in instructions("ENV"):
        for pair in shlex.split(given):
            name, _, value = pair.partition("=")
            found[name] = value
    return found


def test_the_dockerfile_runs_the_install_script_as_root_and_serves_as_another_user():
    [run] = [line for line in instructions("RUN") if INSTALL in line]
    venv = shlex.split(run)[shlex.split(run).index(f"/src/{INSTALL}") + 2]
    image = env_of_image()
    assert image["PATH"].startswith(f"{venv}/bin:") and image["PRDIGEST_DB"] == "/data/prdigest.db"
    assert instructions("USER") == ["prdigest"] and instructions("VOLUME") == ["/data"]
    assert json.loads(instructions("CMD")[0])[:2] == ["prdigest", "serve"]
    assert "/healthz" in instructions("HEALTHCHECK")[0]


def test_compose_names_every_variable():
    compose = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    assert [name for name in VARIABLES if not re.search(rf"\b{name}\b", compose)] == []
    assert "prdigest-data:/data" in compose


def _can_build_offline() -> str | None:
    """Why the package cannot be built here without an index; None when it can."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not installed beside the tests (the test extra brings it)"
    if tuple(int(part) for part in setuptools.__version__.split(".")[:2]) < (70, 1):
        return f"setuptools {setuptools.__version__} builds no wheel without the wheel package (the test extra brings 70.1+)"
    if subprocess.run([sys.executable, "-c", "import ensurepip"], capture_output=True).returncode:
        return "this Python has no ensurepip, so `python3 -m venv` makes no pip"
    return None


def _read_only_source(command: list[str]) -> list[str]:
    """`command` in a mount namespace of its own where the source tree is read-only, when such namespaces can be
    made here (as in tests/test_full_disk.py); else as it is, and the test checks the tree was not written."""
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode:
        return command
    mount = f"mount --bind {shlex.quote(str(ROOT))} {shlex.quote(str(ROOT))} && mount -o remount,bind,ro {shlex.quote(str(ROOT))}"
    return ["unshare", "-Urm", "sh", "-c", f'{mount} && exec "$@"', "sh", *command]


@pytest.mark.processes
def test_the_image_steps_install_and_serve_a_data_folder_that_passes_its_healthcheck(tmp_path):
    reason = _can_build_offline()
    if reason:
        pytest.skip(f"cannot build prdigest without an index: {reason}")
    venv, data = tmp_path / "opt" / "prdigest", tmp_path / "data"
    data.mkdir(mode=0o700)  # as the image makes /data
    tests_env = sysconfig.get_paths()["purelib"]  # the dependencies, as they are installed beside the tests
    before = {path for path in ROOT.iterdir()}
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "PYTHONPATH": tests_env}
    install = ["sh", str(ROOT / INSTALL), str(ROOT), str(venv), "--no-index", "--no-build-isolation"]
    done = subprocess.run(_read_only_source(install), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().endswith("prdigest, version 0.1.0")
    assert {path for path in ROOT.iterdir()} == before  # nothing built beside the sources
    shipped = subprocess.run([str(venv / "bin" / "python"), "-c", "import bot, store; print(bot.__file__)"],
                             env=env, cwd=data, capture_output=True, text=True, timeout=60)
    assert shipped.stdout.startswith(str(venv)), shipped  # the installed copy, not the tree under test

    image = env_of_image()
    command = json.loads(instructions("CMD")[0])
    serving = {**env, "PATH": f"{venv}/bin:{env['PATH']}", "PRDIGEST_DB": str(data / Path(image["PRDIGEST_DB"]).name),
               "PRDIGEST_POLL_MINUTES": "0", "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}
    loaded = subprocess.run(["prdigest", "import", "--sample"], env=serving, cwd=data, capture_output=True, text=True,
                            timeout=120)
    assert loaded.returncode == 0 and loaded.stdout.startswith("Loaded 72 example PRs"), loaded
    assert stat.S_IMODE(Path(serving["PRDIGEST_DB"]).stat().st_mode) == 0o600
    with FakeSlack() as slack, FakeSocketMode() as socket_mode:
        slack.socket_url = socket_mode.url
        serving["PRDIGEST_SLACK_API_URL"] = slack.api_url
        # The image's command, with the health checks on a free port rather than 8080, which may be taken here.
        process = subprocess.Popen([*command, "--health-port", "0"], env=serving, cwd=data,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            port = _health_port(process)
            socket_mode.wait_connected()
            ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
            assert ready.status_code == 200 and ready.json()["status"] == "ready", ready.text
            assert _healthcheck(serving, port) == 0
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert _healthcheck(serving, port) != 0  # and it fails once the process is gone


def _health_port(process: subprocess.Popen) -> int:
    seen = []
    assert process.stderr is not None
    for line in process.stderr:
        seen.append(line)
        found = re.search(r"serving /healthz and /readyz at http://[\d.]+:(\d+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()
            return int(found.group(1))
    raise AssertionError(f"serve did not start: {seen}")


def _healthcheck(env: dict[str, str], port: int) -> int:
    """The Dockerfile's HEALTHCHECK command, run with the installed Python, as the container runtime runs it."""
    command = json.loads(instructions("HEALTHCHECK")[0].split("CMD", 1)[1])
    return subprocess.run(command, env={**env, "PRDIGEST_HEALTH_PORT": str(port)}, capture_output=True,
                          timeout=60).returncode
