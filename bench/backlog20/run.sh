#!/usr/bin/env bash
# Wall time of one backlog run over N local issues (one file each, no two
# sharing a surface) worked by the built-in simulated worker, W at a time,
# against a bare origin in a temp dir; prints the wall time and the run's
# per-issue figures from its events.
# Usage: bench/backlog20/run.sh <our binary> [issues=20] [width=5]
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") n=${2:-20} width=${3:-5}
d=$(mktemp -d /tmp/bl20.XXXX)
unset TMUX TMUX_PANE
export TMUX_TMPDIR="$d/tmux"; mkdir -p "$TMUX_TMPDIR"
git init -q --bare -b main "$d/origin.git"
git clone -q "$d/origin.git" "$d/repo" 2>/dev/null
cd "$d/repo"
"$bin" --repo-root . init --backlog-demo >/dev/null
rm -f docs/backlog/*.md
for i in $(seq 1 "$n"); do
  printf -- '---\ntitle: Part %d\n---\nAdd part %d.\n\nFiles: src/p%d/**\n' "$i" "$i" "$i" >"docs/backlog/$i-part-$i.md"
done
git add -A
git -c user.name=bench -c user.email=bench@example.com commit -qm init
git push -q origin HEAD:main
s=$(date +%s.%N)
code=0
"$bin" --repo-root . backlog run --issues "$(seq -s, 1 "$n")" --width "$width" --no-dashboard >"$d/run.log" 2>&1 || code=$?
e=$(date +%s.%N)
printf 'backlog %d issues, width %d: %.2fs wall, exit %d (log %s)\n' "$n" "$width" "$(echo "$e - $s" | bc)" "$code" "$d/run.log"
for sock in "$TMUX_TMPDIR"/tmux-*/*; do [ -S "$sock" ] && tmux -S "$sock" kill-server 2>/dev/null; done; true
