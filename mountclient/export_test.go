package mountclient

// StatusReads is how many times a .memfs/status was read to check a
// mount (Open, Root).
func StatusReads() int64 { return statusReads.Load() }

// AfterRootOpen sets a hook Root calls between opening the mountpoint and
// checking it (a test's seam for the path changing in between).
func AfterRootOpen(f func()) { afterRootOpen = f }
