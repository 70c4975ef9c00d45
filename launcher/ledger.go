package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// ledger is the lane's completed-wave ledger (for --auto-next).
type ledger struct {
	SchemaVersion  int       `json:"schemaVersion"`
	Kind           string    `json:"kind"`
	CompletedWaves []int     `json:"completedWaves"`
	UpdatedAt      time.Time `json:"lastUpdatedAt"`
}

// errCorruptLedger marks a ledger file that exists but does not decode.
var errCorruptLedger = errors.New("ledger is unreadable")

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
		return lg, fmt.Errorf("%w: %s: %w", errCorruptLedger, path, err)
	}
	return lg, nil
}

// loadLedger reads the ledger; a corrupt one is moved aside to
// ledger.json.corrupt-<time> and rebuilt from the event log (a wave
// with a completed wave run is completed), so one bad write does not make
// every later launch fail. recovered says what happened, for the user.
func loadLedger(l lanes.Layout, now time.Time) (lg ledger, recovered string, err error) {
	path := l.LedgerPath()
	lg, err = readLedger(path)
	if !errors.Is(err, errCorruptLedger) {
		return lg, "", err
	}
	backup := fmt.Sprintf("%s.corrupt-%s", path, now.UTC().Format("20060102T150405.000000000Z"))
	if rerr := os.Rename(path, backup); rerr != nil {
		return lg, "", fmt.Errorf("%w (moving it aside: %w)", err, rerr)
	}
	evs, _, rerr := state.ReadEvents(l.EventsPath())
	if rerr != nil {
		return lg, "", fmt.Errorf("%w (rebuilding from events: %w)", err, rerr)
	}
	lg = ledger{SchemaVersion: 1, Kind: "wave-run-state", UpdatedAt: now.UTC()}
	for _, ev := range evs {
		if ev.EntityType == state.EntityWaveRun && ev.Action == state.WaveCompleted && !slices.Contains(lg.CompletedWaves, ev.Wave) {
			lg.CompletedWaves = append(lg.CompletedWaves, ev.Wave)
		}
	}
	slices.Sort(lg.CompletedWaves)
	if werr := jsonfile.Write(path, lg); werr != nil {
		return lg, "", werr
	}
	return lg, fmt.Sprintf("%v; kept it as %s and rebuilt it from the event log (completed waves %v)", err, backup, lg.CompletedWaves), nil
}

// ledger loads the lane's ledger, reporting a recovery from corruption.
func (l *Launcher) ledger() (ledger, error) {
	lg, recovered, err := loadLedger(l.opt.Layout, l.now())
	if recovered != "" {
		l.log.Warn("ledger recovered", "detail", recovered)
		l.printf("warning: %s", recovered)
	}
	return lg, err
}

func (l *Launcher) completedWaves() (map[int]bool, error) {
	lg, err := l.ledger()
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, n := range lg.CompletedWaves {
		out[n] = true
	}
	return out, nil
}

func (l *Launcher) markCompleted(n int) error {
	lg, err := l.ledger()
	if err != nil {
		return err
	}
	if !slices.Contains(lg.CompletedWaves, n) {
		lg.CompletedWaves = append(lg.CompletedWaves, n)
		slices.Sort(lg.CompletedWaves)
	}
	lg.SchemaVersion, lg.Kind, lg.UpdatedAt = 1, "wave-run-state", l.now().UTC()
	return jsonfile.Write(l.opt.Layout.LedgerPath(), lg)
}
