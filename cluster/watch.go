package cluster

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Commands sends JSON commands, as `ceph` sends them, to a cluster's
// monitors, managers and OSDs and returns their answers. Tell may be
// called from several goroutines at once.
type Commands interface {
	Mon(cmd []byte) ([]byte, error)
	Mgr(cmd []byte) ([]byte, error)
	// Tell sends cmd to OSD osd, as `ceph tell osd.N` does.
	Tell(osd int, cmd []byte) ([]byte, error)
}

// Conn is a connection of the watch's own: Close is called once, after
// the last command returned.
type Conn interface {
	Commands
	Close()
}

// Shared is a Conn its holders share: a session and the watch of its
// run (so that a run connects once: connecting costs a client tens of
// milliseconds of CPU), a watch and the run's quiescing. Each hold is
// closed once, and the last Close closes the connection, so a command
// still in flight when another holder is done runs on. Safe for
// concurrent use.
type Shared struct {
	Conn
	holds atomic.Int32
}

// Share makes conn shared, with one hold: its opener's.
func Share(conn Conn) *Shared {
	s := &Shared{Conn: conn}
	s.holds.Store(1)
	return s
}

// Hold takes another hold on the connection, which its Close releases.
// Only a holder may call it.
func (s *Shared) Hold() *Shared {
	s.holds.Add(1)
	return s
}

// Close releases a hold; the last closes the connection.
func (s *Shared) Close() {
	if s.holds.Add(-1) == 0 {
		s.Conn.Close()
	}
}

// Sample is what the cluster said of itself at one moment of a run.
// Fields the cluster did not answer for are empty, and the problem is in
// Problems the first time it happens.
type Sample struct {
	// At is when the sample was taken, in seconds since the watch
	// started; Every is the watch's interval, in seconds.
	At    float64 `json:"t"`
	Every float64 `json:"every_s"`
	// Health is HEALTH_OK, HEALTH_WARN or HEALTH_ERR; "" when the
	// status could not be read, and then PGStates and Epoch are unknown.
	Health string            `json:"health,omitempty"`
	Checks map[string]string `json:"checks,omitempty"` // raised check → its message
	// FSID is the cluster's, in the first sample that read the status.
	FSID string `json:"fsid,omitempty"`
	// PGStates counts PGs by their combination of states, as `ceph
	// status` does ("active+clean+scrubbing+deep": 2).
	PGStates map[string]int `json:"pg_states,omitempty"`
	Epoch    int            `json:"osdmap_epoch,omitempty"`
	// Client is the client I/O the cluster counts on the run's pools
	// (the manager's smoothed rates); nil when not read.
	Client  *ClientIO    `json:"client,omitempty"`
	OSDPerf []OSDLatency `json:"osd_perf,omitempty"`
	// OSDQueue is the queue latency of the OSDs asked in this sample
	// (of the run's pools; at most 32, in turn) that had ops since they
	// were last asked.
	OSDQueue []OSDQueue `json:"osd_queue,omitempty"`
	// OSDs is every OSD's state, read from the OSD map in the first
	// sample and in those that saw its epoch change; nil in the others.
	OSDs []OSDState `json:"osds,omitempty"`
	// Sent counts the commands the sample sent, by kind ("mon", "mgr",
	// "osd").
	Sent     map[string]int `json:"sent,omitempty"`
	Problems []string       `json:"problems,omitempty"`
}

// ClientIO is client I/O rates: ops and bytes per second.
type ClientIO struct {
	ReadOps    float64 `json:"read_ops_s"`
	WriteOps   float64 `json:"write_ops_s"`
	ReadBytes  float64 `json:"read_bytes_s"`
	WriteBytes float64 `json:"write_bytes_s"`
}

// OSDLatency is one OSD's commit and apply latency, in milliseconds.
type OSDLatency struct {
	ID     int     `json:"id"`
	Commit float64 `json:"commit_ms"`
	Apply  float64 `json:"apply_ms"`
}

// OSDQueue is one OSD's mean queue latency, in milliseconds, since it
// was last asked: the time its ops waited from their arrival to their
// dequeue (op_before_dequeue_op_lat), which a slow dispatch path or a
// full queue lengthens and the object store's commit latency does not
// show.
type OSDQueue struct {
	ID int     `json:"id"`
	Ms float64 `json:"queue_ms"`
}

