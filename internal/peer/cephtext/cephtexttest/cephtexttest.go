// Package cephtexttest checks, for tests, that cephbench's output of the
// peer tools' commands is still read by what reads theirs.
package cephtexttest

import (
	"fmt"
	"strings"
)

// KeyValueSummary returns an error naming every line of out, from the
// first that starts with from on, that is not "key: value" with exactly
// one colon: CBT's parse of rados bench's output splits each at its colon
// (key, val = line.split(':')) and fails on any other. Lines starting with
// one of own, the tool's own lines in its own form (rbd bench's "elapsed:
// 1   ops: 10240 ..."), are not checked. Output without a from line is an
// error too.
func KeyValueSummary(out, from string, own ...string) error {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, from) {
			start = i
			break
		}
	}
	if start < 0 {
		return fmt.Errorf("no line starts with %q in:\n%s", from, out)
	}
	var bad []string
next:
	for _, l := range lines[start:] {
		for _, o := range own {
			if strings.HasPrefix(l, o) {
				continue next
			}
		}
		if strings.Count(l, ":") != 1 {
			bad = append(bad, fmt.Sprintf("%q", l))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("lines after %q without exactly one colon:\n%s", from, strings.Join(bad, "\n"))
	}
	return nil
}
