"""Run one benchmark module on an older commit and on this checkout, alternately, in one
session: the before/after figures of a change, measured under the same machine load.

    python -m benchmarks.before_after REV benchmarks.bench_steps [--rounds 2] [-- ARGS...]

REV's tree is exported (git archive) to a temporary folder and laid out as the installed
package (redraft/ with compiler/, runtime/, kernels/ inside, as setup.py maps them), which
PYTHONPATH puts ahead of this checkout's editable install (its finder comes after the path
ones); the benchmark modules always come from this checkout (a `benchmarks` link beside).
Both run from the temporary folder, so the checkout's own redraft/ is not on the path.
Rounds alternate before, after, before, after...
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIRS = ("compiler", "runtime", "kernels")


def export(rev: str, into: str) -> str:
    """REV's tree under `into`, as an importable `redraft` package; returns its parent."""
    tree = os.path.join(into, "tree")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    package = os.path.join(into, "site", "redraft")
    os.makedirs(os.path.dirname(package))
    os.symlink(os.path.join(tree, "redraft"), package)
    os.symlink(os.path.join(ROOT, "benchmarks"), os.path.join(into, "site", "benchmarks"))
    for name in PACKAGE_DIRS:
        link = os.path.join(tree, "redraft", name)
        if not os.path.exists(link):
            os.symlink(os.path.join(tree, name), link)
    return os.path.dirname(package)


def after_site(into: str) -> str:
    """A folder holding only a `benchmarks` link (redraft then comes from the install)."""
    folder = os.path.join(into, "after")
    os.makedirs(folder)
    os.symlink(os.path.join(ROOT, "benchmarks"), os.path.join(folder, "benchmarks"))
    return folder


def run(module: str, args: list[str], pythonpath: str, label: str) -> None:
    env = dict(os.environ, PYTHONPATH=pythonpath)
    print(f"===== {label} =====", flush=True)
    subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=pythonpath,
                   check=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare against (e.g. a merge base)")
    parser.add_argument("module", help="benchmark module, e.g. benchmarks.bench_steps")
    parser.add_argument("--rounds", type=int, default=1, help="before/after pairs to run")
    argv = sys.argv[1:] if argv is None else list(argv)
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    extra = argv[split + 1:]  # after `--`: the benchmark module's own arguments
    with tempfile.TemporaryDirectory(prefix="redraft-before-") as tmp:
        before, after = export(opts.rev, tmp), after_site(tmp)
        for k in range(opts.rounds):
            run(opts.module, extra, before, f"before ({opts.rev}), round {k + 1}")
            run(opts.module, extra, after, f"after (this checkout), round {k + 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
