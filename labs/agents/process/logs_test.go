package process

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteLogTail(t *testing.T) {
	for _, tc := range []struct {
		content string
		tail    int
		want    string
	}{
		{"a\nb\nc\n", -1, "a\nb\nc\n"},
		{"a\nb\nc\n", 0, ""},
		{"a\nb\nc\n", 1, "c\n"},
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc\n", 3, "a\nb\nc\n"},
		{"a\nb\nc\n", 10, "a\nb\nc\n"},
		{"a\nb\nc", 1, "c"},
		{"a\nb\nc", 2, "b\nc"},
		{"", 5, ""},
		{"\n\n", 1, "\n"},
	} {
		path := filepath.Join(t.TempDir(), "log")
		os.WriteFile(path, []byte(tc.content), 0o644)
		var out bytes.Buffer
		if err := WriteLog(context.Background(), path, &out, tc.tail, false); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("tail %d of %q = %q, want %q", tc.tail, tc.content, out.String(), tc.want)
		}
	}
}

// TestWriteLogTailAcrossBlocks finds the last lines further back than one
// read block.
func TestWriteLogTailAcrossBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	long := bytes.Repeat([]byte("x"), 3*tailBlock)
	os.WriteFile(path, append(append([]byte("first\n"), long...), "\nlast\n"...), 0o644)
	var out bytes.Buffer
	WriteLog(context.Background(), path, &out, 2, false)
	if want := string(long) + "\nlast\n"; out.String() != want {
		t.Errorf("tail 2: got %d bytes, want %d", out.Len(), len(want))
	}
}

// syncBuffer is a bytes.Buffer safe to read while WriteLog writes it.
type syncBuffer struct {
	ch chan []byte
}

func (b syncBuffer) Write(p []byte) (int, error) {
	b.ch <- append([]byte(nil), p...)
	return len(p), nil
}

func TestWriteLogFollowsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	os.WriteFile(path, []byte("old\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	out := syncBuffer{ch: make(chan []byte, 16)}
	done := make(chan error, 1)
	go func() { done <- WriteLog(ctx, path, out, 1, true) }()
	if got := string(<-out.ch); got != "old\n" {
		t.Fatalf("first write %q", got)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("new\n")
	f.Close()
	select {
	case got := <-out.ch:
		if string(got) != "new\n" {
			t.Errorf("followed %q, want %q", got, "new\n")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the appended line never came")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("follow ended with %v, want nil when its context ends", err)
	}
}