// OSDState is whether one OSD is up and in.
type OSDState struct {
	ID int  `json:"id"`
	Up bool `json:"up"`
	In bool `json:"in"`
}

// sampler takes samples: it remembers the OSD map epoch it last read
// and the problems already noted, so that each is noted once.
type sampler struct {
	cmds   Commands
	pools  map[string]bool
	every  time.Duration
	epoch  int // of the OSD map last read; 0: none read
	noted  map[string]bool
	fsid   string // the cluster's, once read
	queues queueReader
}

func newSampler(cmds Commands, pools []string, every time.Duration) *sampler {
	s := &sampler{cmds: cmds, pools: map[string]bool{}, every: every, noted: map[string]bool{},
		queues: queueReader{last: map[int]queueCounter{}, timeout: tellTimeout, busy: map[int]bool{}}}
	for _, p := range pools {
		s.pools[p] = true
	}
	return s
}

// take asks the cluster for one sample, taken at seconds since the
// watch started.
func (s *sampler) take(at float64) Sample {
	smp := Sample{At: math.Round(at*1000) / 1000, Every: s.every.Seconds(), Sent: map[string]int{}}
	if b, ok := s.ask(&smp, "mon", "status"); ok {
		s.readStatus(&smp, b)
	}
	if smp.Epoch != 0 && smp.Epoch != s.epoch {
		if b, ok := s.ask(&smp, "mon", "osd dump"); ok {
			s.readOSDMap(&smp, b)
		}
	}
	if b, ok := s.ask(&smp, "mgr", "osd pool stats"); ok {
		s.readPoolStats(&smp, b)
	}
	if b, ok := s.ask(&smp, "mgr", "osd perf"); ok {
		s.readOSDPerf(&smp, b)
	}
	s.readQueues(&smp)
	return smp
}

// ask sends the command prefix to the monitors or the managers (kind)
// and returns its answer; a failure is noted in smp.
func (s *sampler) ask(smp *Sample, kind, prefix string) ([]byte, bool) {
	cmd, _ := json.Marshal(map[string]string{"prefix": prefix, "format": "json"}) // strings always marshal
	send := s.cmds.Mon
	if kind == "mgr" {
		send = s.cmds.Mgr
	}
	smp.Sent[kind]++
	b, err := send(cmd)
	if err != nil {
		s.note(smp, prefix, err.Error())
		return nil, false
	}
	return b, true
}

// note adds a problem with a command to smp, the first time that
// command has one.
func (s *sampler) note(smp *Sample, prefix, problem string) {
	if s.noted[prefix] {
		return
	}
	s.noted[prefix] = true
	smp.Problems = append(smp.Problems, "ceph "+prefix+": "+oneLine(problem))
}

func (s *sampler) readStatus(smp *Sample, b []byte) {
	st, err := ParseStatus(b)
	if err == nil && st.Health.Status == "" {
		err = fmt.Errorf("no health in the answer")
	}
	if err != nil {
		s.note(smp, "status", err.Error())
		return
	}
	smp.Health, smp.Epoch = st.Health.Status, st.OSDMap.Epoch
	if s.fsid == "" {
		s.fsid, smp.FSID = oneLine(st.FSID), oneLine(st.FSID)
	}
	for name, c := range st.Health.Checks {
		if smp.Checks == nil {
			smp.Checks = map[string]string{}
		}
		// Printed in a summary's line: a mangled answer must not
		// break it.
		smp.Checks[oneLine(name)] = oneLine(c.Summary.Message)
	}
	smp.PGStates = map[string]int{}
	for _, p := range st.PGMap.PGsByState {
		smp.PGStates[p.StateName] += p.Count
	}
}

func (s *sampler) readOSDMap(smp *Sample, b []byte) {
	var dump struct {
		Epoch int `json:"epoch"`
		OSDs  []struct {
			ID int `json:"osd"`
			Up int `json:"up"`
			In int `json:"in"`
		} `json:"osds"`
	}
	if err := json.Unmarshal(b, &dump); err != nil {
		s.note(smp, "osd dump", err.Error())
		return
	}
	s.epoch = smp.Epoch
	smp.OSDs = []OSDState{}
	for _, o := range dump.OSDs {
		smp.OSDs = append(smp.OSDs, OSDState{ID: o.ID, Up: o.Up == 1, In: o.In == 1})
	}
	sort.Slice(smp.OSDs, func(i, j int) bool { return smp.OSDs[i].ID < smp.OSDs[j].ID })
}

