package main

import "testing"

// BenchmarkNewRootCmd is what every process of the binary pays before it
// runs a command (each agent's runner included): building the command
// tree with its flags. 6.4 ms and 33k allocations while each config-bound
// flag listed every WAVE_* variable; 0.6 ms and 1.6k since.
func BenchmarkNewRootCmd(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newRootCmd()
	}
}
