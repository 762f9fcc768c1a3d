"""A full disk, for real: a small tmpfs mounted in a user and mount namespace of the test's own, gone with it."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PRDIGEST = f'"{sys.executable}" -m bot'


def namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-Urm", "true"], capture_output=True, timeout=30).returncode == 0


pytestmark = [pytest.mark.processes,
              pytest.mark.skipif(not namespaces(), reason="user and mount namespaces (unshare -Urm) are not available")]


def on_small_disk(tmp_path: Path, size: str, script: str) -> subprocess.CompletedProcess[str]:
    """`script` (sh) run with $DISK a tmpfs of `size` and $PRDIGEST the command; the store is $DISK/store.db."""
    disk = tmp_path / "disk"
    disk.mkdir(exist_ok=True)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
           "DISK": str(disk), "PRDIGEST_DB": str(disk / "store.db")}
    mounted = f'mount -t tmpfs -o size={size} tmpfs "$DISK" || exit 97\n{script}'
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", mounted], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 97, done.stderr
    return done


def test_a_full_disk_under_a_fresh_store_is_named(tmp_path):
    """From a disk with no room for the schema to one with room for all: each run imports, or says the disk is full."""
    outcomes = []
    for kilobytes in range(64, 416, 32):
        done = on_small_disk(tmp_path, f"{kilobytes}k", f'{PRDIGEST} import "{FIXTURES / "report-2026-03-08.md"}"')
        outcomes.append(done.returncode)
        if done.returncode:
            assert done.stderr.splitlines() == [
                f"prdigest: error: the disk holding the store {tmp_path / 'disk' / 'store.db'} is full: free some space "
                "on it, or choose another store with --db"
            ], (kilobytes, done.stderr)
    assert outcomes[0] == 1 and outcomes[-1] == 0


def test_subscribe_on_a_full_disk_says_the_disk_is_full(tmp_path):
    # The store stays open in another process, as `serve` keeps it, while the disk fills up.
    hold = "import sqlite3, sys, time; sqlite3.connect(sys.argv[1]).execute('select count(*) from prs').fetchone(); " \
           "open(sys.argv[2], 'w').close(); time.sleep(120)"
    done = on_small_disk(tmp_path, "2m", f"""
        {PRDIGEST} import "{FIXTURES / "report-2026-03-08.md"}" >/dev/null || exit 1
        "{sys.executable}" -c "{hold}" "$PRDIGEST_DB" "$DISK/open" & holder=$!
        while [ ! -e "$DISK/open" ]; do sleep 0.1; done
        dd if=/dev/zero of="$DISK/filler" bs=4k 2>/dev/null
        {PRDIGEST} run "/prdigest subscribe" --channel C0FULL
        code=$?
        kill $holder
        exit $code
    """)
    assert done.returncode == 1
    assert done.stdout.strip() == (
        f"the disk holding the store {tmp_path / 'disk' / 'store.db'} is full: free some space on it, "
        "or choose another store with --db"
    )
    assert "busy" not in done.stdout + done.stderr
