#!/usr/bin/env bash
# Wall time of one backlog run over N local issues (one file each, no two
# sharing a surface) worked by the built-in simulated worker, W at a time,
# against a bare origin in a temp dir; prints the wall time and the run's
# per-issue figures from its events.
# Usage: bench/backlog20/run.sh <our binary> [issues=20] [width=5]
# SANDBOX=off|on sets backlog.sandbox.mode (default: the config's, auto).
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
if [ -n "${SANDBOX:-}" ]; then
  sed -i "s/^backlog:\$/backlog:\n  sandbox:\n    mode: $SANDBOX/" wave.config.yaml
fi
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
# Per-issue figures from the run's events and its workers' runtime records:
# start = claimed → agent started (worktree, payload, runner; the claim's
# own push comes just before), exit seen = agent finished → the
# supervisor's worker_finished, merge = merge_started → merged, end = the
# last merge → run_finished (final PR, claims, cleanup).
run=$(ls -d .wave/lanes/*/backlog/*/ | tail -1)
for r in "$run"runs/*/runtime.json; do jq -c '{run: .runId, startedAt, finishedAt}' "$r"; done >"$d/records.jsonl"
jq -rs --slurpfile recs "$d/records.jsonl" '
  def ts: capture("^(?<s>[^.Z]+)(?<f>\\.[0-9]+)?Z$") | ((.s + "Z") | fromdateiso8601) + ("0" + (.f // ".0") | tonumber);
  def ms: . * 1000 | round;
  def p50: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def first(k; n): [.[] | select(.kind == k and .issue == n)][0].at;
  . as $evs
  | ($recs | map({key: .run, value: .}) | from_entries) as $rec
  | [$evs[] | select(.kind == "claimed") | .issue] as $ns
  | [$ns[] as $n | $rec["i\($n)-a1"] as $r | select($r.startedAt != null)
      | (($r.startedAt | ts) - ($evs | first("claimed"; $n) | ts)) | ms] as $start
  | [$ns[] as $n | select(($evs | first("worker_started"; $n)) != null)
      | (($evs | first("worker_started"; $n) | ts) - ($evs | first("claimed"; $n) | ts)) | ms] as $prep
  | [$ns[] as $n | $rec["i\($n)-a1"] as $r | select($r.finishedAt != null)
      | (($evs | first("worker_finished"; $n) | ts) - ($r.finishedAt | ts)) | ms] as $seen
  | [$ns[] as $n | select(($evs | first("merged"; $n)) != null)
      | (($evs | first("merged"; $n) | ts) - ($evs | first("merge_started"; $n) | ts)) | ms] as $merge
  | ([$evs[] | select(.kind == "merged") | .at | ts] | max) as $last
  | ([$evs[] | select(.kind == "run_finished") | .at | ts] | max) as $fin
  | ([$evs[] | select(.kind == "claim_renewed") | .at | ts] | max) as $renewed
  | "per issue: start p50 \($start | p50) ms (max \($start | max); worktree and payload p50 \($prep | p50)), exit seen p50 \($seen | p50) ms (max \($seen | max)), merge p50 \($merge | p50) ms; end \(if $last and $fin then ($fin - $last) | ms else null end) ms (claims renewed at +\(if $last and $renewed then ($renewed - $last) | ms else null end), then cleanup); source calls/issue \(([$evs[] | .calls // 0] | add) / ($ns | length) * 10 | round / 10)"
' "$run/events.jsonl"
for sock in "$TMUX_TMPDIR"/tmux-*/*; do
  if [ -S "$sock" ]; then tmux -S "$sock" kill-server 2>/dev/null || true; fi
done
