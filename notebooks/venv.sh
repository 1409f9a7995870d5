#!/usr/bin/env bash
# Create (or reuse) the notebooks' virtual environment and print its directory.
#
#   bash notebooks/venv.sh [DIR]
#
# DIR defaults to $TRACEFABRIC_VENV, else ~/.cache/tracefabric/venv. The environment is
# made with `python3 -m venv` (PYTHON overrides the interpreter; Python 3.11) and
# `pip install -r notebooks/requirements.txt`; it is reused as long as the
# requirements it was made from are unchanged, and made anew otherwise. pip's own
# cache applies (PIP_NO_CACHE_DIR=1 or PIP_CACHE_DIR=... to change that).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${1:-${TRACEFABRIC_VENV:-$HOME/.cache/tracefabric/venv}}
req=notebooks/requirements.txt
stamp=$venv/tracefabric-requirements.txt
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp"; then
	echo "$venv"
	exit 0
fi
if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ]; then
	echo "notebooks/venv.sh: $venv exists and is not a virtual environment; remove it or set TRACEFABRIC_VENV" >&2
	exit 2
fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"${PYTHON:-python3}" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req" >&2
cp "$req" "$stamp"
echo "$venv"
