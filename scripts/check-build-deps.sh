#!/usr/bin/env bash
# check-build-deps.sh [BIN] -- every library BIN (build/rankd) links has its development package in
# debian/control's Build-Depends: a clean build chroot installs only those, so a library linked
# here but missing there fails the package's build. The libraries are the binary's NEEDED entries
# (readelf); each one's development package is the one that owns its unversioned .so link (dpkg -S),
# the link the linker used. libc's own (libc, libm, ...) come with build-essential. Quiet when clean.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/rankd}
[ -x "$BIN" ] || { echo "check-build-deps: no binary at $BIN (run make)" >&2; exit 2; }
deps=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' debian/control | sed '1s/^Build-Depends://' |
    grep -v '^[A-Z][A-Za-z-]*:' | tr ',' '\n' | sed 's/([^)]*)//g; s/\[[^]]*\]//g; s/[[:space:]]//g' |
    grep -v '^$' || true)
bad=0
for so in $(readelf -d "$BIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    case "$so" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) continue ;;
    esac
    base=${so%%.so*}
    owner=$(dpkg -S "/usr/lib/*/$base.so" 2>/dev/null | head -1 | cut -d: -f1 || true)
    [ -n "$owner" ] || owner=$(dpkg -S "/usr/lib/$base.so" 2>/dev/null | head -1 | cut -d: -f1 || true)
    if [ -z "$owner" ]; then
        echo "check-build-deps: $BIN links $so, and no installed package has $base.so" >&2
        bad=1
    elif ! grep -qx "$owner" <<<"$deps"; then
        echo "check-build-deps: $BIN links $so ($owner), which debian/control's Build-Depends lacks" >&2
        bad=1
    fi
done
exit "$bad"
