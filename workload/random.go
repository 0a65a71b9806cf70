package workload

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/cephbench/cephbench/spec"
)

// A picker draws the block of a random op among n blocks of a region.
// cephbench draws every random number from the run's seeded PCG (see New),
// whatever fio's random_generator says: tausworthe, tausworthe64 and lfsr
// are fio's own generators, and which one fio uses changes the sequence
// of offsets, not their distribution. The shapes of the skewed
// distributions follow fio's lib/zipf.c and lib/gauss.c, including the
// hash that scatters the hot blocks over the region, so that a job's skew
// (the share of ops its hottest blocks get) is fio's.
type picker interface {
	next(r *rand.Rand) int64
}

// newPicker returns the picker of distribution d over n blocks; d has
// passed spec.ParseDistribution, so it is well formed. randomMap asks for
// every block once per pass.
func newPicker(d spec.Distribution, n, bs int64, randomMap bool, r *rand.Rand) picker {
	switch d.Kind {
	case spec.DistZipf:
		return newZipf(uint64(n), d.Param, d.Center, r)
	case spec.DistPareto:
		return newPareto(uint64(n), d.Param, d.Center, r)
	case spec.DistNormal:
		return newGauss(uint64(n), d.Param, d.Center)
	case spec.DistZoned, spec.DistZonedAbs:
		return newZoned(d, n, bs)
	}
	if randomMap {
		return &permutation{n: n}
	}
	return uniform(n)
}

// uniform draws each block independently, with replacement.
type uniform int64

func (u uniform) next(r *rand.Rand) int64 { return r.Int64N(int64(u)) }

// permutation visits each of n blocks once per pass, in an order a keyed
// Feistel network over the next even power of two draws, walking the
// cycle past numbers of n or more: no memory per block, whatever the size.
type permutation struct {
	n, i     int64
	halfBits uint
	keys     [4]uint64
}

func (p *permutation) next(r *rand.Rand) int64 {
	if p.i%p.n == 0 {
		// A new pass: a new order.
		p.halfBits = max(uint(bits.Len64(uint64(p.n-1))+1)/2, 1)
		for k := range p.keys {
			p.keys[k] = r.Uint64()
		}
	}
	p.i++
	x := uint64(p.i-1) % uint64(p.n)
	for {
		x = p.permute(x)
		if x < uint64(p.n) {
			return int64(x)
		}
	}
}

// permute is a bijection of [0, 4^halfBits).
func (p *permutation) permute(x uint64) uint64 {
	mask := uint64(1)<<p.halfBits - 1
	left, right := x>>p.halfBits, x&mask
	for _, k := range p.keys {
		left, right = right, left^(mix64(right^k)&mask)
	}
	return left<<p.halfBits | right
}

// mix64 is splitmix64's finaliser: every input bit moves every output bit.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// goldenRatio64 is fio's __hash_u64 multiplier, which scatters the ranks
// of zipf, pareto and normal draws over the region.
const goldenRatio64 = 0x61C8864680B583EB

// zipfMaxTerms caps the terms of zeta(n), as fio does (ZIPF_MAX_GEN).
const zipfMaxTerms = 10_000_000

// hotSpot is where the hottest rank lands: center's share of the blocks,
// or a random place, as fio's shared_rand_init draws it.
func hotSpot(n uint64, center float64, r *rand.Rand) uint64 {
	if center >= 0 {
		return uint64(float64(n) * center)
	}
	return uint64(r.Uint32())
}

// zipf draws ranks by Gray et al.'s method, as fio's zipf_next does.
type zipf struct {
	n, hot            uint64
	zetan, alpha, eta float64
	secondCutover     float64 // 1 + 0.5^θ: draws below it are rank 2
}

func newZipf(n uint64, theta, center float64, r *rand.Rand) *zipf {
	z := &zipf{n: n, hot: hotSpot(n, center, r)}
	for i := range min(n, zipfMaxTerms) {
		z.zetan += math.Pow(1/float64(i+1), theta)
	}
	z.secondCutover = 1 + math.Pow(0.5, theta) // zeta(2)
	z.alpha = 1 / (1 - theta)
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - z.secondCutover/z.zetan)
	return z
}

