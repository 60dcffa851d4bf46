package memfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// LogCheck is what VerifyLog found, as memfs log --verify reports it.
type LogCheck struct {
	Out    string   // the verdicts, a line each
	Notes  []string // warnings and damage, a line each
	Failed string   // the summary of a log (or history) found broken; "" when intact
}

// Print writes lc as memfs log --verify does: the verdicts on w, each
// warning and damage on notes; it returns the failure of a check that
// found a log (or history) broken, an error saying Failed.
func (lc LogCheck) Print(w, notes io.Writer) error {
	fmt.Fprint(w, lc.Out)
	for _, n := range lc.Notes {
		fmt.Fprintln(notes, n)
	}
	if lc.Failed != "" {
		return errors.New(lc.Failed)
	}
	return nil
}

// VerifyLog checks the event log of sys for the reader uid, and, when sys
// is the store itself (not a mount's view of it), every version's bytes
// in history. Through a mount, a reader other than root may be shown a
// filtered view (eventlog.VerifyMasked): what it could check is said,
// and the error says the whole chain was not checked. root sees every
// event, and Verify checks the whole chain.
func VerifyLog(ctx context.Context, sys eventlog.Sys, uid int) (LogCheck, error) {
	var lc LogCheck
	if d, ok := sys.(eventlog.DirSys); ok && uid != 0 {
		mr, err := eventlog.VerifyMasked(ctx, d)
		if err != nil {
			return lc, err
		}
		if mr.Hidden > 0 {
			lc.Out, err = mr.Summary(uid)
			return lc, err
		}
	}
	r, err := eventlog.Verify(ctx, sys)
	if err != nil {
		return lc, err
	}
	for _, w := range r.Warnings {
		lc.Notes = append(lc.Notes, "warning: "+w)
	}
	var out strings.Builder
	var h history.Verified
	if st, ok := sys.(backend.SysStore); ok {
		if h, err = history.New(st).Verify(ctx); err != nil {
			return lc, err
		}
		out.WriteString(h.Summary() + "\n")
	}
	for _, d := range append(r.Damage, h.Damage...) {
		lc.Notes = append(lc.Notes, "damage: "+d)
	}
	if !r.OK || len(h.Damage) > 0 {
		lc.Failed = r.Summary()
	} else {
		out.WriteString(r.Summary() + "\n")
	}
	lc.Out = out.String()
	return lc, nil
}
