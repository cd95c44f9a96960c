// Package latency summarises the latencies a benchmark program measured.
package latency

import (
	"sort"
	"time"
)

// Sort orders latencies for Percentile.
func Sort(l []time.Duration) { sort.Slice(l, func(i, j int) bool { return l[i] < l[j] }) }

// Percentile returns the p-th percentile of sorted latencies, in
// milliseconds (0 for none).
func Percentile(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[len(sorted)*p/100].Microseconds()) / 1000
}