func (z *zipf) next(r *rand.Rand) int64 {
	u := float64(r.Uint32()) / math.MaxUint32
	var rank uint64
	switch v := u * z.zetan; {
	case v < 1:
		rank = 1
	case v < z.secondCutover:
		rank = 2
	default:
		rank = 1 + toUint(float64(z.n)*math.Pow(z.eta*u-z.eta+1, z.alpha))
	}
	return int64(((rank-1)*goldenRatio64 + z.hot) % z.n)
}

// toUint converts f, capped where a uint64 ends.
func toUint(f float64) uint64 {
	if f >= math.MaxUint64 || math.IsNaN(f) {
		return math.MaxUint64
	}
	return uint64(f)
}

// pareto draws ranks as fio's pareto_next does.
type pareto struct {
	n, hot uint64
	pow    float64
}

func newPareto(n uint64, h, center float64, r *rand.Rand) *pareto {
	return &pareto{n: n, hot: hotSpot(n, center, r), pow: math.Log(h) / math.Log(1-h)}
}

func (p *pareto) next(r *rand.Rand) int64 {
	u := float64(r.Uint32()) / math.MaxUint32
	rank := toUint(float64(p.n-1) * math.Pow(u, p.pow))
	return int64((rank*goldenRatio64 + p.hot) % p.n)
}

// gauss draws as fio's gauss_next does: the mean of 12 uniform draws,
// moved by a deviation of up to σ% of the blocks.
type gauss struct {
	n, stddev uint64
	off       int64
}

// gaussIters is how many uniform draws fio averages (GAUSS_ITERS).
const gaussIters = 12

func newGauss(n uint64, sigma, center float64) *gauss {
	g := &gauss{n: n}
	if sigma != 0 {
		g.stddev = min(uint64(math.Ceil(float64(n)*sigma/100)), n/2)
	}
	if center >= 0 {
		g.off = int64(float64(n) * (center - 0.5))
	}
	return g
}

func (g *gauss) next(r *rand.Rand) int64 {
	var sum uint64
	for range gaussIters {
		sum += uint64(r.Uint32()) % (g.n + 1)
	}
	sum = (sum + gaussIters - 1) / gaussIters
	if g.stddev > 0 {
		dev := int64(float64(g.stddev)*(float64(r.Uint32())/(math.MaxUint32+1.0))) - int64(g.stddev/2)
		for dev+int64(sum) >= int64(g.n) {
			dev /= 2
		}
		sum = uint64(int64(sum) + dev)
	}
	v := int64((sum * goldenRatio64) % g.n)
	return ((v+g.off)%int64(g.n) + int64(g.n)) % int64(g.n)
}

// zoned sends each op to a zone drawn by the zones' shares of the ops,
// then to a block of the zone uniformly.
type zoned struct {
	// byPercent[v-1] is the zone of a draw v in 1..100: its first block
	// and how many it spans.
	byPercent [100]struct{ first, blocks int64 }
}

func newZoned(d spec.Distribution, n, bs int64) *zoned {
	z := &zoned{}
	v := 0
	var spanBefore int64 // percent of the blocks (zoned) or bytes (zoned_abs)
	for _, zone := range d.Zones {
		first, end := spanBefore*n/100, (spanBefore+zone.Span)*n/100
		if d.Kind == spec.DistZonedAbs {
			first, end = spanBefore/bs, min((spanBefore+zone.Span)/bs, n)
		}
		for range zone.OpsPercent {
			z.byPercent[v].first, z.byPercent[v].blocks = first, max(end-first, 1)
			v++
		}
		spanBefore += zone.Span
	}
	return z
}

func (z *zoned) next(r *rand.Rand) int64 {
	zone := z.byPercent[r.IntN(100)]
	return zone.first + r.Int64N(zone.blocks)
}
