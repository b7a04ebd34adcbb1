#!/usr/bin/env bash
# docs-options.sh -- the option lists printed from service/lib/config.c's table, in the files that
# carry them: dist/rankd.1's OPTIONS (rankd --help=man) and docs/operating.md's options table
# (rankd --help=markdown), each between its BEGIN OPTIONS and END OPTIONS marker lines.
#   scripts/docs-options.sh RANKD write   rewrite both files (make docs)
#   scripts/docs-options.sh RANKD check   fail, with the diff, when either differs (make lint)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1 mode=${2:-check}
[ -x "$bin" ] || { echo "docs-options: $bin is not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# splice FILE FORMAT: FILE with the lines between its markers replaced by `rankd --help=FORMAT`
splice() {
    local file=$1 format=$2 out=$tmp/$(basename "$1")
    grep -q 'BEGIN OPTIONS' "$file" && grep -q 'END OPTIONS' "$file" ||
        { echo "docs-options: $file has no BEGIN OPTIONS / END OPTIONS markers" >&2; return 1; }
    if [ "$format" = markdown ]; then # blank lines around the table: a block of its own
        { echo; "$bin" --help="$format"; echo; } > "$tmp/$format"
    else
        "$bin" --help="$format" > "$tmp/$format"
    fi
    awk -v gen="$tmp/$format" '
        /BEGIN OPTIONS/ { print; while ((getline line < gen) > 0) print line; skip = 1; next }
        /END OPTIONS/   { skip = 0 }
        !skip           { print }' "$file" > "$out"
    if [ "$mode" = write ]; then
        cmp -s "$out" "$file" || { cp "$out" "$file"; echo "docs-options: wrote $file"; }
    elif ! diff -u "$file" "$out"; then
        echo "docs-options: $file does not list the options of service/lib/config.c: run make docs" >&2
        status=1
    fi
}
splice dist/rankd.1 man
splice docs/operating.md markdown
exit $status
