package fioreport

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// Units for num2str.
const (
	unitNone       = ""
	unitByte       = "B"
	unitBytePerSec = "B/s"
)

// num2str is fio's number formatting: num in at most maxlen digits, with
// a decimal (SI) or binary (IEC) prefix and fio's rounding.
func num2str(num uint64, maxlen int, pow2 bool, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	thousand := uint64(1000)
	if pow2 {
		prefixes = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
		thousand = 1024
	}
	post, divided, carry := 0, false, false
	var modulo uint64
	for post < len(prefixes)-1 && len(strconv.FormatUint(num, 10)) > maxlen {
		modulo = num % thousand
		num /= thousand
		carry = modulo >= thousand/2
		post++
		divided = true
	}
	if !divided {
		return fmt.Sprintf("%d%s%s", num, prefixes[post], unit)
	}
	room := maxlen - len(strconv.FormatUint(num, 10))
	if room <= 1 {
		if carry {
			num++
		}
		return fmt.Sprintf("%d%s%s", num, prefixes[post], unit)
	}
	frac := strconv.FormatFloat(float64(modulo)/float64(thousand), 'f', room-1, 64)
	if frac[0] == '1' { // rounded up to the next whole number
		num++
	}
	return fmt.Sprintf("%d.%s%s%s", num, frac[2:], prefixes[post], unit)
}

// scaleLatency picks fio's unit for a latency summary and scales it.
func scaleLatency(l latency) (unit string, min, max uint64, mean, dev float64) {
	min, max, mean, dev = uint64(l.min), uint64(l.max), l.mean, l.dev
	switch {
	case min > 2000000 && max > 99999999 && dev > 1000000:
		return "msec", min / 1000000, max / 1000000, mean / 1000000, dev / 1000000
	case min > 2000 && max > 99999 && dev > 1000:
		return "usec", min / 1000, max / 1000, mean / 1000, dev / 1000
	}
	return "nsec", min, max, mean, dev
}

// writeLatency is fio's line for a latency summary, name one of "slat",
// "clat", " lat".
func (p *printer) writeLatency(name string, l latency) {
	unit, min, max, mean, dev := scaleLatency(l)
	p.printf("    %s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n",
		name, unit, num2str(min, 6, false, unitNone), num2str(max, 6, false, unitNone), mean, dev)
}

// writePercentiles is fio's block of percentiles of a latency, what one
// of "clat", "lat".
func (p *printer) writePercentiles(what string, ps []float64, precision int, vals []int64) {
	if len(vals) == 0 {
		return
	}
	minv, maxv := uint64(math.MaxUint64), uint64(0)
	for _, v := range vals {
		minv, maxv = min(minv, uint64(v)), max(maxv, uint64(v))
	}
	unit, divisor, scale := "nsec", uint64(1), 0
	switch {
	case minv > 2000000 && maxv > 99999999:
		unit, divisor, scale = "msec", 1000000, 2
	case minv > 2000 && maxv > 99999:
		unit, divisor, scale = "usec", 1000, 1
	}
	p.printf("    %s percentiles (%s):\n     |", what, unit)
	width := 5
	if q := maxv / divisor; q > 0 {
		width = max(width, int(math.Log10(float64(q)))+1)
	}
	perLine := (80 - 7) / (precision + 10 + width)
	for j, v := range vals {
		if j != 0 && j%perLine == 0 {
			p.printf("     |")
		}
		u := uint64(v)
		for range scale {
			u = (u + 999) / 1000
		}
		sep := ','
		if j == len(vals)-1 {
			sep = '\n'
		}
		p.printf(" %*.*fth=[%*d]%c", precision+3, precision, ps[j], width, u, sep)
		if j != len(vals)-1 && j%perLine == perLine-1 {
			p.printf("\n")
		}
	}
}

// ctime is C's ctime format, which fio prints its dates in.
const ctime = "Mon Jan _2 15:04:05 2006"
