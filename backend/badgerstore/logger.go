package badgerstore

import (
	"fmt"
	"log/slog"
	"strings"
)

// slogLogger is a badger.Logger that writes to slog. Badger's info lines
// (replay progress, compaction, "Lifetime L0 stalled") are routine for a
// daemon that opens and closes the store, so they go to debug; its warnings
// and errors keep their level.
type slogLogger struct{ l *slog.Logger }

func line(format string, args ...any) string {
	// Badger's format strings end in "\n"; slog adds its own.
	return strings.TrimSpace(fmt.Sprintf(format, args...))
}

func (s slogLogger) Errorf(f string, a ...any)   { s.l.Error(line(f, a...)) }
func (s slogLogger) Warningf(f string, a ...any) { s.l.Warn(line(f, a...)) }
func (s slogLogger) Infof(f string, a ...any)    { s.l.Debug(line(f, a...)) }
func (s slogLogger) Debugf(f string, a ...any)   { s.l.Debug(line(f, a...)) }
