package report

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// FuzzRenderers builds a result from the bytes (modes, sizes and times,
// also NaN, infinities and negatives) and checks that every renderer
// succeeds, that the SVG is well-formed XML and that no NaN or Inf reaches
// its coordinates.
func FuzzRenderers(f *testing.F) {
	f.Add([]byte("iptables\x00\x10\x20\x30\x40\x50\x60\x70\x80"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf8, 0x7f, 1, 2, 3})
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := resultFrom(data)
		var b bytes.Buffer
		if err := WriteSVG(&b, r); err != nil {
			t.Fatal(err)
		}
		svg := b.String()
		wellFormed(t, b.Bytes())
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Fatalf("NaN or Inf in the SVG:\n%s", svg)
		}
		if err := WriteTable(&bytes.Buffer{}, r); err != nil {
			t.Fatal(err)
		}
	})
}

// resultFrom reads runs of (mode index, services, total ms, p99 ms) from
// data.
func resultFrom(data []byte) *Result {
	modes := []string{"iptables", "nftables", "ipvs", "x<&>"}
	r := &Result{Machine: Machine{CPUs: 2, Kernel: "k"}}
	for len(data) >= 11 && len(r.Runs) < 50 {
		mode := modes[int(data[0])%len(modes)]
		n := int(binary.LittleEndian.Uint16(data[1:3]))
		v := math.Float64frombits(binary.LittleEndian.Uint64(data[3:11]))
		data = data[11:]
		r.Runs = append(r.Runs, Run{Mode: mode, Services: n,
			Programming: &Programming{TotalMs: v, ProxyMs: v, RuleFound: true},
			Late:        &Latency{N: 1, P99Ms: v / 3}, CPU: &CPU{}})
	}
	return r
}
