#!/usr/bin/env bash
# tests/cross/install.sh: the Debian packages of the arm64 Linux tests
# (tests/test_cross_arm64.py), installed with apt-get when missing. `make test` runs it
# (the Makefile's cross-deps target), as it runs tests/slurm/cluster.sh install.
#
#   gcc-aarch64-linux-gnu     the cross compiler (and its arm64 libc, /usr/aarch64-linux-gnu)
#   qemu-user-static          qemu-aarch64-static runs the arm64 binaries here (no binfmt
#                             needed: the tests call it by name, with -L /usr/aarch64-linux-gnu)
#   libssl-dev:arm64          OpenSSL for the crypto shim (multiarch: adds the arm64
#                             architecture to dpkg once, then refreshes the package lists)
#   rustc-web cargo-web libstd-rust-web-dev:arm64
#                             Rust with an arm64 standard library, for the kem crate (the
#                             older libstd-rust-dev cannot read the crate's lock file)
#
# Debian's rustc-web replaces Debian's rustc and cargo packages: when those are installed,
# the Rust part is left alone (the kem test then skips and says why) rather than removing
# them. A rustup toolchain elsewhere on PATH is not touched: the test calls /usr/bin/cargo.
#
# Needs root, apt-get and an amd64 Debian; without them it stops at once with exit
# status 3 and says why (the tests skip with the same reason). PARBENCH_NO_APT=1 never
# runs apt-get (exit 3 when something is missing).

set -Eeuo pipefail

CANNOT=3
LOG=${TMPDIR:-/tmp}/parbench-cross-apt.log
C_PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libssl-dev:arm64)
RUST_PACKAGES=(rustc-web cargo-web libstd-rust-web-dev:arm64)

say() { echo "cross-deps: $*" >&2; }
cannot() { say "cannot install here: $*"; exit "$CANNOT"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing_of() {
    local out=() p
    for p in "$@"; do installed "$p" || out+=("$p"); done
    echo "${out[*]}"
}

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "$@" >"$LOG" 2>&1; then
        # the package lists may be missing or stale: refresh them once
        if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "$@"; } >>"$LOG" 2>&1; then
            tail -n 5 "$LOG" >&2
            return 1
        fi
    fi
    rm -f "$LOG"
}

main() {
    command -v dpkg >/dev/null 2>&1 || cannot "not a Debian system (no dpkg)"
    local missing rust_missing
    missing=$(missing_of "${C_PACKAGES[@]}")
    rust_missing=$(missing_of "${RUST_PACKAGES[@]}")
    if installed rustc || installed cargo; then
        [[ -n $rust_missing ]] && say "Debian's rustc/cargo are installed; rustc-web would replace them:" \
            "not installing ${RUST_PACKAGES[*]} (install them by hand for the kem cross build)"
        rust_missing=""
    fi
    [[ -z $missing && -z $rust_missing ]] && return 0
    [[ -n ${PARBENCH_NO_APT:-} ]] && cannot "PARBENCH_NO_APT is set; missing: $missing $rust_missing"
    command -v apt-get >/dev/null 2>&1 || cannot "no apt-get; missing: $missing $rust_missing"
    [[ $(id -u) -eq 0 ]] || cannot "not root; missing: $missing $rust_missing (sudo $0)"
    [[ $(dpkg --print-architecture) == amd64 ]] ||
        cannot "this machine is $(dpkg --print-architecture), the tests cross-build from amd64"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        say "adding the arm64 architecture to dpkg (multiarch, for libssl-dev:arm64)"
        dpkg --add-architecture arm64
        apt-get update -q >"$LOG" 2>&1 || { tail -n 5 "$LOG" >&2; cannot "apt-get update failed (log: $LOG)"; }
    fi
    if [[ -n $missing ]]; then
        say "installing $missing"
        # shellcheck disable=SC2086
        apt_install $missing || cannot "apt-get could not install $missing (log: $LOG)"
    fi
    if [[ -n $rust_missing ]]; then
        say "installing $rust_missing"
        # shellcheck disable=SC2086
        apt_install $rust_missing || say "apt-get could not install $rust_missing (log: $LOG); the kem cross build skips"
    fi
}

main "$@"
