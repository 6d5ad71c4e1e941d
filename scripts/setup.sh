#!/usr/bin/env bash
# Installs the external tools varysat's GLSL import needs: glslangValidator
# (Debian glslang-tools) and spirv-opt (Debian spirv-tools), glmark2's shaders
# (glmark2-data) for the third-party sample test, and the Vulkan loader with Mesa's
# lavapipe for the render tests. Idempotent and quiet; runs apt-get update only when
# a plain install fails (stale package lists) or a new apt source was added.
set -euo pipefail

# The oldest lavapipe the render tests accept (tests/render_support/harness.rs
# MESA_MIN, a failure in CI): Mesa 25.0 offers the 64-bit integer vertex formats
# (R64*_UINT/SINT), which 22.3.6 (Debian 12's own) does not, so 64-bit integer
# attributes are drawn and compared. Neither has 16-bit varyings
# (storageInputOutput16) or R64*_SFLOAT vertex formats; the tests name those when
# they skip. On Debian 12 it comes from bookworm-backports.
LAVAPIPE_MIN=25.0

need=()
command -v glslangValidator >/dev/null 2>&1 || need+=(glslang-tools)
command -v spirv-opt >/dev/null 2>&1 || need+=(spirv-tools)
# glmark2's shaders: the fixed third-party sample of tests/third_party_sample.rs.
[ -d /usr/share/glmark2/shaders ] || need+=(glmark2-data)
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || need+=(libvulkan1)

# True when lavapipe is installed and at least LAVAPIPE_MIN.
lavapipe_ok() {
    local v
    # The ICD file is lvp_icd.x86_64.json up to Mesa 22, lvp_icd.json since.
    compgen -G '/usr/share/vulkan/icd.d/lvp_icd*.json' >/dev/null || return 1
    v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null) || return 1
    dpkg --compare-versions "$v" ge "$LAVAPIPE_MIN"
}
need_lavapipe=0
lavapipe_ok || need_lavapipe=1
[ ${#need[@]} -eq 0 ] && [ $need_lavapipe -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "setup.sh: need root or sudo to install: ${need[*]} mesa-vulkan-drivers>=$LAVAPIPE_MIN" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() { $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
if [ ${#need[@]} -gt 0 ] && ! apt_install "${need[@]}" 2>/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    apt_install "${need[@]}"
fi

[ $need_lavapipe -eq 0 ] && exit 0
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ "$codename" = bookworm ]; then
    # Debian 12's own Mesa is 22.3.6: take lavapipe from bookworm-backports,
    # adding that apt source unless some source already names it.
    if ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        $SUDO apt-get update -qq >/dev/null
    fi
    if ! apt_install -t bookworm-backports mesa-vulkan-drivers 2>/dev/null; then
        $SUDO apt-get update -qq >/dev/null
        apt_install -t bookworm-backports mesa-vulkan-drivers
    fi
elif ! apt_install mesa-vulkan-drivers 2>/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    apt_install mesa-vulkan-drivers
fi
if ! lavapipe_ok; then
    echo "setup.sh: lavapipe (mesa-vulkan-drivers) is older than $LAVAPIPE_MIN after installing it" >&2
    exit 1
fi
