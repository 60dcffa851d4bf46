package eventlog

import "context"

// RecordDamage records what Open found damaged (Damage) as the first
// Append would, without events of its own: the damaged records copied
// under events.damaged/, one OpBreak event each, the chunks taken out of
// the log removed. It does nothing when there is nothing to record. It
// returns the breaks it recorded (where each copy went: Break.SavedTo).
func (l *Log) RecordDamage(ctx context.Context) ([]Break, error) {
	found := l.Damage()
	if len(found) == 0 {
		return nil, nil
	}
	if _, err := l.append(ctx, nil); err != nil {
		return nil, err
	}
	return found, nil
}
