#!/usr/bin/env bash
# check-errors.sh -- the error codes rankd sends, held against their two lists for users: the
# ErrorCode enum of schema/openapi.yaml and the table of docs/api.md's "Errors" section.
# Quiet when they agree; otherwise names each code that is missing where, and exits 1.
#
# A code the service sends is a snake_case string literal in one of the places codes are made:
# http_reply_error(rp, status, "code", ...), entry_fail(err, status, "code", ...), a ROW(...) of
# http.c's errno table, `code = "..."`, a reply written by hand ("{\"error\":{\"code\":\"...\""),
# and the accept-time refusals of loop.c ("too_many_connections...").
# Runs from `make lint`; alone: scripts/check-errors.sh
set -euo pipefail
cd "$(dirname "$0")/.."

openapi=schema/openapi.yaml
guide=docs/api.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The codes the service sends.
find service -name '*.c' -o -name '*.h' | sort | xargs perl -0777 -ne '
    while (/\b(?:http_reply_error|entry_fail)\s*\([^,]+,\s*[^,]+,\s*"([a-z_]+)"/g) { print "$1\n" }
    while (/\bROW\s*\([^"]*?"([a-z_]+)"/g) { print "$1\n" }
    while (/\bcode\s*=\s*"([a-z_]+)"/g) { print "$1\n" }
    while (/\\"code\\":\\"([a-z_]+)\\"/g) { print "$1\n" }
    while (/"(too_many_connections[a-z_]*)"/g) { print "$1\n" }
' | sort -u > "$tmp/sent"

# openapi's ErrorCode enum: the "- code" lines after "enum:" under "ErrorCode:".
awk '/^    ErrorCode:/ { in_schema = 1; next }
     in_schema && /^    [A-Za-z]/ { exit }
     in_schema && /^      enum:/ { in_enum = 1; next }
     in_enum && /^        - / { print $2; next }
     in_enum { exit }' "$openapi" | sort -u > "$tmp/openapi"

# docs/api.md: every `code` in the status column rows of the "## Errors" table.
awk '/^## Errors/ { on = 1; next } on && /^## / { exit }
     on && /^\| [0-9]/ { print }' "$guide" |
    awk -F'|' '{ print $3 }' | grep -oE '`[a-z_]+`' | tr -d '`' | sort -u > "$tmp/guide"

[ -s "$tmp/sent" ] && [ -s "$tmp/openapi" ] && [ -s "$tmp/guide" ] || {
    echo "check-errors: could not read the codes (sent $(wc -l < "$tmp/sent"), openapi" \
        "$(wc -l < "$tmp/openapi"), $guide $(wc -l < "$tmp/guide"))" >&2
    exit 1
}

bad=0
missing() { # missing FROM IN WHERE: the codes of FROM that IN lacks
    local codes
    codes=$(comm -23 "$tmp/$1" "$tmp/$2" | tr '\n' ' ')
    if [ -n "$codes" ]; then
        echo "check-errors: $3: $codes" >&2
        bad=1
    fi
}
missing sent openapi "sent by the service, missing from $openapi's ErrorCode"
missing openapi guide "in $openapi's ErrorCode, missing from the Errors table of $guide"
missing guide openapi "in the Errors table of $guide, missing from $openapi's ErrorCode"
missing openapi sent "in $openapi's ErrorCode, sent by no code of service/"
exit $bad
