#!/bin/sh
# Entrypoint of the rostersync image: runs `rostersync "$@"` with the container's conventions.
#
# - The state lives on the /state volume (ROSTERSYNC_STATE_DIR): `--state-dir` is added to the
#   commands that use the state, unless the command names one itself, or the state is in
#   PostgreSQL (ROSTERSYNC_STATE_URL): then no /state volume is needed at all.
# - Reports go to the /reports volume: ROSTERSYNC_REPORT_DIR replaces every pipeline's report_dir,
#   so each pipeline keeps its run folders, run history and retention there.
# - SERVICE_API_KEY_FILE (a mounted secret) is read into SERVICE_API_KEY, the Docker `_FILE`
#   convention; the key is never printed.
# - A volume the container user cannot write is refused here, with the fix, before any call is
#   made to the service (otherwise the run would fail after planning, or lose its journal).
# - `exec` replaces the shell, so rostersync itself receives SIGTERM and stops gracefully (calls
#   in flight finish, journal and report written, exit 130).
set -eu

ROSTERSYNC_BIN="${ROSTERSYNC_BIN:-rostersync}"
STATE_DIR="${ROSTERSYNC_STATE_DIR:-/state}"
REPORT_DIR="${ROSTERSYNC_REPORT_DIR:-/reports}"

fail() {
  printf 'error: %s\nhint: %s\n' "$1" "$2" >&2
  exit 1
}

if [ -n "${SERVICE_API_KEY_FILE:-}" ] && [ -z "${SERVICE_API_KEY:-}" ]; then
  [ -r "$SERVICE_API_KEY_FILE" ] || fail "SERVICE_API_KEY_FILE names $SERVICE_API_KEY_FILE, which cannot be read" \
    "mount the secret file there, readable by uid $(id -u)."
  SERVICE_API_KEY="$(tr -d '\r\n' < "$SERVICE_API_KEY_FILE")"
  export SERVICE_API_KEY
fi

# No arguments: the CLI's own help.
[ "$#" -gt 0 ] || exec "$ROSTERSYNC_BIN" --help

command_name="$1"
has_flag() {
  flag="$1"
  shift
  for arg in "$@"; do
    case "$arg" in "$flag" | "$flag="*) return 0 ;; esac
  done
  return 1
}
writable_dir() {
  dir="$1"
  what="$2"
  mkdir -p "$dir" 2>/dev/null || true
  [ -d "$dir" ] && [ -w "$dir" ] || fail "the $what directory $dir is not writable by uid $(id -u)" \
    "mount a volume there owned by uid $(id -u) (e.g. \`chown $(id -u) DIR\` on the host, or a named volume)."
}

extra_state=""
case "$command_name" in
  sync | plan | apply | state | unlock)
    if [ -z "${ROSTERSYNC_STATE_URL:-}" ] && ! has_flag --state-dir "$@"; then
      writable_dir "$STATE_DIR" state
      extra_state="$STATE_DIR"
    fi
    ;;
esac
case "$command_name" in
  sync | plan | apply | demo)
    has_flag --report-dir "$@" || writable_dir "$REPORT_DIR" report
    ;;
esac
export ROSTERSYNC_REPORT_DIR="$REPORT_DIR"

if [ -n "$extra_state" ]; then
  exec "$ROSTERSYNC_BIN" "$@" --state-dir "$extra_state"
fi
exec "$ROSTERSYNC_BIN" "$@"
