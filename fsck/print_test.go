package fsck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memfs/memfs/fsck"
)

func TestReportPrint(t *testing.T) {
	r := fsck.Report{Findings: []fsck.Finding{
		{Kind: fsck.KindValue, Key: "memory/a.md", Reason: "checksum", Aside: ".memfs-damaged/memory/a.md"},
		{Kind: fsck.KindRecord, Key: "memory/b.md", Reason: "truncated", Err: errors.New("read-only")},
		{Kind: fsck.KindEvents, Reason: "chain broken at 7"},
		{Kind: fsck.KindEvents, Key: "events/000001", Reason: "bad JSON"},
		{Kind: fsck.KindEvents, Reason: "break at 3", Recorded: true, Aside: "never printed"},
	}}
	var b strings.Builder
	r.Print(&b)
	want := "damaged value memory/a.md: checksum\n  moved aside to .memfs-damaged/memory/a.md\n" +
		"damaged record memory/b.md: truncated\n  not moved: read-only\n" +
		"damaged event log: chain broken at 7\n" +
		"damaged event log record events/000001: bad JSON\n" +
		"recorded earlier (kept, nothing to do): break at 3\n"
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
}
