// Package refparity holds the opt-in check that the reference npm package's
// own example waves, starter waves and wave.config.json read the same in
// this tool as in the reference. The package is fetched with npm at run
// time, never stored here; the check runs only with the refparity build
// tag (needs npm and node):
//
//	go test -tags refparity ./internal/refparity/
//
// WAVE_REF_PACKAGE=<unpacked package dir> skips the fetch.
package refparity
