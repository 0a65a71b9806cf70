package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// OpMix is a workload's op kinds and the share of the ops of each, in
// percent, as "KIND=PERCENT,...": "get=45,put=15,delete=10,list=5,stat=25".
// Kinds are named as the target names them (S3: get, put, stat, delete,
// list; other object targets: read, write). A kind at 0% is not drawn,
// but a put listed at 0% still fills in when there is nothing to read.
// It is a string so that a Workload stays comparable and reads as typed.
type OpMix string

// OpShare is one kind of a mix and its share of the ops.
type OpShare struct {
	Kind    string
	Percent int
}

// Shares parses the mix and checks it: every kind named once, every share
// a percentage, the shares summing to 100. Its errors are one line and
// name the problem.
func (m OpMix) Shares() ([]OpShare, error) {
	var shares []OpShare
	seen := map[string]bool{}
	sum := 0
	for part := range strings.SplitSeq(string(m), ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not KIND=PERCENT", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s given twice", name)
		}
		seen[name] = true
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("%s=%s is not a percentage", name, val)
		}
		shares = append(shares, OpShare{Kind: name, Percent: n})
		sum += n
	}
	if sum != 100 {
		return nil, fmt.Errorf("the percentages sum to %d, not 100", sum)
	}
	return shares, nil
}

// Drawn is the mix without the kinds at 0%, for headings.
func (m OpMix) Drawn() string {
	var parts []string
	for part := range strings.SplitSeq(string(m), ",") {
		if _, val, _ := strings.Cut(part, "="); val != "0" {
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, ",")
}

// mixError is the problem with the mix, if any; no mix is none.
func (m OpMix) mixError() error {
	if m == "" {
		return nil
	}
	if _, err := m.Shares(); err != nil {
		return fmt.Errorf("invalid op mix %q: %w", string(m), err)
	}
	return nil
}

// rwModes maps fio's rw= names to a pattern and the share of reads.
var rwModes = map[string]struct {
	pattern Pattern
	reads   int // -1: the mix's
}{
	"read": {Sequential, 100}, "write": {Sequential, 0},
	"randread": {Random, 100}, "randwrite": {Random, 0},
	"rw": {Sequential, -1}, "readwrite": {Sequential, -1}, "randrw": {Random, -1},
}

// ParseRW reads rw, as fio's rw= names it (any case), into a pattern and
// the percentage of reads, rwmixread for the modes that mix them. An
// unknown mode is an error of one line naming the known ones.
func ParseRW(rw string, rwmixread int) (Pattern, int, error) {
	mode, ok := rwModes[strings.ToLower(rw)]
	if !ok {
		return "", 0, fmt.Errorf("invalid --rw %q (want read, write, randread, randwrite, rw, readwrite or randrw)", rw)
	}
	if mode.reads < 0 {
		return mode.pattern, rwmixread, nil
	}
	return mode.pattern, mode.reads, nil
}
