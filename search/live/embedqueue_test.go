package live

import (
	"fmt"
	"testing"

	"github.com/memfs/memfs/search"
)

// TestEmbedQueueBatch: batches take every queued job once, a shard at a
// time: a batch leaves at most one shard it began unfinished (the next
// batch goes on with it), and none when it is not full.
func TestEmbedQueueBatch(t *testing.T) {
	var q embedQueue
	const n = 1000
	for i := range n {
		q.put(fmt.Sprintf("memory/k%04d.md", i), &embedJob{})
	}
	q.put("memory/k0000.md", &embedJob{}) // a job replaced: still one
	if q.len() != n {
		t.Fatalf("len %d, want %d", q.len(), n)
	}
	seen := map[string]bool{}
	done := map[int]bool{} // shards finished
	for q.len() > 0 {
		keys, jobs := q.batch(search.EmbedBatch)
		if len(keys) == 0 || len(keys) != len(jobs) || len(keys) > search.EmbedBatch {
			t.Fatalf("batch of %d keys, %d jobs with %d queued", len(keys), len(jobs), q.len())
		}
		shards := map[int]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Fatalf("%s taken twice", k)
			}
			seen[k] = true
			s := search.ShardOf(k)
			if done[s] {
				t.Fatalf("%s: shard %d was finished before", k, s)
			}
			shards[s] = true
			q.remove(k)
		}
		open := 0 // shards the batch began and did not finish
		for s := range shards {
			if q.pending(s) {
				open++
			} else {
				done[s] = true
			}
		}
		if open > 1 || open == 1 && len(keys) < search.EmbedBatch {
			t.Fatalf("a batch of %d over %d shards left %d unfinished", len(keys), len(shards), open)
		}
	}
	if len(seen) != n {
		t.Errorf("%d keys taken, want %d", len(seen), n)
	}
}
