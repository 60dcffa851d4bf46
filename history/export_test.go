package history

// For the external tests.
var (
	VersionName = versionName
	KeyHash     = keyHash
)
