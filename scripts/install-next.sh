#!/usr/bin/env sh
# install-next.sh DESTDIR SYSCONFDIR SYSTEMD_UNIT_DIR -- after `make install`: what the systemd unit
# still needs before it starts (the rankd-tokens group, a token file it can read), as the exact
# commands for this install's paths, or nothing when it has them. A staged install (DESTDIR)
# prints them for the machine it will be copied to.
set -eu
DESTDIR=$1 SYSCONFDIR=$2 UNITDIR=$3
TOKENS=$SYSCONFDIR/rankd/write-tokens
todo=
getent group rankd-tokens >/dev/null 2>&1 || [ -n "$DESTDIR" ] || todo=1
[ -e "$DESTDIR$TOKENS" ] || todo=1
case "$UNITDIR" in
/etc/systemd/system | /lib/systemd/system | /usr/lib/systemd/system | /usr/local/lib/systemd/system) link= ;;
*) link="systemctl link $UNITDIR/rankd.service" ;;
esac
[ -n "$todo" ] || [ -n "$link" ] || [ -n "$DESTDIR" ] || exit 0
echo "rankd is installed. Before the service starts, as root:"
if ! getent group rankd-tokens >/dev/null 2>&1 || [ -n "$DESTDIR" ]; then
    echo "  addgroup --system rankd-tokens"
fi
if [ ! -e "$DESTDIR$TOKENS" ] || [ -n "$DESTDIR" ]; then
    echo "  install -d -m 0755 $SYSCONFDIR/rankd"
    echo "  install -m 0640 -g rankd-tokens /dev/null $TOKENS"
    printf '%s\n' "  od -An -tx1 -N16 /dev/urandom | tr -d ' \\n' >> $TOKENS && echo >> $TOKENS"
fi
[ -z "$link" ] || echo "  $link"
echo "  systemctl daemon-reload && systemctl enable --now rankd"
echo "  systemctl status rankd  # its ExecStartPre, rankd --check-config, names a bad setting"
