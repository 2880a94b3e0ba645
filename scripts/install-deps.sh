#!/usr/bin/env bash
# Installs what building, testing and benchmarking vmerge need, skipping what is already there:
# FFmpeg's development libraries and pkg-config (to link), and the ffmpeg CLI (fixture script,
# benchmark and the tests that cross-check vmerge's output), python3 (fixture and bench scripts;
# python3-yaml: the README's Kubernetes manifests are parsed by a test).
# tmux: the progress bar is tested in a real terminal that is resized during a run.
# libpq (PostgreSQL's client library, to link `vmerge queue` and `vmerge worker`) and the PostgreSQL
# server: the queue tests start a private cluster of their own (initdb into a temporary folder), never
# the system's. Debian puts the server's programs in /usr/lib/postgresql/<version>/bin, off PATH; the
# tests look there.
# libmicrohttpd (the HTTP server of `vmerge dashboard`, linked like libpq) and prometheus (its
# promtool checks the dashboard's /metrics in the tests; only the `all` group needs it).
# libcurl (the HTTP and S3 client of remote inputs and outputs; OpenSSL's flavour, whose curl_easy
# signs S3 requests), libxml2-dev (Foundation's XML parser on Linux links libxml2: S3 answers in XML)
# and, for the remote tests (`all` group only): nginx-light and openssl (a private
# https server with a CA the tests make), python3-venv (a private S3 server: moto, in a virtualenv of
# its own in $VMERGE_CACHE/s3server, made here when missing or when its pinned version changed).
# chromium: the dashboard's tests drive the page in headless Chromium (`all` group only). On macOS
# nothing is installed for that: Homebrew's chromium cask is unsigned (Gatekeeper calls it damaged),
# so the tests use Google Chrome or Chromium from /Applications if there is one (or $VMERGE_CHROMIUM)
# and are skipped otherwise.
# Debian/Ubuntu: apt-get (sudo when not root, `apt-get update` first); macOS: Homebrew.
# A group names less or more than all of that:
#   --build          only what building the binary and its package needs (make release/install/deb,
#                    the Dockerfile's build stage): pkg-config, the -dev libraries, dpkg-dev
#   --ffmpeg-build   what scripts/ffmpeg-prefix.sh needs to build an upstream FFmpeg (make
#                    test-ffmpeg): nasm, libx264's and libzimg's development files, curl, xz, the keyring
#   --rootfs         what the clean-root tests need (make test-deb, test-image): debootstrap, dpkg-dev,
#                    lintian (test-deb checks the package with it)
set -euo pipefail

log() { echo "deps: $*" >&2; }

# The remote tests' S3 server (Tests/RemoteTests/Servers/s3server.py) runs in a virtualenv of its
# own, pinned: moto checks SigV4 signatures as AWS does only from one version to the next, and pip's
# newest could change what the tests see. Made once per machine user (not per clone), again only when
# the pin changes (its stamp, written last: a cut-off install is never taken for done).
# The same virtualenv holds the OpenAPI validator the job API's document is checked with.
S3SERVER_PACKAGES="moto[server]==5.2.6 openapi-spec-validator==0.9.0"
s3server_venv() {
    local python=$1 venv=${VMERGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmerge}/s3server
    [[ "$(cat "$venv/vmerge-stamp" 2>/dev/null)" == "$S3SERVER_PACKAGES" ]] && return 0
    log "making the S3 test server's virtualenv in $venv ($S3SERVER_PACKAGES)"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
    # shellcheck disable=SC2086 # one word per package
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check $S3SERVER_PACKAGES
    echo "$S3SERVER_PACKAGES" >"$venv/vmerge-stamp"
}

group=${1:-all}
case "$group" in
    all | --build | --ffmpeg-build | --rootfs) ;;
    *) log "unknown group '$group' (--build, --ffmpeg-build, --rootfs)"; exit 2 ;;
esac

