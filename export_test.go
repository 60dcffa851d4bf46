package memfs

import "context"

// ContextFile is what .memfs/context.md, .memfs/context/NAME and their
// manifests show (FS.contextFile, the name grammar's door to ContextPack
// and ContextPackAt).
func ContextFile(f *FS, ctx context.Context, name string) ([]byte, error) {
	return f.contextFile(ctx, name)
}
