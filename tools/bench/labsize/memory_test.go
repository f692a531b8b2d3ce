package labsize

import (
	"strings"
	"testing"
)

func TestPSSIsReadInBytes(t *testing.T) {
	rollup := "55d0c6a4c000-7ffd3b7e2000 ---p 00000000 00:00 0                          [rollup]\n" +
		"Rss:               10240 kB\nPss:                4097 kB\nPss_Anon:           1024 kB\n"
	got, ok := pssOf([]byte(rollup))
	if !ok || got != 4097*1024 {
		t.Errorf("pssOf = %d, %v; want %d", got, ok, 4097*1024)
	}
	if _, ok := pssOf([]byte("Rss: 1 kB\n")); ok {
		t.Error("pssOf found a Pss in a file without one")
	}
}

func TestNodeCountsAreAscendingAndBounded(t *testing.T) {
	got, err := ParseNodeCounts("100, 10,50,10")
	if err != nil || len(got) != 3 || got[0] != 10 || got[1] != 50 || got[2] != 100 {
		t.Errorf("ParseNodeCounts = %v, %v; want [10 50 100]", got, err)
	}
	for _, bad := range []string{"0", "241", "ten", ""} {
		if _, err := ParseNodeCounts(bad); err == nil || !strings.Contains(err.Error(), "--nodes") {
			t.Errorf("ParseNodeCounts(%q) = %v; want an error naming --nodes", bad, err)
		}
	}
}

// A size whose estimate from the previous size would leave less than the
// floor is refused, with the numbers that refused it.
func TestRefusesASizeOverTheMemoryFloor(t *testing.T) {
	avail, err := memAvailable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{PodsPerNode: 10, MemoryFloor: 1 << 20}
	previous := &Size{Nodes: 1, Pods: 10, Footprint: Footprint{PSSBytes: avail / 10}} // 11 units take a tenth of what is free
	if why := o.refuse(Size{Nodes: 1, Pods: 10}, previous); why != "" {
		t.Errorf("the same size again was refused: %s", why)
	}
	if why := o.refuse(Size{Nodes: 100, Pods: 1000}, previous); !strings.Contains(why, "refused 100 nodes") {
		t.Errorf("a size needing ten times what is free was not refused: %q", why)
	}
}

func TestLongErrorsAreShortened(t *testing.T) {
	long := strings.Repeat("pod/x removed, ", 1000)
	got := shorten(long)
	if len(got) > maxErrorLen+40 || !strings.HasPrefix(got, long[:maxErrorLen]) || !strings.Contains(got, "more bytes") {
		t.Errorf("shorten kept %d bytes: %q…", len(got), got[:80])
	}
	if shorten("short") != "short" {
		t.Error("a short error was changed")
	}
}
