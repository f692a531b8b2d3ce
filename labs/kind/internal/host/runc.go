package host

// RuncWrapper is a runc wrapper for hosts without CAP_SYS_RESOURCE: it
// removes CAP_SYS_RESOURCE from the container's (create/run --bundle) or
// the exec'd process's (exec --process) capability sets and raises a
// negative oomScoreAdj to 0, then runs the real runc. dockerd uses it as
// its default runtime, and so does the containerd inside the kind nodes.
// It needs sh and jq.
const RuncWrapper = `#!/bin/sh
# svclab-runc: runc for a host without CAP_SYS_RESOURCE (written by svclab).
set -e
fix() { # fix FILE JQ-PATH-OF-THE-PROCESS-OBJECT
	[ -f "$1" ] || return 0
	jq "$2 |= (if . == null then . else
	  (if .capabilities then .capabilities |= with_entries(.value |= (if type == \"array\" then map(select(. != \"CAP_SYS_RESOURCE\")) else . end)) else . end)
	  | (if (.oomScoreAdj // 0) < 0 then .oomScoreAdj = 0 else . end) end)" "$1" > "$1.svclab-runc"
	mv "$1.svclab-runc" "$1"
}
prev=
for arg in "$@"; do
	case "$prev" in
	--bundle|-b) fix "$arg/config.json" .process ;;
	--process|-p) fix "$arg" . ;;
	esac
	case "$arg" in
	--bundle=*) fix "${arg#--bundle=}/config.json" .process ;;
	--process=*) fix "${arg#--process=}" . ;;
	esac
	prev=$arg
done
for runc in /usr/sbin/runc /usr/bin/runc /usr/local/sbin/runc /usr/local/bin/runc; do
	[ -x "$runc" ] && exec "$runc" "$@"
done
echo "svclab-runc: no runc found" >&2
exit 127
`
