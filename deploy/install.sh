#!/bin/sh
# Installs prdigest from the source tree SRC into a new virtual environment VENV; any further arguments go to pip.
# The Dockerfile runs it, and so does tests/test_container.py: one set of steps, so the two cannot drift apart.
#   sh deploy/install.sh SRC VENV [PIP-ARGS...]
set -eu
src=$1
venv=$2
shift 2
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
# Built from a copy: building writes beside the sources, and the source tree may be read-only (or someone else's).
cp -R "$src/pyproject.toml" "$src/README.md" "$src/bot" "$src/store" "$build/"
python3 -m venv "$venv"
"$venv/bin/pip" install --no-cache-dir --disable-pip-version-check "$@" "$build"
"$venv/bin/prdigest" --version
