#!/usr/bin/env bash
# make-deb.sh VERSION OUTDIR -- `make deb`: the Debian package of this tree, built by debhelper in
# a copy of the tree under OUTDIR (so nothing is written beside the checkout), as
# OUTDIR/rankd_VERSION_ARCH.deb. REVISION (environment) is the git revision to build in.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$1
OUT=$2
changelog=$(dpkg-parsechangelog -S Version)
[ "$changelog" = "$VERSION" ] ||
    { echo "make deb: debian/changelog says $changelog, the Makefile's VERSION $VERSION" >&2; exit 1; }
SRC=$OUT/rankd-$VERSION
rm -rf "$SRC"
mkdir -p "$SRC"
# the tracked files and the new ones not ignored, as they are in the work tree
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
        [ -e "$f" ] && printf '%s\0' "$f"
    done | xargs -0 cp -a --parents -t "$SRC"
else
    tar --exclude=./build --exclude=./.run --exclude='*/node_modules' -cf - . | tar -xf - -C "$SRC"
fi
rm -f "$OUT"/rankd_"$VERSION"_*.deb "$OUT"/rankd_"$VERSION"_*.buildinfo "$OUT"/rankd_"$VERSION"_*.changes
(cd "$SRC" && REVISION=${REVISION:-unknown} dpkg-buildpackage -us -uc -b -j2 >../build.log 2>&1) ||
    { tail -40 "$OUT/build.log" >&2; echo "make deb: dpkg-buildpackage failed ($OUT/build.log)" >&2; exit 1; }
ls "$OUT"/rankd_"$VERSION"_*.deb
