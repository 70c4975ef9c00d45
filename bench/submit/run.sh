#!/usr/bin/env bash
# Measures how long `submit` takes to return: with the lane idle (it starts
# the watcher in the launcher tmux session) and while a run is active (it
# only queues). Scratch repo and TMUX_TMPDIR; nothing touches the user's
# tmux. Target: every submit returns in <= 1 s.
#
#   bench/submit/run.sh [n=10]
set -euo pipefail

n=${1:-10}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/wbsub.XXXXXX)
export TMUX_TMPDIR=$work/t
mkdir -p "$TMUX_TMPDIR"
unset TMUX TMUX_PANE
bin=$work/wave-orchestrator
repo=$work/repo
cleanup() {
	"$bin" --repo-root "$repo" stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$here" && go build -o "$bin" ./cmd/wave-orchestrator)
git init -q "$repo"
(cd "$repo" && "$bin" init >/dev/null && git add -A && git -c user.email=b@b -c user.name=b commit -qm init)

ms() { echo $(( ($2 - $1) / 1000000 )); }
idle=() queued=()
for _ in $(seq "$n"); do
	t0=$(date +%s%N)
	id=$("$bin" --repo-root "$repo" submit --json --no-dashboard | sed 's/.*"runId":"\([^"]*\)".*/\1/')
	t1=$(date +%s%N)
	idle+=("$(ms "$t0" "$t1")")
	t0=$(date +%s%N)
	id2=$("$bin" --repo-root "$repo" submit --json --no-dashboard | sed 's/.*"runId":"\([^"]*\)".*/\1/')
	t1=$(date +%s%N)
	queued+=("$(ms "$t0" "$t1")")
	"$bin" --repo-root "$repo" wait --run-id "$id" >/dev/null
	"$bin" --repo-root "$repo" wait --run-id "$id2" >/dev/null
done
report() {
	local name=$1; shift
	sorted=$(printf '%s\n' "$@" | sort -n)
	echo "$name: n=$# p50=$(echo "$sorted" | sed -n "$(( ($# + 1) / 2 ))p") ms max=$(echo "$sorted" | tail -1) ms"
}
report "submit, lane idle (starts the watcher)" "${idle[@]}"
report "submit, run active (queues)" "${queued[@]}"
