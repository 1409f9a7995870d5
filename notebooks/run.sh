#!/usr/bin/env bash
# Execute every notebook in notebooks/ headless, top to bottom, as a user would, and
# the Python and SQL recipes of docs/records.md "Reading the records"
# (notebooks/docs_recipes.py).
#
#   bash notebooks/run.sh [OUTDIR]
#
# Needs Go and python3 (3.11) with venv; the Python packages come from PyPI:
# notebooks/venv.sh makes a virtual environment from notebooks/requirements.txt
# (pyarrow, duckdb, pandas, matplotlib, nbclient, nbconvert, ipykernel) under
# $TRACEFABRIC_VENV (default ~/.cache/tracefabric/venv), or reuses it, and the
# notebooks' kernel runs its python. Executed notebooks go to OUTDIR (default: a
# temporary directory, removed at the end); everything else (binaries, replay and
# analyze outputs, Jupyter and matplotlib state) lives in a temporary directory too,
# so neither the repository nor $HOME changes (but for the environment's cache).
# A failing cell (or recipe) fails the script. Set TRACEFABRIC_BIN to a directory holding prebuilt
# replay and analyze binaries to skip the build; NB_CELL_TIMEOUT (seconds, default 300)
# bounds each cell.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=$(bash notebooks/venv.sh)
py=$venv/bin/python

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracefabric-notebooks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=${1:-$tmp/executed}
mkdir -p "$out" "$tmp/tmp"
out=$(cd "$out" && pwd)

export MPLCONFIGDIR=$tmp/matplotlib IPYTHONDIR=$tmp/ipython
export JUPYTER_CONFIG_DIR=$tmp/jupyter/config JUPYTER_DATA_DIR=$tmp/jupyter/data
export JUPYTER_RUNTIME_DIR=$tmp/jupyter/runtime
export PYDEVD_DISABLE_FILE_VALIDATION=1 PYTHONDONTWRITEBYTECODE=1
export TMPDIR=$tmp/tmp

# The kernel is the environment's interpreter, whatever python3 comes first on PATH.
mkdir -p "$JUPYTER_DATA_DIR/kernels/python3"
cat >"$JUPYTER_DATA_DIR/kernels/python3/kernel.json" <<JSON
{"argv": ["$py", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "Python 3 (ipykernel)", "language": "python"}
JSON

if [ -z "${TRACEFABRIC_BIN:-}" ]; then
	echo "building replay and analyze"
	go build -o "$tmp/bin/" ./cmd/replay ./cmd/analyze
	export TRACEFABRIC_BIN=$tmp/bin
fi

# The notebooks and the recipes of docs/records.md (notebooks/docs_recipes.py) are
# independent: run them all at once (each notebook in its own kernel) and report each
# one's wall time; a failing one prints its log.
names=() labels=() pids=()
start_job() { # name label command...
	local name=$1 label=$2
	shift 2
	(
		start=$(date +%s%N)
		rc=0
		"$@" >"$tmp/$name.log" 2>&1 || rc=$?
		echo "$rc $((($(date +%s%N) - start) / 1000000))" >"$tmp/$name.status"
		exit $rc
	) &
	names+=("$name") labels+=("$label") pids+=($!)
}
# Kernels started at once can race for the same TCP port (jupyter_client picks free
# ports and closes them before the kernel binds them: "Kernel died before replying to
# kernel_info", ZMQError "Address already in use"). That is the harness, not a cell:
# such a start is retried, up to three times, and a failing cell is never retried.
execute_notebook() { # notebook
	local nb=$1 try log
	log=$tmp/$(basename "$nb" .ipynb).try
	for try in 1 2 3; do
		if "$py" -m jupyter nbconvert --to notebook --execute \
			--ExecutePreprocessor.timeout="${NB_CELL_TIMEOUT:-300}" \
			--ExecutePreprocessor.kernel_name=python3 \
			--output-dir "$out" "$nb" >"$log" 2>&1; then
			cat "$log"
			return 0
		fi
		if ! grep -q -e "Kernel died before replying to kernel_info" -e "Address already in use" "$log"; then
			cat "$log"
			return 1
		fi
		echo "kernel did not start (port race), try $try of 3" >&2
		sleep "$try"
	done
	cat "$log"
	return 1
}
for nb in notebooks/*.ipynb; do
	start_job "$(basename "$nb" .ipynb)" "$nb" execute_notebook "$nb"
done
start_job docs-recipes "docs/records.md recipes" "$py" notebooks/docs_recipes.py
status=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || true
	read -r rc ms <"$tmp/${names[$i]}.status"
	if [ "$rc" = 0 ]; then
		printf '%-40s ok   %6d ms\n' "${labels[$i]}" "$ms"
	else
		printf '%-40s FAIL %6d ms\n' "${labels[$i]}" "$ms"
		cat "$tmp/${names[$i]}.log" >&2
		status=1
	fi
done
[ -n "${1:-}" ] && echo "executed notebooks in $out"
exit $status
