package lanes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Waves are the waves with a directory under the lane's state (WaveDir),
// in order; none when the lane has run nothing yet.
func (l Layout) Waves() ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(l.StateDir, "waves"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lane %s: %w", l.Lane, err)
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && n >= 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
