package metrics

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// labelValues are one series' label values, in the order of its family's
// label names; the bridge's families have at most two labels. An array,
// not a slice, so it is a map key that costs no allocation.
type labelValues [2]string

// counterVec is a counter family whose series are told apart by labels.
// Series are added when first counted (a webhook's subscription) or ahead
// of time (add), and never removed.
type counterVec struct {
	name, help string
	labelNames []string // sorted, as the text format lists them

	mu     sync.RWMutex
	series map[labelValues]*atomic.Uint64
}

func newCounterVec(name, help string, labelNames ...string) *counterVec {
	return &counterVec{name: name, help: help, labelNames: labelNames, series: map[labelValues]*atomic.Uint64{}}
}

// add returns the counter of values, making it at 0 when it is new.
func (v *counterVec) add(values labelValues) *atomic.Uint64 {
	v.mu.RLock()
	c := v.series[values]
	v.mu.RUnlock()
	if c != nil {
		return c
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c = v.series[values]; c == nil {
		c = new(atomic.Uint64)
		v.series[values] = c
	}
	return c
}

func (v *counterVec) inc(values labelValues) { v.add(values).Add(1) }

func (v *counterVec) family() family {
	v.mu.RLock()
	samples := make([]sample, 0, len(v.series))
	for values, c := range v.series {
		labels := make([]label, len(v.labelNames))
		for i, name := range v.labelNames {
			labels[i] = label{name, values[i]}
		}
		samples = append(samples, sample{labels: labels, value: float64(c.Load())})
	}
	v.mu.RUnlock()
	sortSamples(samples)
	return family{name: v.name, help: v.help, kind: kindCounter, samples: samples}
}

// histogram counts observations per bucket (each count in exactly one
// bucket, made cumulative at scrape time) and their sum.
type histogram struct {
	name, help string
	upper      []float64       // the buckets' upper bounds, ascending, without +Inf
	counts     []atomic.Uint64 // len(upper)+1: the last is above every bound
	sumBits    atomic.Uint64   // the sum as math.Float64bits
}

func newHistogram(name, help string, upper []float64) *histogram {
	return &histogram{name: name, help: help, upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
}

func (h *histogram) observe(v float64) {
	// The first bound >= v: a bucket holds what is less than or equal to
	// its bound, as Prometheus' le says.
	h.counts[sort.SearchFloat64s(h.upper, v)].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// family is the histogram's buckets, sum and count. The count is the +Inf
// bucket, so the two always agree even while observations arrive; the sum
// may be a moment ahead or behind.
func (h *histogram) family() family {
	samples := make([]sample, 0, len(h.counts)+2)
	var cumulative uint64
	for i := range h.counts {
		cumulative += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.upper) {
			le = formatFloat(h.upper[i])
		}
		samples = append(samples, sample{suffix: "_bucket", labels: []label{{"le", le}}, value: float64(cumulative), whole: true})
	}
	samples = append(samples,
		sample{suffix: "_sum", value: math.Float64frombits(h.sumBits.Load())},
		sample{suffix: "_count", value: float64(cumulative), whole: true})
	return family{name: h.name, help: h.help, kind: kindHistogram, samples: samples}
}

// formatFloat writes v as Prometheus' client does: the shortest decimal
// that reads back as v, and +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
