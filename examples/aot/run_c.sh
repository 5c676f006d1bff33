#!/bin/sh
# Build and run examples/aot/physics_main.c against a built physics module (default
# build/physics; build it first with `redraft build examples/aot/physics.py --out DIR`).
set -e
out="${1:-build/physics}"
here="$(dirname "$0")"
cc="${CC:-cc}"
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "no C compiler ($cc): skipping the C side" >&2
    exit 0
fi
"$cc" -O2 -o "$out/physics_main" "$here/physics_main.c" -I"$out" -L"$out" -lphysics \
    -Wl,-rpath,"$(cd "$out" && pwd)" -lm
"$out/physics_main"
