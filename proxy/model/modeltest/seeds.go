package modeltest

import (
	"bytes"
	"testing"

	"github.com/svclab/svclab/proxy/model"
)

// Snapshot is the proxy's view of Generate(data) on NodeName.
func Snapshot(data []byte) *model.Snapshot {
	services, slices := Generate(data)
	return model.Build(services, slices, NodeName)
}

// AddSeeds gives a fuzz target of the form (options byte, first, second
// []byte) — two generated states and a byte of settings — its seed corpus:
// empty states, a small hand-picked one, and long repetitive inputs that
// reach every kind of object Generate makes.
func AddSeeds(f *testing.F) {
	f.Add(byte(0), []byte{}, []byte{})
	f.Add(byte(1), []byte{3, 1, 0, 0, 2, 1, 0, 0, 1, 0, 2, 5, 0, 1, 1, 1, 1}, []byte{3, 1, 0, 0, 2, 1, 0, 0, 1, 0, 2, 4})
	f.Add(byte(0x55), bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 40), bytes.Repeat([]byte{1, 2, 3, 4, 5, 6}, 40))
	f.Add(byte(0xaa), bytes.Repeat([]byte{2, 7, 1, 8, 2, 8, 1, 8, 2, 8}, 30), []byte{5})
	f.Add(byte(0xff), bytes.Repeat([]byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 30), bytes.Repeat([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1}, 30))
}
