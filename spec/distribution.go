package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Distribution is how random offsets spread over a file, in fio's
// random_distribution syntax: "random" (uniform, the default), "zipf:θ",
// "pareto:h", "normal:σ" (σ in % of the blocks), each with an optional
// ":center" in [0,1] placing the hot spot; "zoned:ops/size%:..." (ops% of
// the ops go to the next size% of the blocks) or "zoned_abs:ops/size:..."
// (sizes in bytes).
type Distribution struct {
	Kind DistKind
	// Param is zipf's θ, pareto's h or normal's σ in percent.
	Param float64
	// Center places the hot spot at this fraction of the file; -1 is
	// unset: zipf and pareto then put it at a random place, normal in
	// the middle.
	Center float64
	// Zones are a zoned distribution's, in file order.
	Zones []Zone
}

// DistKind names a distribution.
type DistKind string

// The distributions fio's random_distribution names.
const (
	DistRandom   DistKind = "random"
	DistZipf     DistKind = "zipf"
	DistPareto   DistKind = "pareto"
	DistNormal   DistKind = "normal"
	DistZoned    DistKind = "zoned"
	DistZonedAbs DistKind = "zoned_abs"
)

// Zone is one part of a zoned distribution: OpsPercent of the ops land in
// it, uniformly; it spans Span percent of the blocks (zoned) or Span bytes
// (zoned_abs).
type Zone struct {
	OpsPercent int
	Span       int64
}

// ParseDistribution reads a distribution in fio's syntax; "" is uniform.
// The error says what is wrong with the text.
func ParseDistribution(s string) (Distribution, error) {
	kind, args, _ := strings.Cut(strings.TrimSpace(s), ":")
	d := Distribution{Kind: DistKind(kind), Center: -1}
	switch d.Kind {
	case "", DistRandom:
		if args != "" {
			return d, fmt.Errorf("invalid distribution %q: random takes no parameter", s)
		}
		d.Kind = DistRandom
		return d, nil
	case DistZipf, DistPareto, DistNormal:
		return d, d.parseShape(args)
	case DistZoned, DistZonedAbs:
		return d, d.parseZones(args)
	}
	return d, fmt.Errorf("invalid distribution %q (want random, zipf, pareto, normal, zoned or zoned_abs)", s)
}

// parseShape reads "value[:center]"; the value has fio's defaults.
func (d *Distribution) parseShape(args string) error {
	d.Param = map[DistKind]float64{DistZipf: 1.1, DistPareto: 0.2, DistNormal: 0}[d.Kind]
	val, center, hasCenter := strings.Cut(args, ":")
	var err error
	if val != "" {
		if d.Param, err = strconv.ParseFloat(val, 64); err != nil {
			return fmt.Errorf("invalid %s parameter %q", d.Kind, val)
		}
	}
	if hasCenter {
		if d.Center, err = strconv.ParseFloat(center, 64); err != nil || d.Center < 0 || d.Center > 1 {
			return fmt.Errorf("invalid %s center %q (want 0..1)", d.Kind, center)
		}
	}
	switch {
	case d.Kind == DistZipf && (d.Param <= 0 || d.Param == 1):
		return fmt.Errorf("invalid zipf θ %g (want a positive number other than 1)", d.Param)
	case d.Kind == DistPareto && (d.Param <= 0 || d.Param >= 1):
		return fmt.Errorf("invalid pareto h %g (want 0 < h < 1)", d.Param)
	case d.Kind == DistNormal && (d.Param < 0 || d.Param >= 100):
		return fmt.Errorf("invalid normal σ %g (want 0 <= σ < 100, in %% of the blocks)", d.Param)
	}
	return nil
}

