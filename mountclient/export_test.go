package mountclient

// StatusReads is how many times a .memfs/status was read to check a
// mount (Open, Root).
func StatusReads() int64 { return statusReads.Load() }
