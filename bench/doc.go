// Package bench measures the runtime as a user runs it: the real
// wave-orchestrator binary as the runner in real tmux sessions, watched by
// runtime.Watcher as the launcher watches them. It holds only benchmarks;
// see README.md for how to run them and the figures they produced.
package bench
