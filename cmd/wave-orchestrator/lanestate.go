package main

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// loadLaneState opens the lane of the global flags and loads its wave
// state through launcher.Status.
func loadLaneState(ctx context.Context, g *globals) (state.Lane, lanes.Layout, error) {
	e, err := openLane(g)
	if err != nil {
		return state.Lane{}, lanes.Layout{}, err
	}
	l, err := launcher.Status(ctx, e.layout)
	return l, e.layout, err
}
