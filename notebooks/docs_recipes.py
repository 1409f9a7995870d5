"""Execute the recipes of docs/records.md "Reading the records", as written.

Replays the demo trace into a temporary directory as the section's first block says
(``replay run ... -o out/demo --record-packets --export parquet``), then runs, from
that directory and in document order, every fenced ``python`` block (in one shared
namespace) and every ``sql`` block (each statement through DuckDB). A block that
fails fails the script, quoting the block; so does a section with fewer blocks than
expected (a renamed heading must not turn the check into a no-op).

    python notebooks/docs_recipes.py          # in the notebooks' environment (run.sh)

Binaries: as the notebooks (TRACEFABRIC_BIN, else go build), through tfnb.
"""

import contextlib
import io
import os
import pathlib
import re
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tfnb  # noqa: E402

SECTION = "## Reading the records"
MIN_PYTHON, MIN_SQL = 4, 1


def blocks(markdown):
    """The (language, code, line) of every fenced block of SECTION."""
    start = markdown.index(SECTION)
    end = markdown.find("\n## ", start + len(SECTION))
    text = markdown[start:end if end >= 0 else None]
    first_line = markdown[:start].count("\n") + 1
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        yield m.group(1), m.group(2), first_line + text[:m.start()].count("\n")


def main():
    doc = tfnb.ROOT / "docs" / "records.md"
    found = list(blocks(doc.read_text()))
    python = [b for b in found if b[0] == "python"]
    sql = [b for b in found if b[0] == "sql"]
    if len(python) < MIN_PYTHON or len(sql) < MIN_SQL:
        sys.exit(f"{doc}: {SECTION!r} has {len(python)} python and {len(sql)} sql blocks, "
                 f"want at least {MIN_PYTHON} and {MIN_SQL}")

    import duckdb

    work = pathlib.Path(tempfile.mkdtemp(prefix="tracefabric-docs-"))
    os.chdir(work)
    tfnb.replay("run", tfnb.trace("demo.pcap"), "-o", work / "out" / "demo", "--record-packets", "--export", "parquet", "-q")
    namespace = {"__name__": "__recipes__"}
    for lang, code, line in found:
        if lang not in ("python", "sql"):
            continue
        start = time.monotonic()
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                if lang == "python":
                    exec(compile(code, f"{doc}:{line}", "exec"), namespace)
                else:
                    for stmt in filter(str.strip, code.split(";")):
                        duckdb.sql(stmt).fetchall()
        except Exception:
            sys.stderr.write(f"{doc}:{line}: the {lang} block failed:\n{code}\n")
            traceback.print_exc()
            sys.exit(1)
        print(f"{doc.name}:{line} {lang:6} ok {1000 * (time.monotonic() - start):6.0f} ms, "
              f"{len(out.getvalue().splitlines())} lines of output")
    print(f"{len(python)} python and {len(sql)} sql blocks of {doc.name} executed against {work}/out/demo")
    os.chdir(tfnb.ROOT)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
