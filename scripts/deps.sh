#!/usr/bin/env bash
# deps.sh -- install the Debian packages rankd needs to build, test and run, when they are missing.
# As root it runs apt-get; otherwise it prints the one command that would, and fails.
set -euo pipefail
# prometheus: its promtool checks /metrics in the tests (test_ops.c)
pkgs=(build-essential pkg-config libmicrohttpd-dev libhiredis-dev libcjson-dev check
      libcurl4-openssl-dev zlib1g-dev redis-server curl prometheus)
# Extra packages for optional parts, named by the caller (e.g. nodejs npm for the demo loader).
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
