# lib.sh -- shell helpers shared by bench/run.sh, bench/compare.sh, bench/delete-only.sh and
# bench/soak.sh (sourced, not run).
#
# Needs before sourcing: T_START (epoch s), BENCH_TAG (log prefix), BIN (where tools are built).
# cpu_mark / cpu_foreign call ours_us, which each script defines: the CPU (µs) of its own
# servers and of its shell's finished children, so that the rest of the busy CPU is "foreign".

say() { printf '[%s %3ds] %s\n' "$BENCH_TAG" $(( $(date +%s) - T_START )) "$*" >&2; }
die() { say "error: $*"; exit 1; }
now_ms() { date +%s%3N; }

build_tool() { # build_tool NAME LIBS...: cc -O2 bench/NAME.c into $BIN/NAME when stale
    local name=$1
    shift
    mkdir -p "$BIN"
    if [ ! -x "$BIN/$name" ] || [ "bench/$name.c" -nt "$BIN/$name" ]; then
        cc -O2 -g -Wall -Wextra -std=gnu11 -o "$BIN/$name" "bench/$name.c" "$@" ||
            die "could not build bench/$name.c"
    fi
}

HZ=$(getconf CLK_TCK)
NCPU=$(nproc)

proc_cpu_us() { # utime+stime of a pid in microseconds (0 when it is gone)
    [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
    awk -v hz="$HZ" '{printf "%.0f\n", ($14+$15)*1000000/hz}' "/proc/$1/stat"
}
children_cpu_us() { # this shell's waited-for children (fields 16, 17: cutime, cstime)
    awk -v hz="$HZ" '{printf "%.0f\n", ($16+$17)*1000000/hz}' "/proc/$$/stat"
}
busy_us() { awk -v hz="$HZ" '/^cpu / {printf "%.0f\n", ($2+$3+$4+$7+$8+$9)*1000000/hz}' /proc/stat; }
cpu_mark() { M_BUSY=$(busy_us); M_OURS=$(ours_us); M_T=$(now_ms); }
cpu_foreign() { # FOREIGN: % of all cores used by other processes since cpu_mark
    local d_busy d_ours d_t
    d_busy=$(( $(busy_us) - M_BUSY ))
    d_ours=$(( $(ours_us) - M_OURS ))
    d_t=$(( $(now_ms) - M_T ))
    [ "$d_t" -gt 0 ] || d_t=1
    FOREIGN=$(( (d_busy - d_ours) / (d_t * 10 * NCPU) ))
    [ "$FOREIGN" -ge 0 ] || FOREIGN=0
}
# bench_priority: this shell and everything it starts from now on run ahead of the machine's other
# work: nice -19 for the process, and -19 for its scheduler autogroup too, because with
# kernel.sched_autogroup_enabled=1 Linux first shares the CPU between sessions and a process's nice
# counts only inside its own session. On a shared machine another process's burst would otherwise
# take CPU from a paced run near capacity and charge the backlog to every later request. Needs
# root (or CAP_SYS_NICE); BENCH_PRIORITY=0 turns it off. Sets PRIORITY (what took effect, for the
# result); bench_boost PID gives the same to a daemon started in its own session;
# bench_priority_restore puts this session's autogroup back at exit.
bench_priority() {
    PRIORITY="normal"
    AG_NICE_WAS=
    [ "${BENCH_PRIORITY:-1}" = 1 ] || { PRIORITY="normal (BENCH_PRIORITY=0)"; return 0; }
    renice -n -19 -p $$ > /dev/null 2>&1 || { PRIORITY="normal (renice not permitted)"; return 0; }
    PRIORITY="nice -19"
    if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2> /dev/null)" = 1 ] &&
        [ -w "/proc/$$/autogroup" ]; then
        AG_NICE_WAS=$(sed -n 's/.* nice //p' "/proc/$$/autogroup")
        if echo -19 > "/proc/$$/autogroup" 2> /dev/null; then
            PRIORITY="nice -19 (process and scheduler autogroup)"
        else
            AG_NICE_WAS=
        fi
    fi
}
bench_boost() { # bench_boost PID: the same for a process started in a session of its own (a
    # daemonized redis-server has its own autogroup, which this session's nice does not cover)
    [ "${PRIORITY:-normal}" != "${PRIORITY#nice}" ] || return 0
    renice -n -19 -p "$1" > /dev/null 2>&1 || true
    [ -w "/proc/$1/autogroup" ] && echo -19 > "/proc/$1/autogroup" 2> /dev/null
    return 0
}
bench_priority_restore() {
    [ -n "${AG_NICE_WAS:-}" ] && echo "$AG_NICE_WAS" > "/proc/$$/autogroup" 2> /dev/null
    AG_NICE_WAS=
}
quiet_within() { # quiet_within SECONDS: 0 once others use under 10% for a second, else 1
    local end=$(( $(date +%s) + $1 ))
    while [ "$(date +%s)" -lt "$end" ]; do
        cpu_mark
        sleep 1
        cpu_foreign
        [ "$FOREIGN" -lt 10 ] && return 0
    done
    return 1
}

# nginx_start DIR PORT: nginx (worker_processes auto, keep-alive, no access log, sendfile, the
# files' descriptors cached: its own recommended settings for static files) on 127.0.0.1:PORT
# serving DIR/www/page.json for every path and DIR/www/heavy.json under /heavy; pid in
# DIR/nginx.pid. 0 once it runs, else 1 (e.g. the port was taken: try another).
nginx_start() {
    local dir=$1 port=$2
    NGINX=$(command -v nginx || echo /usr/sbin/nginx) # found now: deps may just have installed it
    mkdir -p "$dir/www" "$dir/tmp"
    chmod 711 "$dir" && chmod 755 "$dir/www" # workers (www-data when started as root) read www/
    cat > "$dir/nginx.conf" <<EOF
worker_processes auto;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
daemon on;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    sendfile on;
    tcp_nopush on;
    open_file_cache max=16 inactive=600s;
    open_file_cache_valid 600s;
    keepalive_requests 10000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$port;
        root $dir/www;
        location /heavy { default_type application/json; try_files /heavy.json =404; }
        location / { default_type application/json; try_files /page.json =404; }
    }
}
EOF
    rm -f "$dir/nginx.pid"
    "$NGINX" -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" 2>/dev/null || return 1
    for _ in $(seq 1 100); do [ -s "$dir/nginx.pid" ] && return 0; sleep 0.05; done
    pkill -f "nginx: master process $NGINX -c $dir/nginx.conf" 2>/dev/null || true # late: stop it
    return 1
}
