package workload

import (
	"fmt"
	"strings"
	"testing"
)

// TestAppendNumbersDocumentsOnAndKeepsOrder decodes two parts and checks
// that the whole names the second part's documents after the first's and
// lists every object in document order.
func TestAppendNumbersDocumentsOnAndKeepsOrder(t *testing.T) {
	part := func(from, n int) *Manifests {
		var docs []string
		for i := from; i < from+n; i++ {
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec:\n  ports: [{port: 80}]\n", i))
		}
		m, err := Decode([]byte(strings.Join(docs, "---\n")), "gen")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := part(0, 2)
	m.Append(part(2, 3))
	if len(m.Services) != 5 || len(m.order) != 5 {
		t.Fatalf("got %d services, %d in order; want 5", len(m.Services), len(m.order))
	}
	for i, svc := range m.Services {
		if want := fmt.Sprintf("s%d", i); svc.Name != want {
			t.Errorf("service %d is %s, want %s", i, svc.Name, want)
		}
		if got, want := m.where("gen", svc), fmt.Sprintf("gen: document %d", i+1); got != want {
			t.Errorf("where(%s) = %q, want %q", svc.Name, got, want)
		}
	}
}
