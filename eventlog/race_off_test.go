//go:build !race

package eventlog

// indexEvents is the size of the log TestIndexLoads builds.
const indexEvents = 1_000_000
