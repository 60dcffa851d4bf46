package live

import "github.com/memfs/memfs/search"

// embedQueue holds the documents waiting for their vectors, by vector
// shard, so that the embed worker takes them a shard at a time and the
// worker's saves hold back a shard while a backlog of it is queued
// (Service.holdShard). A batch of 64 keys taken at random touches about
// 40 of the 64 shards: through a slow model, whose batches each end
// within a save delay of the last, every save rewrote most of the vector
// records, each whole, so that a bulk embedding wrote its vectors about
// 40 times over. Taken a shard at a time, and saved when done, each
// shard is written about once. Service.mu guards it.
type embedQueue struct {
	by   [search.Shards]map[string]*embedJob // nil until a job of the shard comes
	n    int                                 // jobs queued
	next int                                 // the shard the next batch starts at
}

func (q *embedQueue) get(key string) *embedJob { return q.by[search.ShardOf(key)][key] }

func (q *embedQueue) put(key string, j *embedJob) {
	s := search.ShardOf(key)
	if q.by[s] == nil {
		q.by[s] = make(map[string]*embedJob)
	}
	if _, ok := q.by[s][key]; !ok {
		q.n++
	}
	q.by[s][key] = j
}

func (q *embedQueue) remove(key string) {
	s := search.ShardOf(key)
	if _, ok := q.by[s][key]; ok {
		delete(q.by[s], key)
		q.n--
	}
}

func (q *embedQueue) len() int { return q.n }

// pending reports whether a job of shard s is queued.
func (q *embedQueue) pending(s int) bool { return len(q.by[s]) > 0 }

// batch returns up to n queued jobs, the rest of one shard before the
// next, from the shard the last batch ended in. They stay queued until
// their vectors are in.
func (q *embedQueue) batch(n int) ([]string, []*embedJob) {
	var keys []string
	var jobs []*embedJob
	start := q.next
	for i := 0; i < search.Shards && len(keys) < n; i++ {
		s := (start + i) % search.Shards
		for k, j := range q.by[s] {
			if len(keys) == n {
				break
			}
			keys, jobs = append(keys, k), append(jobs, j)
		}
		if len(q.by[s]) > 0 {
			q.next = s
		}
	}
	return keys, jobs
}