// parseZones reads "ops/span:ops/span...": the ops percentages must add
// up to 100, and zoned spans, in percent, to at most 100; zoned zones
// given no span ("20/") share evenly what the others leave, as in fio.
func (d *Distribution) parseZones(args string) error {
	if strings.Contains(args, ",") {
		return fmt.Errorf("%s per direction (with ',') is not supported: give one set of zones for reads and writes", d.Kind)
	}
	ops, span := 0, int64(0)
	var unsized []int // zoned zones given no size, as in "20/"
	for z := range strings.SplitSeq(args, ":") {
		o, sp, ok := strings.Cut(z, "/")
		n, err := strconv.Atoi(strings.TrimSpace(o))
		if !ok || err != nil || n < 0 || n > 100 {
			return fmt.Errorf("invalid zone %q (want ops%%/size%s)", z, map[bool]string{true: "", false: "%"}[d.Kind == DistZonedAbs])
		}
		var s int64
		if d.Kind == DistZonedAbs {
			v, err := ParseSize(sp)
			if err != nil || v <= 0 {
				return fmt.Errorf("invalid zone size %q", sp)
			}
			s = int64(v)
		} else if strings.TrimSpace(sp) == "" {
			unsized = append(unsized, len(d.Zones)) // its share of what the others leave
		} else if s, err = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(sp), "%"), 10, 64); err != nil || s <= 0 || s > 100 {
			return fmt.Errorf("invalid zone size %q (want a percentage)", sp)
		}
		d.Zones = append(d.Zones, Zone{OpsPercent: n, Span: s})
		ops, span = ops+n, span+s
	}
	if len(unsized) > 0 {
		// As fio: the zones without a size share what the others leave.
		share := (100 - span) / int64(len(unsized))
		if share <= 0 {
			return fmt.Errorf("zoned: the sized zones take %d%%, leaving nothing for those without a size", span)
		}
		for _, i := range unsized {
			d.Zones[i].Span = share
		}
		span += share * int64(len(unsized))
	}
	switch {
	case ops != 100:
		return fmt.Errorf("%s: the ops percentages add up to %d, not 100", d.Kind, ops)
	case d.Kind == DistZoned && span > 100:
		return fmt.Errorf("zoned: the size percentages add up to %d, over 100", span)
	}
	return nil
}

// String is the inverse of ParseDistribution.
func (d Distribution) String() string {
	switch d.Kind {
	case "", DistRandom:
		return string(DistRandom)
	case DistZoned, DistZonedAbs:
		zones := make([]string, len(d.Zones))
		for i, z := range d.Zones {
			zones[i] = fmt.Sprintf("%d/%d", z.OpsPercent, z.Span)
		}
		return string(d.Kind) + ":" + strings.Join(zones, ":")
	}
	s := fmt.Sprintf("%s:%g", d.Kind, d.Param)
	if d.Center >= 0 {
		s += fmt.Sprintf(":%g", d.Center)
	}
	return s
}

// errRandomMapDistribution refuses a random map with a skewed
// distribution: visiting every block once per pass is uniform by nature.
var errRandomMapDistribution = errors.New("a random map visits every block once per pass, which no skewed distribution does: set one or the other")

// FileService is how a worker with several files moves between them
// (fio's file_service_type).
type FileService string

// The file services fio names.
const (
	FileRoundRobin FileService = "roundrobin"
	FileRandom     FileService = "random"
	FileSequential FileService = "sequential"
)

// ParseFileService reads "roundrobin", "random" or "sequential", the
// first two with an optional ":N", the ops on a file before the next
// switch (1 by default); "" is roundrobin.
func ParseFileService(s string) (FileService, int, error) {
	name, n, hasN := strings.Cut(strings.TrimSpace(s), ":")
	svc := FileService(name)
	switch svc {
	case "":
		svc = FileRoundRobin
	case FileRoundRobin, FileRandom:
	case FileSequential:
		if hasN {
			return svc, 0, fmt.Errorf("invalid file service %q: sequential takes no :N", s)
		}
	default:
		return svc, 0, fmt.Errorf("invalid file service %q (want roundrobin, random or sequential)", s)
	}
	every := 1
	if hasN {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return svc, 0, fmt.Errorf("invalid file service %q: :N wants a positive count", s)
		}
		every = v
	}
	return svc, every, nil
}
