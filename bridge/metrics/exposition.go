package metrics

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// contentType is Prometheus' text exposition format, version 0.0.4.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// The types a family can have in the text format.
const (
	kindCounter   = "counter"
	kindGauge     = "gauge"
	kindHistogram = "histogram"
	kindSummary   = "summary"
)

// family is one metric family of a scrape: its # HELP and # TYPE lines and
// its samples.
type family struct {
	name, help, kind string
	samples          []sample
}

// sample is one line of a family: the name plus suffix (a histogram's
// _bucket, _sum, _count), the labels in the order written, and the value.
type sample struct {
	suffix string
	labels []label
	value  float64
	// whole: a count of observations, written as an integer (1000000, not
	// 1e+06) as the client writes them.
	whole bool
}

type label struct{ name, value string }

func counterFamily(name, help string, v float64) family {
	return family{name: name, help: help, kind: kindCounter, samples: []sample{{value: v}}}
}

func gaugeFamily(name, help string, v float64) family {
	return family{name: name, help: help, kind: kindGauge, samples: []sample{{value: v}}}
}

// sortSamples orders a family's series by their label values, label by
// label, as the client did.
func sortSamples(samples []sample) {
	slices.SortFunc(samples, func(a, b sample) int {
		for i := range min(len(a.labels), len(b.labels)) {
			if c := strings.Compare(a.labels[i].value, b.labels[i].value); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.labels), len(b.labels))
	})
}

// Handler serves the metrics in Prometheus' text format, gzipped when the
// scraper accepts it (Prometheus does). A part that cannot be read (a
// /proc file) leaves its families out rather than failing the scrape. The
// router admits GET alone and answers other methods 405 in the API's error
// shape.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		writeText(&body, m.gather())
		header := w.Header()
		header.Set("Content-Type", contentType)
		header.Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			header.Set("Content-Length", strconv.Itoa(body.Len()))
			_, _ = body.WriteTo(w)
			return
		}
		header.Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = body.WriteTo(zw)
		_ = zw.Close()
	})
}

// acceptsGzip reports whether an Accept-Encoding header lists gzip with
// a quality above 0.
func acceptsGzip(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, found := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !found {
			return true
		}
		quality, err := strconv.ParseFloat(q, 64)
		return err == nil && quality > 0
	}
	return false
}

// writeText writes families in the text format, sorted by name; a family
// without samples is left out.
func writeText(buf *bytes.Buffer, families []family) {
	slices.SortFunc(families, func(a, b family) int { return strings.Compare(a.name, b.name) })
	for _, f := range families {
		if len(f.samples) == 0 {
			continue
		}
		buf.WriteString("# HELP ")
		buf.WriteString(f.name)
		buf.WriteByte(' ')
		writeEscaped(buf, f.help, false)
		buf.WriteString("\n# TYPE ")
		buf.WriteString(f.name)
		buf.WriteByte(' ')
		buf.WriteString(f.kind)
		buf.WriteByte('\n')
		for _, s := range f.samples {
			writeSample(buf, f.name, s)
		}
	}
}

func writeSample(buf *bytes.Buffer, name string, s sample) {
	buf.WriteString(name)
	buf.WriteString(s.suffix)
	for i, l := range s.labels {
		if i == 0 {
			buf.WriteByte('{')
		} else {
			buf.WriteByte(',')
		}
		buf.WriteString(l.name)
		buf.WriteString(`="`)
		writeEscaped(buf, l.value, true)
		buf.WriteByte('"')
	}
	if len(s.labels) > 0 {
		buf.WriteByte('}')
	}
	buf.WriteByte(' ')
	if s.whole {
		buf.WriteString(strconv.FormatUint(uint64(s.value), 10))
	} else {
		buf.WriteString(formatFloat(s.value))
	}
	buf.WriteByte('\n')
}

// writeEscaped writes text with backslash and newline escaped, and the
// double quote too inside a label value (quoted).
func writeEscaped(buf *bytes.Buffer, text string, quoted bool) {
	for i := range len(text) {
		switch c := text[i]; {
		case c == '\\':
			buf.WriteString(`\\`)
		case c == '\n':
			buf.WriteString(`\n`)
		case c == '"' && quoted:
			buf.WriteString(`\"`)
		default:
			buf.WriteByte(c)
		}
	}
}
