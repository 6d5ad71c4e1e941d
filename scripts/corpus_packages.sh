#!/usr/bin/env bash
# corpus_packages.sh: installs the third-party shader corpora (Debian's glmark2-data
# and piglit) if they are missing; sourced by the scripts that read them.
export DEBIAN_FRONTEND=noninteractive
for pkg in glmark2-data piglit; do
    dpkg -s "$pkg" >/dev/null 2>&1 || apt-get install -y -qq "$pkg" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null && apt-get install -y -qq "$pkg" >/dev/null; } \
        || echo "warning: could not install $pkg" >&2
done
