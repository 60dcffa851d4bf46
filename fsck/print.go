package fsck

import (
	"context"
	"fmt"
	"io"

	"github.com/memfs/memfs/backend"
)

// Run is memfs fsck of st, the store name: it checks it (Check, a repair
// with opts.Repair), prints every finding on w (Print) and, unless the
// check failed, its Verdict.
func Run(ctx context.Context, st backend.SysStore, w io.Writer, name string, opts Options) error {
	r, err := Check(ctx, st, opts)
	r.Print(w)
	if err != nil {
		return err
	}
	return r.Verdict(w, name, opts.Repair)
}

// Print writes one line per finding on w (never a value), and where a
// repair put it.
func (r Report) Print(w io.Writer) {
	for _, f := range r.Findings {
		switch {
		case f.Recorded:
			fmt.Fprintf(w, "recorded earlier (kept, nothing to do): %s\n", f.Reason)
			continue
		case f.Kind == KindEvents && f.Key == "":
			fmt.Fprintf(w, "damaged event log: %s\n", f.Reason)
		case f.Kind == KindEvents:
			fmt.Fprintf(w, "damaged event log record %s: %s\n", f.Key, f.Reason)
		default:
			fmt.Fprintf(w, "damaged %s %s: %s\n", f.Kind, f.Key, f.Reason)
		}
		switch {
		case f.Err != nil:
			fmt.Fprintf(w, "  not moved: %v\n", f.Err)
		case f.Aside != "":
			fmt.Fprintf(w, "  moved aside to %s\n", f.Aside)
		}
	}
}

// Verdict is the last word of a check of the store name: an error when
// damage is left (saying what memfs fsck --repair does, unless this was
// the repair), else a line on w saying none is.
func (r Report) Verdict(w io.Writer, name string, repair bool) error {
	if n := r.Damaged(); n > 0 {
		hint := " (memfs fsck --repair moves damaged records aside; nothing is deleted)"
		if repair {
			hint = ""
		}
		return fmt.Errorf("fsck: %s: %d damaged (%d values read)%s", name, n, r.Keys, hint)
	}
	fmt.Fprintf(w, "%s: no damage left (%d values read, event log: %d events in %d chunks)\n", name, r.Keys, r.Events.Events, r.Events.Chunks)
	return nil
}
