//go:build race

package redact

// raceEnabled: the race detector slows the engine tenfold; the costliest
// tests then sample.
const raceEnabled = true