if [[ "$(uname -s)" == Darwin ]]; then
    if [[ "$group" == --ffmpeg-build || "$group" == --rootfs ]]; then
        log "make test-ffmpeg, test-deb and test-image build and run Debian's packages on Debian/Ubuntu; on macOS, Homebrew's ffmpeg is the current release: make test tests it"
        exit 1
    fi
    command -v brew >/dev/null || { log "Homebrew is required on macOS: https://brew.sh"; exit 1; }
    # libpq and postgresql@16 are keg-only (not linked into the prefix): the Makefile points
    # PKG_CONFIG_PATH at libpq's, and the tests find the server under $(brew --prefix postgresql@16).
    # curl is keg-only too (macOS has its own libcurl, without the .pc): PKG_CONFIG_PATH likewise.
    formulas=(ffmpeg pkg-config tmux fish libpq postgresql@16 libmicrohttpd prometheus curl nginx openssl@3)
    [[ "$group" == --build ]] && formulas=(ffmpeg pkg-config libpq libmicrohttpd curl)
    for formula in "${formulas[@]}"; do
        brew list --versions "$formula" >/dev/null 2>&1 || { log "brew install $formula"; brew install "$formula"; }
    done
    command -v swift >/dev/null || { log "Swift 6 is required: install Xcode or the command line tools (xcode-select --install)"; exit 1; }
    if [[ "$group" == all ]]; then
        [[ -x "$(brew --prefix)/bin/python3" ]] || { log "brew install python"; brew install python; }
        s3server_venv "$(brew --prefix)/bin/python3"
    fi
    if [[ "$group" == all && -z "${VMERGE_CHROMIUM:-}" && ! -x "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" \
        && ! -x /Applications/Chromium.app/Contents/MacOS/Chromium ]]; then
        log "no Google Chrome or Chromium in /Applications: the dashboard's browser tests will be skipped (install Chrome, or set VMERGE_CHROMIUM)"
    fi
    exit 0
fi

command -v apt-get >/dev/null || { log "no apt-get: install FFmpeg dev libraries, pkg-config, ffmpeg, libpq, the PostgreSQL server, libmicrohttpd, libcurl, nginx, openssl, promtool and Chromium yourself"; exit 1; }
packages=(pkg-config ffmpeg python3 python3-yaml python3-venv tmux zsh fish libavformat-dev libavcodec-dev libavfilter-dev libswscale-dev
    libswresample-dev libavutil-dev libpq-dev postgresql libmicrohttpd-dev libcurl4-openssl-dev libxml2-dev nginx-light openssl prometheus chromium)
case "$group" in
    --build) packages=(pkg-config make libavformat-dev libavcodec-dev libavfilter-dev libswscale-dev libswresample-dev
        libavutil-dev libpq-dev libmicrohttpd-dev libcurl4-openssl-dev libxml2-dev dpkg-dev) ;;
    --ffmpeg-build) packages=(nasm libx264-dev libzimg-dev curl xz-utils debian-archive-keyring make gcc pkg-config) ;;
    --rootfs) packages=(debootstrap dpkg-dev debian-archive-keyring ffmpeg python3 lintian) ;;
esac
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null; then
        sudo=(sudo)
    elif ((${#missing[@]})); then
        log "need root or sudo to install: ${missing[*]}"
        exit 1
    fi
fi
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ "$group" == all || "$group" == --build ]] && ! command -v swift >/dev/null; then
    # Debian 13 / Ubuntu 24.04 ship the toolchain as 'swiftlang'; older releases do not.
    if apt-cache show swiftlang >/dev/null 2>&1 || { "${sudo[@]}" apt-get update -qq && apt-cache show swiftlang >/dev/null 2>&1; }; then
        log "installing swiftlang"
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq swiftlang
    else
        log "Swift 6 is required and this release has no 'swiftlang' package: see https://www.swift.org/install/"
        exit 1
    fi
fi
[[ "$group" == all ]] && s3server_venv /usr/bin/python3
exit 0
