#!/usr/bin/env bash
# Execute every notebook in notebooks/ headless, top to bottom, as a user would.
#
#   bash notebooks/run.sh [OUTDIR]
#
# Needs Debian's Jupyter stack under /usr/bin/python3 (see notebooks/README.md) and Go.
# Executed notebooks go to OUTDIR (default: a temporary directory, removed at the end);
# everything else (binaries, replay and analyze outputs, Jupyter and matplotlib state)
# lives in a temporary directory too, so neither the repository nor $HOME changes.
# A failing cell fails the script. Set TRACEFABRIC_BIN to a directory holding prebuilt
# replay and analyze binaries to skip the build; NB_CELL_TIMEOUT (seconds, default 300)
# bounds each cell.
set -euo pipefail
cd "$(dirname "$0")/.."

py=/usr/bin/python3
if ! "$py" -c 'import nbconvert, nbclient, ipykernel, pandas, matplotlib' 2>/dev/null; then
	echo "notebooks/run.sh: $py lacks the Jupyter stack; install it with:" >&2
	echo "  apt-get install -y --no-install-recommends jupyter-nbconvert python3-nbclient python3-ipykernel python3-pandas python3-matplotlib" >&2
	exit 2
fi

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

# The kernel is Debian's interpreter, whatever python3 comes first on PATH (pyenv).
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

# The notebooks are independent: run them all at once (each in its own kernel) and
# report each one's wall time; a failing one prints its nbconvert log.
names=() pids=()
for nb in notebooks/*.ipynb; do
	name=$(basename "$nb" .ipynb)
	(
		start=$(date +%s%N)
		rc=0
		"$py" -m jupyter nbconvert --to notebook --execute \
			--ExecutePreprocessor.timeout="${NB_CELL_TIMEOUT:-300}" \
			--ExecutePreprocessor.kernel_name=python3 \
			--output-dir "$out" "$nb" >"$tmp/$name.log" 2>&1 || rc=$?
		echo "$rc $((($(date +%s%N) - start) / 1000000))" >"$tmp/$name.status"
		exit $rc
	) &
	names+=("$name") pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || true
	read -r rc ms <"$tmp/${names[$i]}.status"
	if [ "$rc" = 0 ]; then
		printf '%-40s ok   %6d ms\n' "notebooks/${names[$i]}.ipynb" "$ms"
	else
		printf '%-40s FAIL %6d ms\n' "notebooks/${names[$i]}.ipynb" "$ms"
		cat "$tmp/${names[$i]}.log" >&2
		status=1
	fi
done
[ -n "${1:-}" ] && echo "executed notebooks in $out"
exit $status
