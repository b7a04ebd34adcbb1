# lua-prelude.awk -- print a Lua script of service/lua/ with each line "--@prelude NAME" replaced
# by service/lua/prelude_NAME.lua, itself expanded the same way ("--@prelude" alone is
# prelude_read.lua, the read scripts' shared opening). With -v gen=DIR, a prelude the build
# generates (DIR/prelude_NAME.lua, e.g. prelude_defaults.lua from board.h) is found there. Used by
# the Makefile to build each script's C array; a prelude that does not exist stops the build.
# A prelude's top-level "local function NAME" that nothing else of the script names (comment
# lines aside) is left out, until none is: Redis runs a script's whole body on every call, and
# each function it defines is a closure made (and collected) each time, ~650 instructions of
# Redis' own thread. A function is its line through the next line "end" at column 0 (or that
# one line when it ends in " end"): the preludes' style.
function expand(file, prelude,    line, name, rc, made) {
    while ((rc = (getline line < file)) > 0) {
        if (line ~ /^--@prelude( [a-z_]+)?$/) {
            name = line == "--@prelude" ? "read" : substr(line, 12)
            made = gen "/prelude_" name ".lua"
            if (gen != "" && (getline line < made) >= 0) {
                close(made)
                expand(made, 1)
            } else {
                expand("service/lua/prelude_" name ".lua", 1)
            }
        } else {
            L[++n] = line
            P[n] = prelude
        }
    }
    if (rc < 0) {
        print "lua-prelude.awk: cannot read " file > "/dev/stderr"
        exit 1
    }
    close(file)
}
# 1 when s names w as a whole word
function names(s, w,    at, before, after) {
    while ((at = index(s, w)) > 0) {
        before = at > 1 ? substr(s, at - 1, 1) : ""
        after = substr(s, at + length(w), 1)
        if (before !~ /[A-Za-z0-9_.:]/ && after !~ /[A-Za-z0-9_]/)
            return 1
        s = substr(s, at + length(w))
    }
    return 0
}
# leave out the preludes' functions nothing names, until none is left
function trim(    changed, i, j, k, name, used) {
    do {
        changed = 0
        for (i = 1; i <= n; i++) {
            if (dead[i] || !P[i] || L[i] !~ /^local function [A-Za-z_][A-Za-z0-9_]*\(/)
                continue
            name = substr(L[i], 16)
            sub(/\(.*/, "", name)
            j = i
            if (L[i] !~ / end$/)
                for (j = i + 1; j <= n && L[j] != "end"; j++)
                    ;
            if (j > n)
                continue
            used = 0
            for (k = 1; k <= n && !used; k++)
                if (!dead[k] && (k < i || k > j) && L[k] !~ /^[[:space:]]*--/ && names(L[k], name))
                    used = 1
            if (!used) {
                for (k = i; k <= j; k++)
                    dead[k] = 1
                changed = 1
            }
        }
    } while (changed)
}
BEGIN {
    expand(ARGV[1], 0)
    trim()
    for (i = 1; i <= n; i++)
        if (!dead[i])
            print L[i]
    exit
}
