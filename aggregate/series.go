package aggregate

import (
	"fmt"
	"maps"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// SeriesAdder adds the seconds of hosts running one step at once into one
// series as they come, so that a run on many hosts keeps one sum per
// second still waiting for a host, never every host's seconds. Host h's
// k-th second is added into the merged second k+shift[h]; a merged
// second is passed on, in order, once every host still sending has sent
// it. It also keeps the rates over the seconds every host still sending
// contributed to, in windows that end where a host was lost. It is not
// safe for concurrent use.
type SeriesAdder struct {
	names   []string
	shift   []int
	next    []int // per host, the merged second its next tick lands on
	ended   []bool
	pending map[int]*metrics.TickSum
	spare   []*metrics.TickSum
	first   int // the first merged second not yet passed on
	out     metrics.Subscriber
	series  []metrics.Second
	windows []*windowTally // in order, each begun by a loss but the first
}

// windowTally is the rates of a run over the seconds one set of hosts
// contributed to: all of them, or those left after a host was lost.
type windowTally struct {
	hosts    int
	begins   int     // the merged second it begins at: the first its lost host did not send
	lost     string  // the host whose loss began the window, if any
	from, to float64 // seconds on the merged clock
	counted  bool    // a second counted: from is set
	kinds    map[string]*kindTally
}

type kindTally struct {
	ops, bytes float64
	dur        float64
	iops, bw   []float64
}

// NewSeriesAdder adds the seconds of the hosts named, host h's shifted by
// shifts[h] whole seconds (nil: none, hosts that started together), and
// passes each merged second to out.
func NewSeriesAdder(names []string, shifts []int, out metrics.Subscriber) *SeriesAdder {
	if shifts == nil {
		shifts = make([]int, len(names))
	}
	a := &SeriesAdder{
		names: names, shift: shifts, next: slices.Clone(shifts), ended: make([]bool, len(names)),
		pending: map[int]*metrics.TickSum{}, out: out,
	}
	a.windows = []*windowTally{{hosts: len(names), kinds: map[string]*kindTally{}}}
	a.first = slices.Min(shifts)
	return a
}

// Add adds host h's next second, t (counts and histograms; t.T is on the
// host's own clock). It keeps nothing of t's.
func (a *SeriesAdder) Add(h int, t metrics.Tick) {
	if sum := a.sumFor(h); sum != nil {
		t.T += float64(a.shift[h])
		sum.Add(t)
		a.passOn(false)
	}
}

// AddPacked is Add for a second whose latencies are in hists, not in
// t.Histograms (metrics.TickSum.AddPacked).
func (a *SeriesAdder) AddPacked(h int, t metrics.Tick, hists map[string]*hdr.PackedHistogram) {
	if sum := a.sumFor(h); sum != nil {
		t.T += float64(a.shift[h])
		sum.AddPacked(t, hists)
		a.passOn(false)
	}
}

// sumFor is the sum host h's next second goes into, counted as sent; nil
// when h sends no more.
func (a *SeriesAdder) sumFor(h int) *metrics.TickSum {
	if a.ended[h] {
		return nil
	}
	b := a.next[h]
	a.next[h]++
	sum := a.pending[b]
	if sum == nil {
		if n := len(a.spare); n > 0 {
			sum, a.spare = a.spare[n-1], a.spare[:n-1]
		} else {
			sum = &metrics.TickSum{}
		}
		a.pending[b] = sum
	}
	return sum
}

// End says host h sends no more seconds: it finished its step.
func (a *SeriesAdder) End(h int) {
	a.ended[h] = true
	a.passOn(false)
}

// Lose says host h was lost: it sends no more seconds, and the rates of
// the seconds from the one it did not send on are those of the hosts left,
// in a window of their own.
func (a *SeriesAdder) Lose(h int) {
	if a.ended[h] {
		return
	}
	a.ended[h] = true
	cur := a.windows[len(a.windows)-1]
	a.windows = append(a.windows, &windowTally{hosts: cur.hosts - 1, begins: a.next[h], lost: a.names[h], kinds: map[string]*kindTally{}})
	a.passOn(false)
}

// Close passes on the seconds still waiting for a host, in order.
func (a *SeriesAdder) Close() { a.passOn(true) }

// passOn passes on, in order, the merged seconds every host still sending
// has sent, or all of them when flush.
func (a *SeriesAdder) passOn(flush bool) {
	for len(a.pending) > 0 {
		sum := a.pending[a.first]
		if !flush && !a.complete(a.first) {
			return
		}
		if sum != nil {
			t := sum.Sum()
			a.tally(a.first, sum.Ticks(), t)
			a.series = append(a.series, t.Second)
			if a.out != nil {
				a.out(t)
			}
			sum.Reset()
			a.spare = append(a.spare, sum)
			delete(a.pending, a.first)
		}
		a.first++
	}
}

// complete reports whether every host still sending has sent merged
// second b.
func (a *SeriesAdder) complete(b int) bool {
	for h := range a.next {
		if !a.ended[h] && a.next[h] <= b {
			return false
		}
	}
	return true
}

// tally counts merged second b, of hosts hosts, into the rates of its
// window when every host the window has contributed to it.
func (a *SeriesAdder) tally(b, hosts int, t metrics.Tick) {
	w := a.windowOf(b)
	if hosts < w.hosts {
		return // not every host ran this second: outside the window
	}
	if !w.counted {
		w.from, w.counted = t.T-t.Dur, true
	}
	w.to = t.T
	for kind, ks := range t.Kinds {
		kt := w.kinds[kind]
		if kt == nil {
			kt = &kindTally{}
			w.kinds[kind] = kt
		}
		kt.ops += float64(ks.Ops)
		kt.bytes += float64(ks.Bytes)
		kt.dur += t.Dur
		if t.Dur >= 0.5 { // as a run's own: a short final second is noise
			kt.iops = append(kt.iops, float64(ks.Ops)/t.Dur)
			kt.bw = append(kt.bw, float64(ks.Bytes)/t.Dur)
		}
	}
}

// windowOf is the window merged second b belongs to: the one begun by the
// last loss at or before it.
func (a *SeriesAdder) windowOf(b int) *windowTally {
	for i := len(a.windows) - 1; i > 0; i-- {
		if b >= a.windows[i].begins {
			return a.windows[i]
		}
	}
	return a.windows[0]
}

// Series is the merged seconds passed on so far.
func (a *SeriesAdder) Series() []metrics.Second { return a.series }

// firstWindowRates is kind's rates over the seconds every host
// contributed to, or, when a host was lost before any, every host left;
// false when there are none, or a is nil.
func (a *SeriesAdder) firstWindowRates(kind string) (iops, bw metrics.Stats, ok bool) {
	if a == nil {
		return metrics.Stats{}, metrics.Stats{}, false
	}
	for _, w := range a.windows {
		if w.counted {
			return w.rates(kind)
		}
	}
	return metrics.Stats{}, metrics.Stats{}, false
}

// rates is kind's rates over the seconds of window w; false when no
// second counted.
func (w *windowTally) rates(kind string) (iops, bw metrics.Stats, ok bool) {
	t := w.kinds[kind]
	if t == nil || t.dur == 0 {
		return metrics.Stats{}, metrics.Stats{}, false
	}
	iops, bw = metrics.StatsOf(t.iops), metrics.StatsOf(t.bw)
	iops.Mean, bw.Mean = t.ops/t.dur, t.bytes/t.dur
	return iops, bw, true
}

// Windows is the result's windows when a host was lost: the one before
// the first loss and one after each, each with its hosts and rates; nil
// when no host was lost.
func (a *SeriesAdder) Windows() []result.Window {
	if len(a.windows) < 2 {
		return nil
	}
	var out []result.Window
	for _, w := range a.windows {
		rw := result.Window{FromSeconds: w.from, ToSeconds: w.to, Hosts: w.hosts, Ops: map[string]result.WindowRates{}}
		if w.lost != "" {
			rw.Note = fmt.Sprintf("after %s was lost", w.lost)
		}
		for _, kind := range slices.Sorted(maps.Keys(w.kinds)) {
			if iops, bw, ok := w.rates(kind); ok {
				rw.Ops[kind] = result.WindowRates{Ops: int64(w.kinds[kind].ops), IOPS: iops, BandwidthBps: bw}
			}
		}
		out = append(out, rw)
	}
	return out
}
