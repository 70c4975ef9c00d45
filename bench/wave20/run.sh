#!/usr/bin/env bash
# Wall time of one wave of 20 `local` implementation agents plus A8, A9, A0
# (full closure), ours vs the reference, back to back on the same repo.
# Usage: bench/wave20/run.sh <our binary> <repo prepared by prepare.py> [rounds]
set -euo pipefail
bin=$1 repo=$2 rounds=${3:-3}
cd "$repo"
unset TMUX TMUX_PANE
export TMUX_TMPDIR=$(mktemp -d /tmp/w20.XXXX)
reset() { git clean -fdxq -e node_modules -e .wave/projects -e .wave/install-state.json; git checkout -q .; }
for i in $(seq 1 "$rounds"); do
  reset
  s=$(date +%s.%N)
  npx wave launch --lane main --no-dashboard --no-telemetry --no-context7 --agent-launch-stagger-ms 0 </dev/null >/tmp/w20-ref.log 2>&1
  e=$(date +%s.%N)
  ref=$(echo "$e - $s" | bc)
  reset
  s=$(date +%s.%N)
  "$bin" --repo-root . launch --lane main --no-dashboard >/tmp/w20-ours.log 2>&1
  e=$(date +%s.%N)
  ours=$(echo "$e - $s" | bc)
  printf 'round %d: reference %.2fs ours %.2fs ratio %.1fx\n' "$i" "$ref" "$ours" "$(echo "$ref / $ours" | bc -l)"
done
