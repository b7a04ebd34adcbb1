#!/usr/bin/env bash
# check-errors.sh -- rankd's error table, service/lib/errors.def (one line per error:
# ERR(ID, status, "code", "message")), held against its two lists for users: the ErrorCode enum
# of schema/openapi.yaml (and the status its description table gives each code) and the table of
# docs/api.md's "Errors" section (and its status column). Every code must be in all three, both
# ways, with the same status; and every id of the table must be used by some code of service/.
# Quiet when they agree; otherwise names each code that is missing or differs where, and exits 1.
# Runs from `make lint`; alone: scripts/check-errors.sh. ERRORS_DEF, OPENAPI and GUIDE name other
# files (its own test does that).
set -euo pipefail
cd "$(dirname "$0")/.."

table=${ERRORS_DEF:-service/lib/errors.def}
openapi=${OPENAPI:-schema/openapi.yaml}
guide=${GUIDE:-docs/api.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The table: "ID status code" per ERR line.
sed -nE 's/^ERR\(([A-Z0-9_]+), ([0-9]{3}), "([a-z_]+)", .*/\1 \2 \3/p' "$table" > "$tmp/rows"
awk '{ print $3 }' "$tmp/rows" | sort -u > "$tmp/sent"
awk '{ print $3, $2 }' "$tmp/rows" | sort -u > "$tmp/sent_status"

# openapi's ErrorCode enum: the "- code" lines after "enum:" under "ErrorCode:"; and its
# description's table rows "| `code` | status | when |".
awk '/^    ErrorCode:/ { in_schema = 1; next }
     in_schema && /^    [A-Za-z]/ { exit }
     in_schema && /^      enum:/ { in_enum = 1; next }
     in_enum && /^        - / { print $2; next }
     in_enum { exit }' "$openapi" | sort -u > "$tmp/openapi"
awk '/^    ErrorCode:/ { on = 1; next } on && /^    [A-Za-z]/ { exit }
     on && /^        \| `[a-z_]+` \|/ { print }' "$openapi" |
    awk -F'|' '{ c = $2; gsub(/[ `]/, "", c); print c "|" $3 }' > "$tmp/openapi_status"

# docs/api.md: every `code` in the rows of the "## Errors" table, with the row's status column.
awk '/^## Errors/ { on = 1; next } on && /^## / { exit }
     on && /^\| [0-9]/ { print }' "$guide" |
    awk -F'|' '{ n = split($3, w, "`"); for (i = 2; i <= n; i += 2) print w[i] "|" $2 }' \
        > "$tmp/guide_status"
cut -d'|' -f1 "$tmp/guide_status" | sort -u > "$tmp/guide"

[ -s "$tmp/sent" ] && [ -s "$tmp/openapi" ] && [ -s "$tmp/guide" ] || {
    echo "check-errors: could not read the codes ($table $(wc -l < "$tmp/sent"), openapi" \
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
missing sent openapi "in $table, missing from $openapi's ErrorCode"
missing openapi sent "in $openapi's ErrorCode, missing from $table"
missing sent guide "in $table, missing from the Errors table of $guide"
missing guide sent "in the Errors table of $guide, missing from $table"

# The status of each (code, status) of the table must be the one the docs give the code.
status_differs() { # FILE WHERE: rows "code|status text" of FILE whose code lacks a table status
    local codes
    codes=$(awk -F'|' 'NR == FNR { split($0, r, " "); want[r[1]] = want[r[1]] " " r[2]; next }
        ($1 in want) { has[$1] = has[$1] " " $2 }
        END { for (c in want) if (c in has) { n = split(want[c], s, " ")
                for (i = 1; i <= n; i++) if (index(has[c], s[i]) == 0) print c " (" s[i] ")" } }' \
        "$tmp/sent_status" "$1" | sort | tr '\n' ' ')
    if [ -n "$codes" ]; then
        echo "check-errors: status in $table not given the code in $2: $codes" >&2
        bad=1
    fi
}
status_differs "$tmp/openapi_status" "$openapi's ErrorCode table"
status_differs "$tmp/guide_status" "the Errors table of $guide"

# Every id is used somewhere in service/ (an error no code sends is a stale row).
if [ "$table" = service/lib/errors.def ]; then
    used=$(find service -name '*.c' ! -name errors.c -print0 | xargs -0 cat |
        grep -oE '\bERR_[A-Z0-9_]+' | sort -u)
    unused=$(awk '{ print "ERR_" $1 }' "$tmp/rows" | sort -u | comm -23 - <(printf '%s\n' "$used") |
        tr '\n' ' ')
    if [ -n "$unused" ]; then
        echo "check-errors: in $table, used by no code of service/: $unused" >&2
        bad=1
    fi
fi
exit $bad
