package upstream

import (
	"strings"
	"testing"

	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"
)

// TestSaveNormalizes checks each normalization of Save on a hand-made
// state: chain order, counters, nfacct, node-port address order and
// service order in the dispatch chains.
func TestSaveNormalizes(t *testing.T) {
	fake := iptablestest.NewFake()
	payload := `*filter
:KUBE-FORWARD - [5:300]
:KUBE-EXTERNAL-SERVICES - [0:0]
-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/b:p has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/a:p has no local endpoints" -m tcp -p tcp -d 1.2.3.5 --dport 80 -j DROP
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-EXT-X - [0:0]
-A KUBE-NODEPORTS -m comment --comment ns2/b:p -m tcp -p tcp -d 127.0.0.0/8 --dport 30001 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j KUBE-EXT-X
-A KUBE-NODEPORTS -m comment --comment ns2/b:p -m tcp -p tcp --dport 30001 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns2/b:p cluster IP" -m tcp -p tcp -d 10.96.0.2 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns1/a:p cluster IP" -m tcp -p tcp -d 10.96.0.1 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns1/a:p external IP" -m tcp -p tcp -d 1.2.3.5 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.10 -j KUBE-NODEPORTS
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS
COMMIT
`
	if err := fake.RestoreAll([]byte(payload), utiliptables.NoFlushTables, utiliptables.RestoreCounters); err != nil {
		t.Fatal(err)
	}
	got, err := Save(fake)
	if err != nil {
		t.Fatal(err)
	}
	want := `*filter
:INPUT - [0:0]
:FORWARD - [0:0]
:OUTPUT - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/a:p has no local endpoints" -m tcp -p tcp -d 1.2.3.5 --dport 80 -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/b:p has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
COMMIT
*nat
:PREROUTING - [0:0]
:INPUT - [0:0]
:OUTPUT - [0:0]
:POSTROUTING - [0:0]
:KUBE-EXT-X - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
-A KUBE-NODEPORTS -m comment --comment ns2/b:p -m tcp -p tcp --dport 30001 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns1/a:p cluster IP" -m tcp -p tcp -d 10.96.0.1 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns1/a:p external IP" -m tcp -p tcp -d 1.2.3.5 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "ns2/b:p cluster IP" -m tcp -p tcp -d 10.96.0.2 --dport 80 -j KUBE-EXT-X
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.10 -j KUBE-NODEPORTS
COMMIT
`
	if got != want {
		t.Errorf("Save:\n%s", UnifiedDiff(want, got))
	}
}

// TestParseCaseRejects checks that a bad case file is one clear error
// naming the field.
func TestParseCaseRejects(t *testing.T) {
	for name, c := range map[string]struct{ yaml, want string }{
		"no node":       {"objects: []\n", "node.name"},
		"unknown field": {"node: {name: a}\nopshuns: {}\n", "opshuns"},
		"bad kind":      {"node: {name: a}\nobjects:\n- {apiVersion: v1, kind: Pod}\n", "objects[0]: kind \"Pod\""},
		"bad node IP":   {"node: {name: a}\noptions: {nodeIP: x}\n", "options.nodeIP"},
		"bad bulk":      {"node: {name: a}\nbulkEndpoints: [{service: s, count: 0, firstIP: 10.0.0.1}]\n", "bulkEndpoints[0]: count 0"},
		"bad service":   {"node: {name: a}\nobjects:\n- {apiVersion: v1, kind: Service, spek: {}}\n", "objects[0]: kind Service"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseCase([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ParseCase = %v, want an error containing %q", err, c.want)
			}
		})
	}
}
