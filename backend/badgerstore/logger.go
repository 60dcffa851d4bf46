package badgerstore

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// slogLogger routes badger's log lines to slog: warnings and errors as
// such, badger's chatty info lines at debug level.
type slogLogger struct{ l *slog.Logger }

func newLogger(l *slog.Logger) badger.Logger {
	if l == nil {
		return nil // badger then logs nothing
	}
	return slogLogger{l.With("component", "badger")}
}

func msg(format string, args ...any) string {
	return strings.TrimSpace(fmt.Sprintf(format, args...))
}

func (s slogLogger) Errorf(f string, a ...any)   { s.l.Error(msg(f, a...)) }
func (s slogLogger) Warningf(f string, a ...any) { s.l.Warn(msg(f, a...)) }
func (s slogLogger) Infof(f string, a ...any)    { s.l.Debug(msg(f, a...)) }
func (s slogLogger) Debugf(f string, a ...any)   { s.l.Debug(msg(f, a...)) }
