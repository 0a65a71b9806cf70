package fiolog

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/cephbench/cephbench/internal/peer/fioreport"
)

// cloneLogs are one clone's logs and the windows they average over.
type cloneLogs struct {
	mu    sync.Mutex
	o     *Options
	files [numKinds]*os.File
	w     [numKinds]*bufio.Writer

	// lat is the lat and clat logs' open window per direction (they log
	// the same latency, so one window serves both).
	lat [2]avgWindow
	// bytes and ops are the bw and iops logs' counts per direction and
	// log_avg_msec window, the window of an op being when it ended.
	bytes, ops [2][]int64
	// hist is the histogram log's counts per direction since its last
	// line, in fio's bins; histLast when that window began (ms, 0 for
	// not yet, as fio keeps it).
	hist     [2][]int64
	histLast [2]int64
	line     []byte
}

// avgWindow is fio's running statistics of one log window.
type avgWindow struct {
	samples  int64
	mean     float64
	max      int64
	lastLine int64 // fio's avg_last: the start of the window, in ms
}

func (c *cloneLogs) add(s Sample) {
	d := 0
	if s.Write {
		d = 1
	}
	lat := int64(s.End - s.Start)
	end := ms(s.End)
	if n := int64(c.o.AvgMsec); n == 0 {
		var bw int64
		if lat > 0 {
			bw = s.Size * 1_000_000 / lat // fio's per-op rate, from bytes and ns
		}
		c.sample(bwLog, end, bw, d, s.Size, s.Offset)
		c.sample(iopsLog, end, 1, d, s.Size, s.Offset)
		c.sample(latLog, end, lat, d, s.Size, s.Offset)
		c.sample(clatLog, end, lat, d, s.Size, s.Offset)
	} else {
		c.average(d, end, lat)
		k := int(end / n)
		for len(c.ops[d]) <= k {
			c.ops[d], c.bytes[d] = append(c.ops[d], 0), append(c.bytes[d], 0)
		}
		c.ops[d][k]++
		c.bytes[d][k] += s.Size
	}
	if c.w[histLog] != nil && c.o.HistMsec > 0 {
		c.histogram(d, end, lat, s.Size)
	}
}

// average adds lat to direction d's window of the lat logs and writes the
// window's line once it spans log_avg_msec, as fio's add_log_sample does.
func (c *cloneLogs) average(d int, end, lat int64) {
	w := &c.lat[d]
	w.samples++
	w.mean += (float64(lat) - w.mean) / float64(w.samples)
	w.max = max(w.max, lat)
	n := int64(c.o.AvgMsec)
	if end < w.lastLine || end-w.lastLine < n {
		return
	}
	c.flushAverage(d, end)
	w.lastLine = end - end%n
}

// flushAverage writes direction d's open lat window at time t, if it has
// samples, and empties it.
func (c *cloneLogs) flushAverage(d int, t int64) {
	w := &c.lat[d]
	if w.samples == 0 {
		return
	}
	v := int64(w.mean + 0.5)
	if c.o.MaxValue {
		v = w.max
	}
	c.sample(latLog, t, v, d, 0, 0)
	c.sample(clatLog, t, v, d, 0, 0)
	w.samples, w.mean, w.max = 0, 0, 0
}

// histogram counts lat in direction d's window and writes the window's
// line once it spans log_hist_msec, as fio's add_clat_sample does.
func (c *cloneLogs) histogram(d int, end, lat, size int64) {
	if c.hist[d] == nil {
		c.hist[d] = make([]int64, fioreport.PlatBins)
	}
	c.hist[d][fioreport.PlatIndex(lat)]++
	if c.histLast[d] == 0 {
		c.histLast[d] = end
	}
	window := end - c.histLast[d]
	n := int64(c.o.HistMsec)
	if window < n {
		return
	}
	b := strconv.AppendInt(c.line[:0], end, 10)
	b = fmt.Appendf(b, ", %d, %d, ", d, size)
	stride := 1 << c.o.HistCoarseness
	for i := 0; i < len(c.hist[d]); i += stride {
		var sum int64
		for _, v := range c.hist[d][i : i+stride] {
			sum += v
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, sum, 10)
	}
	c.line = append(b, '\n')
	c.w[histLog].Write(c.line)
	clear(c.hist[d])
	c.histLast[d] = end - (window - n)
}

// finish writes what the windows hold at elapsed ms, the job's end: the
// lat logs' open windows, as fio's finalize_logs does, and the bw and
// iops logs' complete windows, which fio writes as it goes.
func (c *cloneLogs) finish(elapsed int64) {
	n := int64(c.o.AvgMsec)
	if n == 0 {
		return
	}
	for d := range c.lat {
		c.flushAverage(d, elapsed)
	}
	windows := max(len(c.ops[0]), len(c.ops[1]))
	for k := range windows {
		t := int64(k+1) * n
		if t > elapsed {
			break
		}
		for d := range c.ops {
			if k >= len(c.ops[d]) || c.ops[d][k] == 0 {
				continue
			}
			c.sample(bwLog, t, c.bytes[d][k]*1000/n/1024, d, 0, 0)
			c.sample(iopsLog, t, c.ops[d][k]*1000/n, d, 0, 0)
		}
	}
}

// sample writes one line of log k: fio's "time, value, direction, block
// size[, offset], priority".
func (c *cloneLogs) sample(k kind, t, v int64, d int, size, offset int64) {
	w := c.w[k]
	if w == nil {
		return
	}
	b := fmt.Appendf(c.line[:0], "%d, %d, %d, %d", t, v, d, size)
	if c.o.Offset {
		b = fmt.Appendf(b, ", %d", offset)
	}
	if c.o.Prio {
		b = append(b, ", 0x0000\n"...)
	} else {
		b = append(b, ", 0\n"...)
	}
	c.line = b
	w.Write(b)
}
