package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// maxTellsPerSample bounds the OSDs asked for their counters in one
// sample: on a big cluster they are asked in turn, a few samples apart.
const maxTellsPerSample = 32

// tellTimeout is how long a sample waits for the OSDs' answers: a stopped
// or hung OSD must not stall the watch.
const tellTimeout = 10 * time.Second

// queueCounter is an OSD's op_before_dequeue_op_lat as last read.
type queueCounter struct {
	count int64
	sum   float64 // seconds
}

// queueReader reads the queue latency of the OSDs of the watched pools:
// it finds them once in the PG map, then asks up to maxTellsPerSample of
// them a sample, in turn, for their counters.
type queueReader struct {
	osds []int // the pools' OSDs, those holding the most PGs first; nil: not found yet
	// partial says a watched pool did not exist yet when osds were
	// found (RGW makes a zone's data pool with its first object): they
	// are found again each sample until it does.
	partial bool
	next    int // index in osds of the next OSD to ask
	last    map[int]queueCounter
	pending sync.WaitGroup // tells still running, waited for before the connection closes
	timeout time.Duration
	// busy are the OSDs whose last tell has not returned: a hung OSD
	// is not asked again, and costs one sample its timeout, not each.
	mu   sync.Mutex
	busy map[int]bool
}

// readQueues adds the queue latency of the OSDs asked to smp.
func (s *sampler) readQueues(smp *Sample) {
	q := &s.queues
	if q.osds == nil || q.partial {
		if osds, partial := s.poolOSDs(smp); osds != nil {
			q.osds, q.partial = osds, partial
		}
		if q.osds == nil {
			return
		}
	}
	ask := q.osds
	if len(ask) > maxTellsPerSample {
		ask = nil
		for i := 0; i < maxTellsPerSample; i++ {
			ask = append(ask, q.osds[(q.next+i)%len(q.osds)])
		}
		q.next = (q.next + maxTellsPerSample) % len(q.osds)
	}
	answers := s.tellAll(smp, ask)
	for _, id := range ask {
		a, ok := answers[id]
		if !ok {
			continue
		}
		c, err := parseQueueCounter(a)
		if err != nil {
			s.note(smp, "perf dump", fmt.Sprintf("osd.%d: %v", id, err))
			continue
		}
		was, seen := q.last[id]
		q.last[id] = c
		if seen && c.count > was.count {
			ms := (c.sum - was.sum) / float64(c.count-was.count) * 1000
			smp.OSDQueue = append(smp.OSDQueue, OSDQueue{ID: id, Ms: math.Round(ms*1000) / 1000})
		}
	}
	sort.Slice(smp.OSDQueue, func(i, j int) bool { return smp.OSDQueue[i].ID < smp.OSDQueue[j].ID })
}

// tellAll asks the OSDs for their queue latency counter at once and
// returns the answers that came within the timeout, by OSD.
func (s *sampler) tellAll(smp *Sample, osds []int) map[int][]byte {
	cmd := []byte(`{"prefix":"perf dump","logger":"osd","counter":"op_before_dequeue_op_lat","format":"json"}`)
	type reply struct {
		id  int
		b   []byte
		err error
	}
	// Buffered: a tell that answers after the timeout must not block.
	replies := make(chan reply, len(osds))
	q := &s.queues
	asked := 0
	for _, id := range osds {
		q.mu.Lock()
		busy := q.busy[id]
		q.busy[id] = true
		q.mu.Unlock()
		if busy {
			continue
		}
		asked++
		smp.Sent["osd"]++
		q.pending.Add(1)
		go func(id int) {
			defer q.pending.Done()
			b, err := s.cmds.Tell(id, cmd)
			q.mu.Lock()
			delete(q.busy, id)
			q.mu.Unlock()
			replies <- reply{id, b, err}
		}(id)
	}
	answers := map[int][]byte{}
	timeout := time.After(q.timeout)
	for range asked {
		select {
		case r := <-replies:
			if r.err != nil {
				s.note(smp, "perf dump", fmt.Sprintf("osd.%d: %v", r.id, r.err))
				continue
			}
			answers[r.id] = r.b
		case <-timeout:
			s.note(smp, "perf dump", fmt.Sprintf("no answer within %s", q.timeout))
			return answers
		}
	}
	return answers
}

func parseQueueCounter(b []byte) (queueCounter, error) {
	var dump struct {
		OSD map[string]struct {
			Count *int64  `json:"avgcount"`
			Sum   float64 `json:"sum"`
		} `json:"osd"`
	}
	if err := json.Unmarshal(b, &dump); err != nil {
		return queueCounter{}, err
	}
	c, ok := dump.OSD["op_before_dequeue_op_lat"]
	if !ok || c.Count == nil {
		return queueCounter{}, fmt.Errorf("no op_before_dequeue_op_lat in the answer")
	}
	return queueCounter{count: *c.Count, sum: c.Sum}, nil
}

// poolOSDs reads from the PG map the OSDs acting for the watched pools'
// PGs, those with the most PGs first; nil when it could not be read.
// partial says a pool was left out as it does not exist.
func (s *sampler) poolOSDs(smp *Sample) (osds []int, partial bool) {
	pgs := map[int]int{} // OSD → PGs it acts for
	pools := make([]string, 0, len(s.pools))
	for p := range s.pools {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, pool := range pools {
		cmd, _ := json.Marshal(map[string]string{"prefix": "pg ls-by-pool", "poolstr": pool, "format": "json"}) // strings always marshal
		smp.Sent["mgr"]++
		b, err := s.cmds.Mgr(cmd)
		if errors.Is(err, ErrNotFound) {
			partial = true
			continue
		}
		if err == nil {
			err = countActing(b, pgs)
		}
		if err != nil {
			s.note(smp, "pg ls-by-pool", err.Error())
			return nil, false
		}
	}
	osds = make([]int, 0, len(pgs))
	for id := range pgs {
		osds = append(osds, id)
	}
	sort.Slice(osds, func(i, j int) bool {
		a, b := osds[i], osds[j]
		return pgs[a] > pgs[b] || (pgs[a] == pgs[b] && a < b)
	})
	return osds, partial
}

// countActing adds to pgs the PGs each OSD acts for in `pg ls-by-pool`'s
// answer: a list before Octopus, {"pg_stats": list} since.
func countActing(b []byte, pgs map[int]int) error {
	type pg struct {
		Acting []int `json:"acting"`
	}
	var list []pg
	if err := json.Unmarshal(b, &list); err != nil {
		var wrapped struct {
			Stats []pg `json:"pg_stats"`
		}
		if err := json.Unmarshal(b, &wrapped); err != nil {
			return err
		}
		list = wrapped.Stats
	}
	for _, p := range list {
		for _, id := range p.Acting {
			// An erasure-coded PG missing a shard has CRUSH_ITEM_NONE
			// (2147483647) in its acting set.
			if id >= 0 && id != 1<<31-1 {
				pgs[id]++
			}
		}
	}
	return nil
}
