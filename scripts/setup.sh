#!/usr/bin/env bash
# Installs the external tools varysat's GLSL import needs: glslangValidator
# (Debian glslang-tools) and spirv-opt (Debian spirv-tools), and glmark2's shaders
# (glmark2-data) for the third-party sample test. Idempotent and quiet;
# runs apt-get update only when a plain install fails (stale package lists).
set -euo pipefail

need=()
command -v glslangValidator >/dev/null 2>&1 || need+=(glslang-tools)
command -v spirv-opt >/dev/null 2>&1 || need+=(spirv-tools)
# glmark2's shaders: the fixed third-party sample of tests/third_party_sample.rs.
[ -d /usr/share/glmark2/shaders ] || need+=(glmark2-data)
# Mesa's lavapipe (CPU Vulkan driver) and the Vulkan loader: tests/render.rs.
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || need+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || need+=(libvulkan1)
[ ${#need[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "setup.sh: need root or sudo to install: ${need[*]}" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
install() { $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
if ! install 2>/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    install
fi
