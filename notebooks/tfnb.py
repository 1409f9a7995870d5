"""Small helpers shared by the tracefabric notebooks.

The notebooks drive the two Go commands (``replay`` and ``analyze``) and read what
they write: ``run.json``, ``summary.json`` and ``tables/*.csv``, and the record files
themselves (``*.arrow`` with pyarrow, the ``replay export`` Parquet files with DuckDB).
This module only finds the repository, runs the commands, loads their outputs and
checks record files' row counts against ``run.json``; every number comes from the
commands.

They run in the virtual environment of ``notebooks/requirements.txt`` (made by
``notebooks/venv.sh``; ``notebooks/run.sh`` uses it): pyarrow, duckdb, pandas and
matplotlib are always there.

Binaries: if the environment variable ``TRACEFABRIC_BIN`` names a directory holding
``replay`` and ``analyze`` (``.ci/run`` and ``notebooks/run.sh`` set it), they are used
as they are; otherwise both are built once per kernel with ``go build`` into a
temporary directory (about a minute on a cold Go cache), so no cell pays ``go run``'s
compile time.

Outputs go to a temporary directory (``workdir``), never into the repository.
"""

import json
import os
import pathlib
import re
import subprocess
import tempfile

MODULE = "github.com/tracefabric/tracefabric"
TOOLS = ("replay", "analyze")

_bin = {}


def repo_root(start=None):
    """The repository root: the nearest directory at or above ``start`` (default: the
    current directory, which Jupyter sets to the notebook's) holding tracefabric's go.mod."""
    here = pathlib.Path(start or os.getcwd()).resolve()
    for d in (here, *here.parents):
        mod = d / "go.mod"
        if mod.is_file() and mod.read_text().startswith(f"module {MODULE}"):
            return d
    raise FileNotFoundError(f"no go.mod of {MODULE} at or above {here}")


ROOT = repo_root(pathlib.Path(__file__).parent)


def _run(cmd, cwd=None):
    """Run cmd; return its stdout. A failure raises RuntimeError quoting stderr."""
    try:
        p = subprocess.run(cmd, cwd=cwd or ROOT, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} exited with status {e.returncode}:\n{e.stderr.strip()}"
        ) from None
    return p.stdout


def binary(name):
    """Path of the ``replay`` or ``analyze`` binary (see the module doc)."""
    if name not in _bin:
        env = os.environ.get("TRACEFABRIC_BIN")
        if env:
            for t in TOOLS:
                path = pathlib.Path(env) / t
                if not os.access(path, os.X_OK):
                    raise FileNotFoundError(f"TRACEFABRIC_BIN={env}: no executable {t} there")
                _bin[t] = path
        else:
            out = pathlib.Path(tempfile.mkdtemp(prefix="tracefabric-bin-"))
            _run(["go", "build", "-o", f"{out}/", *(f"./cmd/{t}" for t in TOOLS)])
            for t in TOOLS:
                _bin[t] = out / t
    return _bin[name]


def replay(*args):
    """Run ``replay ARGS...`` from the repository root; return its stdout."""
    return _run([binary("replay"), *map(str, args)])


def analyze(*args):
    """Run ``analyze --quiet ARGS...`` from the repository root; return its stdout."""
    return _run([binary("analyze"), "--quiet", *map(str, args)])


def trace(name):
    """Path of a committed trace under testdata/pcaps."""
    return ROOT / "testdata" / "pcaps" / name


def workdir(name):
    """A fresh temporary directory for one notebook's outputs."""
    return pathlib.Path(tempfile.mkdtemp(prefix=f"tracefabric-{name}-"))


def load_json(path):
    with open(path) as f:
        return json.load(f)


def table(analysis_dir, name):
    """``tables/<name>.csv`` of an analyze output directory as a pandas DataFrame."""
    import pandas as pd

    return pd.read_csv(pathlib.Path(analysis_dir) / "tables" / f"{name}.csv")


def png(analysis_dir, name, width=None):
    """``plots/<name>.png`` of an analyze output directory, for inline display."""
    from IPython.display import Image

    return Image(filename=str(pathlib.Path(analysis_dir) / "plots" / f"{name}.png"), width=width)


def record_rows(path):
    """Rows of a record file: an Arrow IPC file (``.arrow``, counted batch by batch
    without reading the data) or a Parquet file (``.parquet``, from its footer)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = pathlib.Path(path)
    if path.suffix == ".parquet":
        return pq.ParquetFile(path).metadata.num_rows
    with pa.memory_map(str(path)) as src:
        reader = pa.ipc.open_file(src)
        return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))


def check_rows(run_dir, name, rows=None):
    """Check that record file ``name`` (``drops.arrow``) of ``run_dir`` has the rows its
    ``run.json`` states; ``rows`` is what a cell read (a count, a table or a frame),
    by default the file's own count. Returns the count."""
    want = load_json(pathlib.Path(run_dir) / "run.json")["records"][name]
    if rows is None:
        rows = record_rows(pathlib.Path(run_dir) / name)
    n = rows if isinstance(rows, int) else (rows.num_rows if hasattr(rows, "num_rows") else len(rows))
    if n != want:
        raise AssertionError(f"{run_dir}/{name}: {n} rows, run.json records says {want}")
    return n


PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000

_TIME_UNITS = {"s": PS_PER_S, "ms": PS_PER_MS, "us": PS_PER_US, "\u00b5s": PS_PER_US,
               "ns": PS_PER_NS, "ps": 1, "": 1}


def time_ps(text):
    """A duration as run.json spells it ("100us", "1.5ms", "0") in picoseconds."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-z\u00b5]*)\s*", str(text))
    if not m or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"{text!r} is not a duration (want e.g. 100us, 1.5ms, 20000ps)")
    return round(float(m.group(1)) * _TIME_UNITS[m.group(2)])


def fmt_time(ps):
    """A duration in picoseconds in the largest unit that keeps it at least 1: "10 us"."""
    for name, scale in (("s", PS_PER_S), ("ms", PS_PER_MS), ("us", PS_PER_US), ("ns", PS_PER_NS)):
        if abs(ps) >= scale:
            return f"{ps / scale:g} {name}"
    return f"{ps:g} ps"


def windows(df, by=()):
    """Window number (0, 1, ...) of each row of a binned table (``start_ps``, ``end_ps``).

    ``analyze`` bins a time series only where its events happen, and buffer occupancy
    gets one window of bins per burst of activity with the idle time between them left
    out. Within one series (the rows sharing the ``by`` columns, in time order) bins of
    one window touch (``end_ps`` of a row is ``start_ps`` of the next); a row that does
    not touch its predecessor starts the next window."""
    keys = [df[k] for k in by]
    prev_end = df.groupby(keys, sort=False)["end_ps"].shift() if keys else df["end_ps"].shift()
    new = df["start_ps"] != prev_end
    return (new.groupby(keys, sort=False).cumsum() if keys else new.cumsum()) - 1


def holds_sample(df, period_ps):
    """Whether each bin [``start_ps``, ``end_ps``) contains a multiple of ``period_ps``.

    Switches sample their buffers at multiples of ``BufferStatsReportInterval``; a bin
    narrower than that period that holds no sample time reads 0 in
    ``buffer_occupancy.csv`` without meaning an empty buffer."""
    first = (df["start_ps"] + period_ps - 1) // period_ps * period_ps
    return first < df["end_ps"]
