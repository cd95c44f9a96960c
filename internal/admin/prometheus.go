package admin

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Metric is one sample for /metrics. Samples sharing a Name form one
// metric family; Help and Type are taken from the first of them.
type Metric struct {
	Name   string
	Help   string
	Type   string // "counter" or "gauge"; anything else is exposed as untyped
	Labels map[string]string
	Value  float64
}

// metricsContentType is the Prometheus text exposition format 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// appendExposition renders samples in the text exposition format. The
// format requires all samples of a family to be contiguous under a single
// HELP and TYPE, which callers appending per backend or per hostgroup
// easily break, so samples are grouped by name here (families in order of
// first appearance, samples in the order given). Invalid metric and label
// name characters become '_' rather than producing a page Prometheus
// rejects as a whole.
func appendExposition(dst []byte, samples []Metric) []byte {
	type family struct {
		first   *Metric
		samples []*Metric
	}
	var order []string
	families := map[string]*family{}
	for i := range samples {
		m := &samples[i]
		name := sanitizeName(m.Name, true)
		if name == "" {
			continue
		}
		f := families[name]
		if f == nil {
			f = &family{first: m}
			families[name] = f
			order = append(order, name)
		}
		f.samples = append(f.samples, m)
	}
	b := bytes.NewBuffer(dst)
	for _, name := range order {
		f := families[name]
		if f.first.Help != "" {
			b.WriteString("# HELP ")
			b.WriteString(name)
			b.WriteByte(' ')
			b.WriteString(escapeHelp(f.first.Help))
			b.WriteByte('\n')
		}
		b.WriteString("# TYPE ")
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(metricType(f.first.Type))
		b.WriteByte('\n')
		for _, m := range f.samples {
			b.WriteString(name)
			writeLabels(b, m.Labels)
			b.WriteByte(' ')
			b.WriteString(formatSample(m.Value))
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func metricType(t string) string {
	switch t := strings.ToLower(t); t {
	case "counter", "gauge":
		return t
	}
	return "untyped"
}

// writeLabels writes {k="v",...} with keys sorted, so the same series is
// always written the same way.
func writeLabels(b *bytes.Buffer, labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteByte('{')
	n := 0
	for _, k := range keys {
		name := sanitizeName(k, false)
		if name == "" {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(escapeLabelValue(labels[k]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
}

// sanitizeName maps a name onto [a-zA-Z_:][a-zA-Z0-9_:]* (no ':' in
// label names).
func sanitizeName(s string, metric bool) string {
	if s == "" {
		return ""
	}
	out := []byte(s)
	for i, c := range out {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0 || metric && c == ':'
		if !ok {
			out[i] = '_'
		}
	}
	return string(out)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string       { return helpEscaper.Replace(s) }
func escapeLabelValue(s string) string { return labelEscaper.Replace(s) }

// formatSample writes a value as Prometheus parses it, including the
// special values.
func formatSample(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
