#!/bin/sh
# Create /opt/venv from the base image's python3 and install a pinned wheel set
# OFFLINE (no index, wheels only). Shared by every image with a venv.
#
#   install-venv.sh WHEELHOUSE LOCKDIR
#
# LOCKDIR holds requirements.txt (installed with dependencies) and optionally
# nodeps.txt (installed with --no-deps, e.g. tf-keras, which would otherwise
# pull the full `tensorflow` wheel next to tensorflow-cpu).
set -eu
WHEELS=${1:-/tmp/wheels}
LOCK=${2:-/tmp/lock}

python3 -m venv /opt/venv
PIP="/opt/venv/bin/python -m pip --disable-pip-version-check --no-cache-dir --no-input"
$PIP install --no-index --find-links "$WHEELS" -r "$LOCK/requirements.txt"
if [ -s "$LOCK/nodeps.txt" ]; then
    $PIP install --no-index --find-links "$WHEELS" --no-deps -r "$LOCK/nodeps.txt"
fi
rm -rf /root/.cache
echo "venv ready: $(/opt/venv/bin/python --version)"