func (s *sampler) readPoolStats(smp *Sample, b []byte) {
	var pools []struct {
		Name   string `json:"pool_name"`
		Client struct {
			ReadBytes  float64 `json:"read_bytes_sec"`
			WriteBytes float64 `json:"write_bytes_sec"`
			ReadOps    float64 `json:"read_op_per_sec"`
			WriteOps   float64 `json:"write_op_per_sec"`
		} `json:"client_io_rate"`
	}
	if err := json.Unmarshal(b, &pools); err != nil {
		s.note(smp, "osd pool stats", err.Error())
		return
	}
	io := ClientIO{}
	for _, p := range pools {
		if s.pools[p.Name] {
			c := p.Client
			io.ReadOps, io.WriteOps = io.ReadOps+c.ReadOps, io.WriteOps+c.WriteOps
			io.ReadBytes, io.WriteBytes = io.ReadBytes+c.ReadBytes, io.WriteBytes+c.WriteBytes
		}
	}
	smp.Client = &io
}

func (s *sampler) readOSDPerf(smp *Sample, b []byte) {
	type infos struct {
		Infos []struct {
			ID   int `json:"id"`
			Perf struct {
				Commit float64 `json:"commit_latency_ms"`
				Apply  float64 `json:"apply_latency_ms"`
			} `json:"perf_stats"`
		} `json:"osd_perf_infos"`
	}
	// Pacific nests the list in "osdstats"; releases before it did not.
	var perf struct {
		infos
		OSDStats infos `json:"osdstats"`
	}
	if err := json.Unmarshal(b, &perf); err != nil {
		s.note(smp, "osd perf", err.Error())
		return
	}
	list := perf.OSDStats.Infos
	if len(list) == 0 {
		list = perf.Infos
	}
	for _, o := range list {
		smp.OSDPerf = append(smp.OSDPerf, OSDLatency{ID: o.ID, Commit: o.Perf.Commit, Apply: o.Perf.Apply})
	}
	sort.Slice(smp.OSDPerf, func(i, j int) bool { return smp.OSDPerf[i].ID < smp.OSDPerf[j].ID })
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Watch samples a cluster every interval from its start until Stop, on a
// connection of its own. It keeps no sample: each goes to the sink and
// into a Summary, so that what it holds does not grow with the run's
// length.
type Watch struct {
	mu      sync.Mutex
	summary *Summary
	stopped bool
	sink    func(Sample)
	done    chan struct{}
}

// StartWatch samples the cluster over conn every interval, the first
// sample at once, until Stop; the client I/O is counted on pools alone.
// sink, if set, gets each sample as it is taken, from the watch's own
// goroutine, never after Stop returned. conn is the watch's: it is
// closed once its last command returned, which may be after Stop
// returned (a command the cluster is slow to answer is not waited for,
// nor an OSD's answer that came after its sample's timeout).
func StartWatch(conn Conn, pools []string, interval time.Duration, sink func(Sample)) *Watch {
	w := &Watch{summary: NewSummary(), sink: sink, done: make(chan struct{})}
	s := newSampler(conn, pools, interval)
	start := time.Now()
	go func() {
		defer conn.Close()
		defer s.queues.pending.Wait()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			smp := s.take(time.Since(start).Seconds())
			if !w.add(smp) {
				return
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// add adds smp to the summary and hands it to the sink; false once
// stopped.
func (w *Watch) add(smp Sample) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	w.summary.Add(smp)
	if w.sink != nil {
		w.sink(smp)
	}
	return true
}

// Stop ends the watch and returns what it saw. A sample still being
// taken is dropped. Stop is called once.
func (w *Watch) Stop() *During {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	close(w.done)
	return w.summary.During()
}

// FSPools reads the metadata and data pools of the file system named fs
// ("": the first) from `ceph fs ls`.
func FSPools(fsLs []byte, fs string) ([]string, error) {
	var list []struct {
		Name     string   `json:"name"`
		Metadata string   `json:"metadata_pool"`
		Data     []string `json:"data_pools"`
	}
	if err := json.Unmarshal(fsLs, &list); err != nil {
		return nil, err
	}
	for _, f := range list {
		if f.Name == fs || fs == "" {
			return append([]string{f.Metadata}, f.Data...), nil
		}
	}
	return nil, fmt.Errorf("no file system %q", fs)
}
