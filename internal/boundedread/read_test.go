package boundedread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadFileWithinLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFile(path, 5)
	if err != nil || string(data) != "hello" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	if _, err := ReadFile(path, 4); !IsTooLarge(err) || err.Error() != path+": larger than 4 bytes, the limit for this input" {
		t.Errorf("ReadFile over the limit = %v", err)
	}
}

// TestReadFileEndlessDevice is the `create lab --config /dev/zero` case:
// an endless input fails fast instead of being read to the end.
func TestReadFileEndlessDevice(t *testing.T) {
	start := time.Now()
	_, err := ReadFile("/dev/zero", 1<<20)
	if !IsTooLarge(err) || !strings.Contains(err.Error(), "/dev/zero: larger than 1 MiB") {
		t.Fatalf("ReadFile(/dev/zero) = %v, want a too-large error", err)
	}
	// A product promise with a huge margin: 1 MiB read takes milliseconds,
	// reading to the end never ends.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{100: "100 bytes", 4 << 20: "4 MiB", 512 << 10: "512 KiB", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
