package launcher

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// ledger is the lane's completed-wave ledger (for --auto-next).
type ledger struct {
	SchemaVersion  int       `json:"schemaVersion"`
	Kind           string    `json:"kind"`
	CompletedWaves []int     `json:"completedWaves"`
	UpdatedAt      time.Time `json:"lastUpdatedAt"`
}

func readLedger(path string) (ledger, error) {
	var lg ledger
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ledger{SchemaVersion: 1, Kind: "wave-run-state"}, nil
	}
	if err != nil {
		return lg, err
	}
	if err := json.Unmarshal(b, &lg); err != nil {
		return lg, fmt.Errorf("ledger %s is unreadable: %w", path, err)
	}
	return lg, nil
}

func completedWaves(path string) (map[int]bool, error) {
	lg, err := readLedger(path)
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, n := range lg.CompletedWaves {
		out[n] = true
	}
	return out, nil
}

func markCompleted(path string, n int) error {
	lg, err := readLedger(path)
	if err != nil {
		return err
	}
	if !slices.Contains(lg.CompletedWaves, n) {
		lg.CompletedWaves = append(lg.CompletedWaves, n)
		slices.Sort(lg.CompletedWaves)
	}
	lg.SchemaVersion, lg.Kind, lg.UpdatedAt = 1, "wave-run-state", time.Now().UTC()
	return jsonfile.Write(path, lg)
}
