package flock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExclusiveAndShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "lock")
	l, err := Acquire(context.Background(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := TryAcquire(path); ok {
		t.Fatal("a held exclusive lock was taken again")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, path, false); err == nil {
		t.Fatal("a shared lock was granted while an exclusive one is held")
	}
	l.Unlock()
	l.Unlock() // twice is fine
	a, err := Acquire(context.Background(), path, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(context.Background(), path, false)
	if err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	if _, ok := TryAcquire(path); ok {
		t.Fatal("exclusive granted while shared ones are held")
	}
	a.Unlock()
	b.Unlock()
	if x, ok := TryAcquire(path); !ok {
		t.Fatal("exclusive not granted once free")
	} else {
		x.Unlock()
	}
}

func TestUnlinkedAfterTheFileIsRemovedOrReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := Acquire(context.Background(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if l.Unlinked(path) {
		t.Fatal("a fresh lock reports its file unlinked")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if !l.Unlinked(path) {
		t.Fatal("removed lock file not reported unlinked")
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !l.Unlinked(path) {
		t.Fatal("a new file in the lock's place not reported")
	}
}
