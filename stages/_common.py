"""Shared argv handling for the thin stage entry points, and the CPU pin every stage runs under.

Imported first by every stage, before anything imports torch: the kernel pin and the thread count
(:mod:`vlcomp.determinism`) make a stage's outputs the same bits on every machine of a kind.
"""

from __future__ import annotations

import argparse
import os
import sys

from vlcomp.determinism import apply, pin_environment

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
pin_environment()


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    return p


def _record_imports(folder: str) -> None:
    """At exit, write the library modules this stage process imported (``VLCOMP_IMPORT_AUDIT``: a folder; one JSON
    file per process with its argv), so a test can hold the declared code deps to what a real run imports."""
    import atexit
    import json

    def dump() -> None:
        files = set()
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None) or ""
            if f"{os.sep}vlcomp{os.sep}" in f and f.endswith(".py"):
                files.add("src/vlcomp/" + f.rsplit(f"{os.sep}vlcomp{os.sep}", 1)[1].replace(os.sep, "/"))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as fh:
            json.dump({"argv": sys.argv, "cwd": os.getcwd(), "modules": sorted(files)}, fh)

    atexit.register(dump)


def run(main) -> None:
    """Run a stage's main() pinned (kernels, threads); a user mistake (ValueError/FileNotFoundError) ends with one
    clear line."""
    if os.environ.get("VLCOMP_IMPORT_AUDIT"):
        _record_imports(os.environ["VLCOMP_IMPORT_AUDIT"])
    try:
        apply()
        main()
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
