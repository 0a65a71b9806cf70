package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// RateFlag is a command-line flag that paces the workload W points to:
// "N" is N ops per second in total, "R,W" reads at R and writes at W ops
// per second, each on its own schedule, an empty side unpaced ("500,").
type RateFlag struct{ W *Workload }

// Set reads s as the pace, replacing any set before.
func (f RateFlag) Set(s string) error {
	f.W.RateIOPS, f.W.ReadRate.IOPS, f.W.WriteRate.IOPS = 0, 0, 0
	if !strings.Contains(s, ",") {
		n, err := parseRate(s)
		f.W.RateIOPS = n
		return err
	}
	return setPair(s, &f.W.ReadRate.IOPS, &f.W.WriteRate.IOPS)
}

// String is the pace as Set reads it; empty when unpaced.
func (f RateFlag) String() string {
	if f.W == nil {
		return ""
	}
	if f.W.ReadRate.IOPS > 0 || f.W.WriteRate.IOPS > 0 {
		return pairString(f.W.ReadRate.IOPS, f.W.WriteRate.IOPS)
	}
	if f.W.RateIOPS > 0 {
		return strconv.FormatFloat(f.W.RateIOPS, 'g', -1, 64)
	}
	return ""
}

// Type names the flag's value in usage.
func (RateFlag) Type() string { return "ops/s[,ops/s]" }

// MinRateFlag is a command-line flag that sets the minimum rates of the
// workload W points to, in ops per second: "R,W" for reads and writes
// (",W" for writes only), "N" for both.
type MinRateFlag struct{ W *Workload }

// Set reads s as the minimum rates, replacing any set before.
func (f MinRateFlag) Set(s string) error {
	if !strings.Contains(s, ",") {
		s += "," + s
	}
	f.W.ReadRate.MinIOPS, f.W.WriteRate.MinIOPS = 0, 0
	return setPair(s, &f.W.ReadRate.MinIOPS, &f.W.WriteRate.MinIOPS)
}

// String is the minimum rates as Set reads them; empty when unset.
func (f MinRateFlag) String() string {
	if f.W == nil || !f.W.ReadRate.HasMin() && !f.W.WriteRate.HasMin() {
		return ""
	}
	return pairString(f.W.ReadRate.MinIOPS, f.W.WriteRate.MinIOPS)
}

// Type names the flag's value in usage.
func (MinRateFlag) Type() string { return "ops/s[,ops/s]" }

// setPair reads "R,W" into read and write, an empty side left at zero.
func setPair(s string, read, write *float64) error {
	r, w, _ := strings.Cut(s, ",")
	for _, side := range []struct {
		text string
		dst  *float64
	}{{r, read}, {w, write}} {
		if strings.TrimSpace(side.text) == "" {
			continue
		}
		n, err := parseRate(side.text)
		if err != nil {
			return err
		}
		*side.dst = n
	}
	return nil
}

func parseRate(s string) (float64, error) {
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a rate in ops per second (want N, or R,W for reads and writes)", s)
	}
	return n, nil
}

func pairString(read, write float64) string {
	side := func(n float64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return side(read) + "," + side(write)
}
