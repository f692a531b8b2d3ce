package vm

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestTmpBench(t *testing.T) {
	if os.Getenv("TMPBENCH") == "" {
		t.Skip()
	}
	for i := 0; i < 3; i++ {
		start := time.Now()
		code, err := Run(context.Background(), Options{Command: []string{"true"}, Console: os.Stderr, Stdout: os.Stdout, Stderr: os.Stderr})
		t.Logf("exit %d err %v in %s", code, err, time.Since(start))
	}
}
