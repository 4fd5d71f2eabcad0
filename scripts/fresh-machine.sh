#!/usr/bin/env bash
# Runs a command as on a fresh machine of this project's kind: Debian's postgresql, redis-server and chromium
# (their binaries, /usr/lib/postgresql, /usr/lib/chromium and the `postgres` system user) are hidden in a private
# mount namespace; nothing outside it changes. Needs root (unshare -m). Example:
#   sudo scripts/fresh-machine.sh npm test
#   sudo scripts/fresh-machine.sh node --import tsx --test test/db/servers.test.ts
set -euo pipefail
if [ -z "${FRESH_MACHINE_DIR:-}" ]; then
  # the folder the namespace mounts its tmpfs on; empty outside it, removed (rmdir: only when empty) at the end
  dir=$(mktemp -d /tmp/fresh-machine-XXXXXX)
  rc=0
  env FRESH_MACHINE_DIR="$dir" unshare -m bash "$0" "$@" || rc=$?
  rmdir "$dir"
  exit $rc
fi
work=$FRESH_MACHINE_DIR
unset FRESH_MACHINE_DIR
mount --make-rprivate /
# everything below lives in a tmpfs of this namespace only: it is gone when the command ends
mount -t tmpfs -o mode=755 tmpfs "$work"
mkdir -p "$work/realbin" "$work/newbin" "$work/empty"
mount --bind /usr/bin "$work/realbin"
for f in "$work"/realbin/* "$work"/realbin/.[!.]*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  n=${f##*/}
  case "$n" in redis-*|chromium*|psql|pg_*|postgres*|initdb|clusterdb|createdb|createuser|dropdb|dropuser|reindexdb|vacuumdb|pgbench) continue;; esac
  if [ -L "$f" ]; then
    t=$(readlink "$f"); case "$t" in /*) ;; *) t="/usr/bin/$t";; esac
    ln -s "$t" "$work/newbin/$n"
  else
    ln -s "$work/realbin/$n" "$work/newbin/$n"
  fi
done
grep -v '^postgres:' /etc/passwd > "$work/passwd"
grep -v '^postgres:' /etc/group > "$work/group"
M="$work/realbin/mount"
$M --bind "$work/newbin" /usr/bin
if [ -d /usr/lib/postgresql ]; then $M --bind "$work/empty" /usr/lib/postgresql; fi
if [ -d /usr/lib/chromium ]; then $M --bind "$work/empty" /usr/lib/chromium; fi
$M --bind "$work/passwd" /etc/passwd
$M --bind "$work/group" /etc/group
"$@"
