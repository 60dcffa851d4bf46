//go:build race

package main

// raceDetector: the race detector makes memfs's redaction (gitleaks's
// rules) about twelve times slower; see TestNoSecretOnDiskAfterSplitAppendsAndKill9.
const raceDetector = true
