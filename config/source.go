package config

import "strings"

// LaneKeySource says where lane's value of key (e.g.
// runtime.timeoutMinutes) came from, for a record a user reads: "flag
// --x" or "env WAVE_X" when one set it, else "file:line key" where the
// file sets it (the lane's own section first), else "" (the default).
func (c *Config) LaneKeySource(lane, key string) string {
	for _, k := range []string{"lanes." + lane + "." + key, key} {
		if at := c.KeyLine(k); at != "" && at != c.File {
			if strings.HasPrefix(at, "flag ") || strings.HasPrefix(at, "env ") {
				return at
			}
			return at + " " + k
		}
	}
	return ""
}
