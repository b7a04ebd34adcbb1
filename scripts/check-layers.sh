#!/bin/sh
# check-layers.sh -- the include direction between service/'s folders (docs/architecture.md).
#
#   top (service/*.c, *.h: main, server, app.h) may include anything
#   api/   -> api, core, http, lib
#   http/  -> http, lib                 (the only folder that includes microhttpd.h)
#   core/  -> core, store, lib          (no cJSON parsing; the generated lua/*.lua.h bodies and
#                                        scripts.h, the table of the model's scripts)
#   store/ -> store, lib                (the only folder that includes hiredis)
#   lib/   -> lib
#
# Every `#include "x.h"` of a service file is resolved to the folder that holds x.h; an arrow the
# table does not allow fails, unless it is one of the named exceptions below (today's known
# violations, each to be deleted by the change that removes it). An exception that no longer
# occurs fails too, so the list only shrinks. Run from the repository root; make lint runs it.
# Exit 0 when clean, 1 on a violation (each printed as "file: includes x.h (from -> to)").
set -u
cd "$(dirname "$0")/.."

# "file include.h": known arrows against the rule, with the reason each is there.
EXCEPTIONS='
'
# Why each is there (the change that deletes it): none is left.

# One awk pass: the folder of every header, then each file's includes judged against the table.
files=$(ls service/*.[ch] service/*/*.[ch] service/*/*.def)
# shellcheck disable=SC2086
awk -v exceptions="$EXCEPTIONS" '
function folder(rel) { return index(rel, "/") ? substr(rel, 1, index(rel, "/") - 1) : "top" }
function allowed(from, to) {
    if (from == to || from == "top") return 1
    if (from == "api") return to == "core" || to == "http" || to == "lib"
    if (from == "http") return to == "lib"
    if (from == "core") return to == "store" || to == "lib"
    if (from == "store") return to == "lib"
    return 0
}
function bad(msg) { print msg; fail = 1 }
BEGIN {
    n = split(exceptions, lines, "\n")
    for (i = 1; i <= n; i++) if (lines[i] != "") exc[lines[i]] = 1
}
FNR == 1 {
    rel = substr(FILENAME, length("service/") + 1)
    from = folder(rel)
}
# pass 1 (ARGV lists the files twice): where each header lives
!pass2 && FNR == 1 {
    base = rel; sub(/.*\//, "", base); home[base] = from
}
!pass2 { next }
/^#include <hiredis\// && from != "store" { bad(FILENAME ": includes hiredis (only store/ may)") }
/^#include <microhttpd\.h>/ && from != "http" { bad(FILENAME ": includes microhttpd.h (only http/ may)") }
/cJSON_Parse/ && from == "core" { bad(FILENAME ": parses JSON (core/ takes C values)") }
/^#include "/ {
    inc = $0; sub(/^#include "/, "", inc); sub(/".*/, "", inc)
    if (inc ~ /^lua\/.*\.lua\.h$/ || inc == "scripts.h") {
        if (from != "core") bad(FILENAME ": includes " inc " (scripts belong to core/)")
        next
    }
    if (inc == "version.h") next
    if (!(inc in home)) { bad(FILENAME ": includes " inc ", which is in no service/ folder"); next }
    if (allowed(from, home[inc])) next
    if ((rel " " inc) in exc) { seen[rel " " inc] = 1; next }
    bad(FILENAME ": includes " inc " (" from " -> " home[inc] ", against the layer rule)")
}
END {
    for (e in exc)
        if (!(e in seen))
            bad("scripts/check-layers.sh: exception \"" e "\" no longer occurs: delete it")
    exit fail
}' $files pass2=1 $files ||
    { echo "check-layers: include direction broken (scripts/check-layers.sh)" >&2; exit 1; }
