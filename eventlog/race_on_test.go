//go:build race

package eventlog

// indexEvents is smaller under the race detector, which makes building the
// log about ten times slower; 100 chunks still make the binary search real.
const indexEvents = 100_000
