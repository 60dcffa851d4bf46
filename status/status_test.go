package status

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	since := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		s    Status
		want []string // lines the text must hold, as README and tests grep them
	}{
		{"zero", Status{}, []string{"keys_indexed: 0\n", "last_flush: never\nlast_flush_result: none\n"}},
		{"mount", Status{
			KeysIndexed: 3, KeysLoaded: 2, Dirty: 1, PendingDeletes: 4,
			LastFlush: time.Date(2026, 11, 28, 12, 1, 2, 3, time.UTC), LastFlushResult: "error: save memory/a b.md: EIO", Flushes: 7,
			Damaged: []string{"memory/rec.md", "a b/c.md"}, DamagedHidden: 2,
			Store: "dir:/s t", Mountpoint: "/m n", PID: 42,
			Memory: &Memory{Held: 3 << 20, Dirty: 1 << 20, Budget: 256 << 20, Dropped: 5},
			Search: "keyword only (no embedder)",
			Peers: &Peers{List: []Peer{
				{Agent: "planner", Host: "h", PID: 42, Mount: "/m n", Since: since},
				{Agent: "evil\nagent@x", Host: "elsewhere", PID: 43, Mount: "/mnt/x", Since: since},
				{Host: "h2", PID: 44, Mount: "/y", Since: since},
			}},
			StaleIndexes: 2,
			Unlisted:     []string{"context.md", "search/QUERY"},
		}, []string{
			"stale_indexes: 2\n",
			"store: dir:/s t\nmountpoint: /m n\npid: 42\n",
			"damaged: memory/rec.md\n",
			"damaged_hidden: 2 (keys you may not see; memfs fsck on the store lists them)\n",
			"memory: 3 MiB of file contents held (1 MiB unflushed), budget 256 MiB; 5 values dropped under it (each read again at its next open)\n",
			"search: keyword only (no embedder)\n",
			"peers: 3\n",
			`peer: planner@h pid 42 "/m n" since 2026-11-28T12:00:00Z` + "\n",
			`peer: "evil\nagent@x"@elsewhere pid 43 /mnt/x since `,
			"peer: -@h2 pid 44 /y since ",
			"unlisted: context.md search/QUERY\n",
		}},
		{"unknown peers", Status{Peers: &Peers{Unknown: true}, Memory: &Memory{}}, []string{
			"peers: unknown (the store did not answer)\n", "budget none;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.s.MarshalText()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("text lacks %q:\n%s", w, b)
				}
			}
			got, err := Parse(b)
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, b)
			}
			want := tt.s
			if want.LastFlush.IsZero() {
				want.LastFlushResult = "none"
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(MarshalText(s)) =\n%+v\nwant\n%+v", got, want)
			}
			j, err := json.Marshal(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			var back Status
			if err := json.Unmarshal(j, &back); err != nil || !reflect.DeepEqual(back, tt.s) {
				t.Errorf("JSON round trip = %+v, %v; want %+v", back, err, tt.s)
			}
		})
	}
}

func TestParseRefusesMalformedValues(t *testing.T) {
	for _, text := range []string{"pid: x\n", "keys_indexed: -\n", "last_flush: yesterday\n", "peer: a@b pid x /m since now\n", "stale_indexes: many\n"} {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("Parse(%q) succeeded", text)
		}
	}
	if s, err := Parse([]byte("a future line: 1\npid: 7\n")); err != nil || s.PID != 7 {
		t.Errorf("Parse with an unknown line = %+v, %v; want pid 7", s, err)
	}
}
