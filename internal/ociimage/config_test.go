package ociimage_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/svclab/svclab/internal/golden"
)

// TestConfigGolden: the configuration of the image of two given binaries,
// whole (platform, entrypoint, labels, the layer's uncompressed digest,
// history), so that any change to what the image holds or says is seen
// in review.
func TestConfigGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("skipped: the golden configuration is linux/amd64's, this is %s", runtime.GOARCH)
	}
	img := build(t, binaries(t, "svclab v1", "conformance v1"))
	raw, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	golden.Check(t, "config.json", out.Bytes())
}
