# lua-defaults.awk -- print the Lua prelude "defaults" from service/lib/names.h and
# service/core/board.h (the files given, in order): each "#define BOARD_<NAME>_DEFAULT <value>"
# becomes a local holding the text the settings hash stores for it (a Lua string: the scripts
# compare it with hash values), each "#define BOARD_<NAME>_MAX <n>" a local number. The Makefile writes it to $(BUILD)/gen/lua/prelude_defaults.lua, which a
# script includes with the line "--@prelude defaults" (scripts/lua-prelude.awk); test-unit checks
# its values against the C constants. Other defines, or a value that is neither a decimal integer
# nor a plain string, stop the build rather than reach a script half-translated.
BEGIN {
    print "-- prelude_defaults.lua -- generated from service/lib/names.h and service/core/board.h by"
    print "-- scripts/lua-defaults.awk; do not edit. Settings defaults as the hash stores them"
    print "-- (strings) and limits (numbers)."
}
$1 == "#define" && $2 ~ /^BOARD_[A-Z0-9_]+_(DEFAULT|MAX)$/ {
    name = $2
    value = $3
    if (value ~ /^"[a-z0-9_]*"$/) {
        text = value
    } else if (value ~ /^-?[0-9]+$/) {
        text = value
    } else {
        print "lua-defaults.awk: cannot translate " name " " value > "/dev/stderr"
        exit 1
    }
    if (name ~ /_DEFAULT$/) {
        if (text !~ /^"/)
            text = "'" text "'"
        else
            text = "'" substr(text, 2, length(text) - 2) "'"
    } else if (text ~ /^"/) {
        print "lua-defaults.awk: a limit must be a number: " name > "/dev/stderr"
        exit 1
    }
    print "local " name " = " text
    n++
}
END {
    if (n == 0) {
        print "lua-defaults.awk: no BOARD_*_DEFAULT or BOARD_*_MAX in the input" > "/dev/stderr"
        exit 1
    }
}
