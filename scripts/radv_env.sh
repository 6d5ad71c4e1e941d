#!/usr/bin/env bash
# Sourced by the RADV scripts (radv_calibrate.py, quality_vs_radv.py through
# `bash scripts/radv_env.sh --check`): finds the shared RADV harness (Mesa 25 RADV on a
# null device, see its README.md), sets it up with its own setup.sh when the chroot is
# missing or its bind mounts are gone, and prints the chroot root on stdout.
#
# The harness is looked for in $VARYSAT_RADV_DIR, then ../shared/radv next to the
# repository (and next to its parent, for worktrees), then /work/shared/radv.
# usage: scripts/radv_env.sh [--check]   (--check: never install, exit 1 when absent)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
R=${RADV_ROOT:-/var/tmp/radv-trixie}
dir=""
for d in "${VARYSAT_RADV_DIR:-}" "$here/../shared/radv" "$here/../../shared/radv" /work/shared/radv; do
    if [ -n "$d" ] && [ -f "$d/setup.sh" ]; then dir="$(cd "$d" && pwd)"; break; fi
done
ready() { [ -x "$R/radv-build/radv_link" ] && [ -f "$R/radv/run_pairs.py" ] && [ -d "$R/proc/self" ]; }
if ! ready; then
    if [ "${1:-}" = "--check" ] || [ -z "$dir" ]; then
        echo "radv_env.sh: RADV harness not installed (chroot $R)" >&2
        exit 1
    fi
    [ "$(id -u)" -eq 0 ] || { echo "radv_env.sh: setting up RADV needs root" >&2; exit 1; }
    RADV_ROOT="$R" bash "$dir/setup.sh" >&2
    # Where the harness folder is itself a network or FUSE mount, the bind mount of it
    # inside the chroot can come up empty: copy the (small) scripts in instead.
    if [ ! -f "$R/radv/run_pairs.py" ]; then
        umount "$R/radv" 2>/dev/null || true
        cp "$dir"/*.py "$dir"/*.sh "$dir"/*.c "$R/radv/"
    fi
fi
echo "$R"
