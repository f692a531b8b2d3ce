package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/internal/roottest"
)

// txnSlice is a selector-less Service's hand-written EndpointSlice with one
// address: applied alone, it is a change of that slice only (the lab's
// journal records a delta, not every object).
const txnSlice = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: hand-1
  labels: {kubernetes.io/service-name: hand}
addressType: IPv4
endpoints: [{addresses: ["ADDR"]}]
ports: [{port: 8080}]
`

// TestIntegrationKilledSliceApplyIsRecoverable: an apply of one slice
// killed at each step of its journal (committed, stored) is finished by
// the next command (an apply of something else): the store holds the new slice, the journal is clear.
func TestIntegrationKilledSliceApplyIsRecoverable(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	l := newTxnLab(t, roottest.SharedBinary(t), "kslice")
	if out, code := l.run(nil, "create", "lab", "--config", l.topo); code != 0 {
		t.Fatalf("create (exit %d):\n%s", code, out)
	}
	svc := filepath.Join(l.dir, "svc.yaml")
	if err := os.WriteFile(svc, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: hand}\nspec: {ports: [{port: 80}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := l.run(nil, "apply", "--lab", l.name, "-f", svc, "-f", l.slice("10.244.1.100")); code != 0 {
		t.Fatalf("apply (exit %d):\n%s", code, out)
	}
	for _, kill := range []struct{ step, addr string }{
		{"update:commit", "10.244.1.101"},
		{"update:objects", "10.244.1.102"},
	} {
		l.crash(kill.step, "apply", "--lab", l.name, "-f", l.slice(kill.addr))
		if out, code := l.run(nil, "get", "labs"); code != 0 || !lineHas(out, l.name, "incomplete (apply interrupted") {
			t.Errorf("get labs after a kill at %s (exit %d):\n%s", kill.step, code, out)
		}
		out, code := l.run(nil, "apply", "--lab", l.name, "-f", svc) // the Service again: the slice only from the journal
		if code != 0 || !strings.Contains(out, "was finished") {
			t.Errorf("the command after a kill at %s (exit %d) did not say it finished the apply:\n%s", kill.step, code, out)
		}
		st := labstore.Open(l.name)
		sl, err := st.ReadEndpointSlice("default", "hand-1")
		if err != nil || sl == nil || sl.Endpoints[0].Addresses[0] != kill.addr {
			t.Errorf("after a kill at %s and the next command: slice %+v, %v; want %s", kill.step, sl, err, kill.addr)
		}
		if in, err := st.ReadIntent(); in != nil || err != nil {
			t.Errorf("journal after a kill at %s and the next command: %+v, %v", kill.step, in, err)
		}
	}
}

// slice writes txnSlice with addr and returns its path.
func (l *txnLab) slice(addr string) string {
	path := filepath.Join(l.dir, "slice-"+addr+".yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(txnSlice, "ADDR", addr, 1)), 0o644); err != nil {
		l.t.Fatal(err)
	}
	return path
}
