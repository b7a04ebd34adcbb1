#!/usr/bin/env bash
# test-package.sh BUILD [install|deb|all] -- `make test-package`: what an operator installs.
#   install: `make install DESTDIR=<scratch> PREFIX=/usr`: every file where it belongs, the unit
#            verified by systemd-analyze (with its exposure score), and the installed binary
#            serving the web page at / with no warning (it used to answer 404 without a word);
#   deb:     `make deb`: its contents (dpkg-deb -c), dependencies, maintainer scripts, lintian
#            clean (warnings fail), and the packaged binary serving / as installed.
# Needs no Redis (the checks read / and /healthz). Installs debhelper, dpkg-dev and lintian when
# missing (as root). Ends with one line: "package: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
WHAT=${2:-all}
T=$(mktemp -d "${TMPDIR:-/tmp}/rankd-package.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
passed=0 failed=0
ok() { echo "  ok   $*"; passed=$((passed + 1)); }
bad() { echo "  FAIL $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@" >"$T/out" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/       /' "$T/out" | head -20; fi; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# serves BIN LOG: the binary, started with defaults but the listen address and an absent Redis,
# answers / with the web page and logs no static-files warning
serves() {
    local bin=$1 log=$2 p pid
    p=$(port)
    env -u RANKD_STATIC_DIR "$bin" --listen "127.0.0.1:$p" --redis redis://127.0.0.1:1 >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    for _ in $(seq 50); do curl -fs "127.0.0.1:$p/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
    local page # not `curl | grep -q`: grep leaving early makes curl fail (pipefail)
    page=$(curl -fs "127.0.0.1:$p/") && grep -q '<html' <<<"$page" ||
        { echo "/ did not answer the web page"; return 1; }
    curl -fs -o /dev/null "127.0.0.1:$p/app.js" || { echo "/app.js missing"; return 1; }
    kill "$pid"; wait "$pid" 2>/dev/null
    ! grep -q 'static files' "$log" || { cat "$log"; return 1; }
}

# unit_ok UNIT BIN: systemd-analyze verify is silent on it (ExecStart pointed at BIN, which
# exists here), and its exposure is at most 2.0 ("OK")
unit_ok() {
    sed -e "s|^ExecStart=.*|ExecStart=$(readlink -f "$2")|" \
        -e "s|^ExecStartPre=[^ ]*|ExecStartPre=$(readlink -f "$2")|" "$1" > "$T/rankd.service"
    (cd "$T" && systemd-analyze verify --man=no ./rankd.service) 2>&1 | tee "$T/verify"
    [ ! -s "$T/verify" ] || return 1
    local score
    score=$(cd "$T" && systemd-analyze security --offline=yes ./rankd.service 2>/dev/null |
        sed -n 's/.*Overall exposure level for rankd.service: \([0-9.]*\).*/\1/p')
    echo "exposure $score"
    python3 -c "import sys; sys.exit(0 if 0 < float('${score:-99}') <= 2.0 else 1)"
}

has_files() { # has_files LIST FILE...: every FILE is in LIST (one path a line)
    local list=$1 f rc=0
    shift
    for f in "$@"; do grep -qx "$f" "$list" || { echo "missing: $f"; rc=1; }; done
    return $rc
}

WANT=(usr/bin/rankd usr/share/rankd/web/index.html usr/share/rankd/web/app.js
      usr/share/rankd/web/rankd.js usr/share/rankd/web/format.js usr/share/rankd/web/style.css
      usr/share/rankd/redis.conf
      usr/share/rankd/redis-cache.conf lib/systemd/system/rankd.service etc/default/rankd)

if [ "$WHAT" = install ] || [ "$WHAT" = all ]; then
    echo "make install DESTDIR=... PREFIX=/usr"
    command -v systemd-analyze >/dev/null || scripts/deps.sh systemd || bad "install systemd (systemd-analyze)"
    if make --no-print-directory -s install BUILD="$BUILD" DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1; then
        ok "make install"
    else
        bad "make install"; tail -20 "$T/install.log"
    fi
    (cd "$T/root" && find . -type f | sed 's|^\./||' | sort) > "$T/installed"
    check "installed files" has_files "$T/installed" "${WANT[@]}" usr/share/man/man1/rankd.1
    check "unit and environment file name the installed paths" \
        sh -c "grep -qx 'ExecStart=/usr/bin/rankd' '$T/root/lib/systemd/system/rankd.service' &&
               grep -qx 'EnvironmentFile=-/etc/default/rankd' '$T/root/lib/systemd/system/rankd.service' &&
               grep -qx 'RANKD_STATIC_DIR=/usr/share/rankd/web' '$T/root/etc/default/rankd' &&
               ! grep -Eq '@[A-Z]+@' '$T/root/lib/systemd/system/rankd.service' '$T/root/etc/default/rankd'"
    check "the unit passes systemd-analyze verify, exposure OK" \
        unit_ok "$T/root/lib/systemd/system/rankd.service" "$T/root/usr/bin/rankd"
    check "the unit's hardening" sh -c "for k in DynamicUser=yes ProtectSystem=strict ProtectHome=yes \
        NoNewPrivileges=yes PrivateTmp=yes CapabilityBoundingSet= 'ExecReload=/bin/kill -HUP \$MAINPID'; do
        grep -qx \"\$k\" '$T/root/lib/systemd/system/rankd.service' || { echo \"no \$k\"; exit 1; }; done"
    check "no token in the unit or the environment file" \
        sh -c "! grep -Eq 'RANKD_WRITE_TOKEN=|--write-token[= ]' '$T/root/lib/systemd/system/rankd.service' '$T/root/etc/default/rankd'"
    check "make install prints the commands the unit still needs" \
        sh -c "grep -q 'addgroup --system rankd-tokens' '$T/install.log' &&
               grep -q '/etc/rankd/write-tokens' '$T/install.log' &&
               grep -q 'systemctl daemon-reload && systemctl enable --now rankd' '$T/install.log'"
    check "the unit: Type=notify, --check-config first, wants the Redis it orders after" \
        sh -c "grep -qx 'Type=notify' '$T/root/lib/systemd/system/rankd.service' &&
               grep -qx 'ExecStartPre=/usr/bin/rankd --check-config' '$T/root/lib/systemd/system/rankd.service' &&
               grep -q '^Wants=.*redis-server.service' '$T/root/lib/systemd/system/rankd.service' &&
               grep -q '^After=.*redis-server.service' '$T/root/lib/systemd/system/rankd.service'"
    check "the environment file is 0640 (it may hold a Redis URL)" \
        sh -c "[ \"\$(stat -c %a '$T/root/etc/default/rankd')\" = 640 ]"
    check "the installed rankd serves the web page at /" serves "$T/root/usr/bin/rankd" "$T/installed.log"
fi

if [ "$WHAT" = deb ] || [ "$WHAT" = all ]; then
    echo "make deb"
    missing=()
    for p in debhelper dpkg-dev lintian; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] || scripts/deps.sh "${missing[@]}" || bad "install ${missing[*]}"
    t0=$(date +%s)
    if make --no-print-directory -s deb BUILD="$BUILD" >"$T/deb.log" 2>&1; then
        ok "make deb ($(($(date +%s) - t0)) s)"
    else
        bad "make deb"; tail -30 "$T/deb.log"
    fi
    DEB=$(ls "$BUILD"/deb/rankd_*_*.deb 2>/dev/null | head -1)
    if [ -n "$DEB" ]; then
        dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./||' | grep -v -e '/$' -e '^$' | sort > "$T/deb-files"
        check "dpkg-deb -c: the files" has_files "$T/deb-files" "${WANT[@]}" \
            usr/share/man/man1/rankd.1.gz usr/share/doc/rankd/copyright usr/share/doc/rankd/openapi.yaml
        check "dpkg-deb -c: nothing else under /" sh -c "! grep -Ev '^(usr/(bin|share)/|lib/systemd/system/|etc/default/)' '$T/deb-files'"
        check "Depends: the libraries, adduser" sh -c "dpkg-deb -f '$DEB' Depends | grep -q libmicrohttpd12 &&
            dpkg-deb -f '$DEB' Depends | grep -q libhiredis0.14 && dpkg-deb -f '$DEB' Depends | grep -q libcjson1 &&
            dpkg-deb -f '$DEB' Depends | grep -q libjemalloc2 && dpkg-deb -f '$DEB' Depends | grep -q adduser"
        check "/etc/default/rankd is 0640" sh -c "dpkg-deb -c '$DEB' | grep -q '^-rw-r----- .* ./etc/default/rankd\$'"
        check "/etc/default/rankd is a conffile" sh -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -xOf - ./conffiles | grep -qx /etc/default/rankd"
        check "postinst enables and starts rankd.service, makes the token file" sh -c "
            dpkg-deb --ctrl-tarfile '$DEB' | tar -xOf - ./postinst > '$T/postinst' &&
            grep -q \"deb-systemd-helper enable 'rankd.service'\" '$T/postinst' &&
            grep -q \"deb-systemd-invoke \\\$_dh_action 'rankd.service'\" '$T/postinst' &&
            grep -q 'addgroup --system --quiet rankd-tokens' '$T/postinst' &&
            grep -q '/etc/rankd/write-tokens' '$T/postinst' && sh -n '$T/postinst'"
        check "lintian: no error, no warning" lintian --fail-on error,warning --display-info "$DEB"
        mkdir -p "$T/deb"
        dpkg-deb -x "$DEB" "$T/deb"
        check "the packaged rankd serves the web page at /" serves "$T/deb/usr/bin/rankd" "$T/deb.log2"
        check "the packaged rankd's version" sh -c "'$T/deb/usr/bin/rankd' --version | grep -q '^rankd $(dpkg-deb -f "$DEB" Version) '"
    fi
fi

echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
