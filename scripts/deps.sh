#!/usr/bin/env bash
# deps.sh -- install the Debian packages rankd needs, when they are missing.
#   scripts/deps.sh [--test] [PACKAGE...]
# Always the set that builds and runs rankd (make, make run); with --test also the packages only
# the tests need (make test); then any extra packages the caller names (nodejs npm for the demo
# loader, clang for the fuzzers...). As root it runs apt-get; otherwise it prints the one command
# that would, and fails.
set -euo pipefail
# build and run: the compiler, the libraries' headers (libjemalloc-dev: the allocator, see the
# Makefile's JEMALLOC), the Redis make run starts, curl, and tzdata (the IANA time zones of
# periodic boards, read from /usr/share/zoneinfo; the unit tests read it)
pkgs=(build-essential pkg-config libmicrohttpd-dev libhiredis-dev libcjson-dev zlib1g-dev
      libsystemd-dev libjemalloc-dev redis-server curl tzdata)
if [ "${1:-}" = "--test" ]; then
    shift
    # check: the unit and integration test framework; libcurl4-openssl-dev: the tests' HTTP
    # client; prometheus: its promtool checks /metrics (test_ops.c). Debian starts the prometheus
    # package's own service on :9090, which is why make run does not install it.
    pkgs+=(check libcurl4-openssl-dev prometheus)
fi
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "rankd needs these Debian packages: ${missing[*]}" >&2
    echo "install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
