package main

import (
	"strings"
	"testing"
)

// A marker an agent signals ends up in reports and the dashboard: a
// detail that would move the cursor, reverse the line or hide text is
// refused, not written.
func TestSignalRefusesADetailThatWouldReorderOrHideText(t *testing.T) {
	k := signalKinds[0] // proof
	for _, detail := range []string{"ok\x1b[2K", "ok\u202eevil", "ok\u200bx", "bad\xff"} {
		vals := map[string]*string{"detail": &detail}
		for _, key := range k.keys {
			v := map[string]string{"completion": "contract", "durability": "none", "proof": "unit", "state": "met"}[key]
			vals[key] = &v
		}
		line, err := markerLine(k, vals)
		if err == nil || !strings.Contains(err.Error(), "--detail") {
			t.Errorf("detail %q: marker %q, err %v; want it refused naming --detail", detail, line, err)
		}
	}
	plain := "all unit tests pass"
	vals := map[string]*string{"detail": &plain}
	for _, key := range k.keys {
		v := map[string]string{"completion": "contract", "durability": "none", "proof": "unit", "state": "met"}[key]
		vals[key] = &v
	}
	if _, err := markerLine(k, vals); err != nil {
		t.Errorf("a plain detail is refused: %v", err)
	}
}
