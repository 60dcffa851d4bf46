// Package expire is when files expire, and the queue of those that will.
//
// A file expires at the time its attribute user.memfs.expires says (RFC
// 3339), else at its last change plus the duration its attribute
// user.memfs.ttl says (Go's time.ParseDuration: "90s", "1h30m", "24h"),
// else at its last change plus its route's default time to live, if the
// route has one (memfs mount --route scratch/=mem:?ttl=1h). Its last
// change is the later of its modification and its change time: a write,
// and also a rename or a copy that keeps an old modification time (mv,
// cp -p), renew a file a time to live keeps; an expires time stays.
//
// A Queue holds the keys that will expire, soonest first, so that a mount
// looks at the next one only, never at every key on every tick.
package expire

import (
	"container/heap"
	"strings"
	"time"

	"github.com/memfs/memfs/meta"
)

// Deadline returns when a file last changed at changed (Since), with the
// attributes x, expires; ok false for never. def is its route's default
// time to live, 0 for none. A malformed attribute is an error (and the
// file does not expire by it; a mount refuses to set one).
func Deadline(changed time.Time, x map[string][]byte, def time.Duration) (at time.Time, ok bool, err error) {
	if v, set := x[meta.Expires]; set {
		at, err := meta.ParseExpires(string(v))
		return at, err == nil, err
	}
	if v, set := x[meta.TTL]; set {
		d, err := meta.ParseTTL(string(v))
		if err != nil {
			return time.Time{}, false, err
		}
		return changed.Add(d), true, nil
	}
	if def > 0 {
		return changed.Add(def), true, nil
	}
	return time.Time{}, false, nil
}

// Since is when a file last changed, for Deadline: the later of its
// modification time and its change time.
func Since(mtime, ctime time.Time) time.Time {
	if ctime.After(mtime) {
		return ctime
	}
	return mtime
}

// A Queue is a set of keys, each with its deadline, soonest first. The
// zero Queue is empty and ready. It is not safe for concurrent use.
type Queue struct {
	h  items
	at map[string]*item
}

type item struct {
	key string
	at  time.Time
	i   int // in h
}

type items []*item

func (h items) Len() int           { return len(h) }
func (h items) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h items) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *items) Push(x any) {
	it := x.(*item)
	it.i = len(*h)
	*h = append(*h, it)
}
func (h *items) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

// Set puts key in the queue at deadline at, or moves it there.
func (q *Queue) Set(key string, at time.Time) {
	if q.at == nil {
		q.at = make(map[string]*item)
	}
	if it, ok := q.at[key]; ok {
		it.at = at
		heap.Fix(&q.h, it.i)
		return
	}
	it := &item{key: key, at: at}
	q.at[key] = it
	heap.Push(&q.h, it)
}

// Remove takes key out of the queue; a key not in it is ignored.
func (q *Queue) Remove(key string) {
	if it, ok := q.at[key]; ok {
		heap.Remove(&q.h, it.i)
		delete(q.at, key)
	}
}

// RemovePrefix takes every key under the directory dir ("memory/notes")
// out of the queue, and dir itself: a directory removed or renamed.
func (q *Queue) RemovePrefix(dir string) {
	under := dir + "/"
	for k := range q.at {
		if k == dir || strings.HasPrefix(k, under) {
			q.Remove(k)
		}
	}
}

// Next returns the soonest deadline; ok false when the queue is empty.
func (q *Queue) Next() (at time.Time, ok bool) {
	if len(q.h) == 0 {
		return time.Time{}, false
	}
	return q.h[0].at, true
}

// Due takes out of the queue and returns every key whose deadline is not
// after now, soonest first.
func (q *Queue) Due(now time.Time) []string {
	var due []string
	for len(q.h) > 0 && !q.h[0].at.After(now) {
		it := heap.Pop(&q.h).(*item)
		delete(q.at, it.key)
		due = append(due, it.key)
	}
	return due
}

// Len is the number of keys in the queue.
func (q *Queue) Len() int { return len(q.h) }
