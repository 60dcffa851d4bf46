package history_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// Redact blanks one version's bytes and keeps its record marked; bytes
// another version names stay, and Redact names that version; redacting
// that one too removes them; a chunked value loses only the chunks no
// other version holds; Redact again changes nothing; Verify finds no damage.
func TestRedact(t *testing.T) {
	eachStore(t, func(t *testing.T, s backend.SysStore) {
		f := newGCFixture(t, s)
		ctx := t.Context()
		now := time.Now()
		secret := []byte("password=hunter2")
		v1 := f.write("memory/a.md", secret, now)
		f.write("memory/a.md", []byte("clean"), now)
		v3 := f.write("memory/b.md", secret, now)
		base := []byte(strings.Repeat("a long log line of the agent's notes\n", 3000))
		v4 := f.write("memory/log.md", base, now)
		v5 := f.write("memory/log.md", append(bytes.Clone(base), "token=abc123 a secret appended\n"...), now)

		r, err := f.h.Redact(ctx, "memory/a.md", v1.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Version.Redacted || !r.Version.Addr.IsZero() || r.Removed != 0 || fmt.Sprint(r.Sharing) != fmt.Sprintf("[memory/b.md@%d]", v3.Seq) {
			t.Errorf("Redact of a value another version shares = %+v; want it marked, nothing removed, b named", r)
		}
		if got, want := r.Report(), fmt.Sprintf("memory/a.md@%d redacted (0 objects removed)\n  memory/b.md@%d holds the same bytes: redact it too\n", v1.Seq, v3.Seq); got != want {
			t.Errorf("Report = %q, want %q", got, want)
		}
		vs, err := f.h.Versions(ctx, "memory/a.md")
		if err != nil || len(vs) != 2 || !vs[0].Redacted || vs[0].Size != v1.Size || vs[1].Redacted {
			t.Errorf("Versions after Redact: %+v, %v; want the first marked, its record kept", vs, err)
		}
		if got, err := f.h.Get(ctx, v1.Addr); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("the bytes b still names: %v", err)
		}
		if r, err := f.h.Redact(ctx, "memory/b.md", v3.Seq); err != nil || r.Removed != 1 || len(r.Sharing) != 0 {
			t.Errorf("Redact of the last version naming it = %+v, %v; want its object removed", r, err)
		} else if got, want := r.Report(), fmt.Sprintf("memory/b.md@%d redacted (1 objects removed)\n", v3.Seq); got != want {
			t.Errorf("Report = %q, want %q", got, want)
		}
		if _, err := f.h.Get(ctx, v1.Addr); !errors.Is(err, backend.ErrKeyNotFound) {
			t.Errorf("the secret after both are redacted: %v, want gone", err)
		}
		r, err = f.h.Redact(ctx, "memory/log.md", v5.Seq)
		if err != nil || r.Removed == 0 || fmt.Sprint(r.Sharing) != fmt.Sprintf("[memory/log.md@%d]", v4.Seq) {
			t.Errorf("Redact of an appended version = %+v, %v; want its own chunks removed, the version before named", r, err)
		}
		if got, err := f.h.Get(ctx, v4.Addr); err != nil || !bytes.Equal(got, base) {
			t.Errorf("the version before the append after the redaction: %v", err)
		}
		if r, err := f.h.Redact(ctx, "memory/log.md", v5.Seq); err != nil || r.Removed != 0 || !r.Version.Redacted {
			t.Errorf("Redact again = %+v, %v; want nothing more", r, err)
		}
		if v, err := f.h.Verify(ctx); err != nil || len(v.Damage) != 0 {
			t.Errorf("Verify after the redactions: %v, %v", v.Damage, err)
		}
		if _, err := f.h.Redact(ctx, "memory/a.md", 999); !errors.Is(err, backend.ErrKeyNotFound) {
			t.Errorf("Redact of a version that is not: %v, want not found", err)
		}
	})
}
