package embed

import (
	"errors"
	"log/slog"
)

// OpenOptional is Open, except for the default table ("" or "default")
// missing or damaged: that is a warning on log, and (nil, nil), keyword
// search only, so that one damaged file never stops a mount. Any other
// failure, or a model named explicitly and missing, is Open's error.
func OpenOptional(spec string, o Options, log *slog.Logger) (Embedder, error) {
	e, err := Open(spec, o)
	if spec != "" && spec != "default" {
		return e, err
	}
	switch {
	case errors.Is(err, ErrNotInstalled):
		log.Warn("semantic search is off: the default embedder is not installed; search is keyword-only (memfs models install puts it in place)")
		return nil, nil
	case errors.Is(err, ErrCorrupt):
		log.Warn("semantic search is off: the default embedder's table is damaged; search is keyword-only (memfs models install puts it back)", "err", err)
		return nil, nil
	}
	return e, err
}
