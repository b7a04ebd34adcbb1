# lua-prelude.awk -- print a Lua script of service/lua/ with each line "--@prelude NAME" replaced
# by service/lua/prelude_NAME.lua, itself expanded the same way ("--@prelude" alone is
# prelude_read.lua, the read scripts' shared opening). With -v gen=DIR, a prelude the build
# generates (DIR/prelude_NAME.lua, e.g. prelude_defaults.lua from board.h) is found there. Used by
# the Makefile to build each script's C array; a prelude that does not exist stops the build.
function expand(file,    line, name, rc, made) {
    while ((rc = (getline line < file)) > 0) {
        if (line ~ /^--@prelude( [a-z_]+)?$/) {
            name = line == "--@prelude" ? "read" : substr(line, 12)
            made = gen "/prelude_" name ".lua"
            if (gen != "" && (getline line < made) >= 0) {
                close(made)
                expand(made)
            } else {
                expand("service/lua/prelude_" name ".lua")
            }
        } else {
            print line
        }
    }
    if (rc < 0) {
        print "lua-prelude.awk: cannot read " file > "/dev/stderr"
        exit 1
    }
    close(file)
}
BEGIN { expand(ARGV[1]); exit }
