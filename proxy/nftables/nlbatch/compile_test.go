package nlbatch

import (
	"encoding/binary"
	"strings"
	"syscall"
	"testing"
)

// kubeProxySets are the types of the named sets and maps of an IPv4
// kube-proxy table, learned from its full render.
func kubeProxySets(t *testing.T) map[string]SetType {
	sets := map[string]SetType{}
	LearnSets("ip", "kube-proxy", readFile(t, captureTables["ip"]), sets)
	return sets
}

func TestLearnSetsKeepsTheTypesOfPlainSetsAndMaps(t *testing.T) {
	sets := kubeProxySets(t)
	for name, want := range map[string]string{
		"cluster-ips":         "ipv4_addr",
		"hairpin-connections": "ipv4_addr . ipv4_addr . inet_proto . inet_service",
		"service-ips":         "ipv4_addr . inet_proto . inet_service : verdict",
		"service-nodeports":   "inet_proto . inet_service : verdict",
	} {
		wantType, _ := parseSetType(want)
		if got, ok := sets[name]; !ok || !sameType(got, wantType) {
			t.Errorf("%s: learned %+v (%v), want %s", name, got, ok, want)
		}
	}
	LearnSets("ip", "kube-proxy", strings.Join([]string{
		`add set ip kube-proxy affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }`,
		`delete map ip kube-proxy service-nodeports`,
		`add set ip6 kube-proxy v6-only { type ipv6_addr ; }`,
	}, "\n"), sets)
	for _, name := range []string{"affinity-X", "service-nodeports", "v6-only"} {
		if _, ok := sets[name]; ok {
			t.Errorf("%s: learned, want a set with flags, a deleted map and another family's set left out", name)
		}
	}
	LearnSets("ip", "kube-proxy", "delete table ip kube-proxy", sets)
	if len(sets) != 0 {
		t.Errorf("after the table's deletion %d sets are still known", len(sets))
	}
}

func sameType(a, b SetType) bool {
	if a.verdict != b.verdict || len(a.key) != len(b.key) {
		return false
	}
	for i := range a.key {
		if a.key[i] != b.key[i] {
			return false
		}
	}
	return true
}

// TestCompileRefusesWhatItDoesNotKnow: any line outside the few a partial
// sync writes, or a known line with anything nft would read differently,
// leaves the whole transaction to nft.
func TestCompileRefusesWhatItDoesNotKnow(t *testing.T) {
	sets := kubeProxySets(t)
	sets["affinity-X"] = SetType{} // never learned in practice; refused by its zero type
	const service = "service-SUSTUHLJ-default/web/tcp/http"
	good := "add rule ip kube-proxy " + service + " meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.244.1.1 . 8080 , 1 : 10.244.2.9 . 8080 }"
	if _, ok := Compile("ip", "kube-proxy", good, sets); !ok {
		t.Fatalf("Compile refused the Service rule %q", good)
	}
	for _, line := range []string{
		"add table ip kube-proxy",
		"add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }",
		"flush set ip kube-proxy cluster-ips",
		"add rule ip6 kube-proxy " + service + " goto x",                                       // another family
		"add rule ip other " + service + " goto x",                                             // another table
		strings.Replace(good, "mod 2", "mod 0", 1),                                             // no modulus
		strings.Replace(good, "mod 2", "mod 02", 1),                                            // not as nft prints it
		strings.Replace(good, "10.244.2.9", "fd00::9", 1),                                      // IPv6 address in ip
		strings.Replace(good, "1 : 10.244.2.9", "0 : 10.244.2.9", 1),                           // duplicate key
		strings.Replace(good, " . 8080 }", " . 65536 }", 1),                                    // no such port
		strings.Replace(good, "tcp dnat", "icmp dnat", 1),                                      // protocol nft would name otherwise
		strings.Replace(good, "dnat ip addr", "snat ip addr", 1),                               // another statement
		good + ` comment "a "quoted" word"`,                                                    // quote in a comment
		good + ` counter`,                                                                      // anything after
		"add rule ip kube-proxy " + service + " mark set mark or 0x4000",                       // not eight digits
		"add rule ip kube-proxy " + service + " ip saddr != 10.0.0.0/8 goto x",                 // a negated match
		"add rule ip kube-proxy " + service + " ip saddr 10.0.0.1/8 goto x",                    // a prefix with host bits
		"add rule ip kube-proxy " + service + " ip saddr 0.0.0.0/0 goto x",                     // no prefix at all
		"add rule ip kube-proxy " + service + " ip6 saddr fd00::/8 goto x",                     // another family's match
		"add rule ip kube-proxy " + service + " ip saddr 10.0.0.0/8 drop",                      // a verdict without a chain
		"add rule ip kube-proxy " + service + " fib daddr type local goto x",                   // a fib match it does not know
		"add rule ip kube-proxy " + service + " ip saddr @cluster-ips goto x",                  // a set lookup
		"add rule ip kube-proxy " + service + " drop",                                          // a verdict without a chain
		"add element ip kube-proxy nodeport-ips { 10.0.0.1 }",                                  // not learned
		"add element ip kube-proxy affinity-X { 10.0.0.1 }",                                    // zero type
		`delete element ip kube-proxy no-endpoint-nodeports { tcp . 30080 comment "x" }`,       // a comment to delete
		`add element ip kube-proxy no-endpoint-nodeports { tcp . 30080 comment "a"b" : drop }`, // a quote in a comment
		`add element ip kube-proxy no-endpoint-nodeports { tcp . 30080 comment "" : drop }`,    // an empty comment
		"add element ip kube-proxy cluster-ips { 10.0.0.1 , 10.0.0.2 }",                        // two at once
		"add element ip kube-proxy cluster-ips { 10.0.0.1 : drop }",                            // data for a set
		"add element ip kube-proxy service-ips { 10.96.0.1 . tcp . 80 }",                       // a map's element added without its verdict
		"add element ip kube-proxy service-ips { 10.96.0.1 . tcp . 80 : continue }",
		"add element ip kube-proxy service-ips { 10.96.0.1 . 6 . 80 : drop }", // protocol by number
		"add element ip kube-proxy service-ips { 10.96.0.1%eth0 . tcp . 80 : drop }",
		"add chain ip kube-proxy " + strings.Repeat("c", maxNameLen), // name too long
		"add chain ip kube-proxy with space",
		"\n", // an empty line within
	} {
		if _, ok := Compile("ip", "kube-proxy", good+"\n"+line, sets); ok {
			t.Errorf("Compile took %q", line)
		}
	}
	if _, ok := Compile("inet", "kube-proxy", "add chain inet kube-proxy x", sets); ok {
		t.Error("Compile took family inet")
	}
}

// TestCompileNamesTheLineOfEachMessage: the kernel's error for a message
// is reported with the transaction's line it came from.
func TestCompileNamesTheLineOfEachMessage(t *testing.T) {
	text := readFile(t, "testdata/nft-1.0.6/ipv4-service.nft")
	b, ok := Compile("ip", "kube-proxy", text, kubeProxySets(t))
	if !ok {
		t.Fatal("Compile refused ipv4-service.nft")
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	// One message a line, and the rule's three: its map, the map's elements, the rule.
	want := []string{lines[0], lines[1], lines[2], lines[2], lines[2], lines[3], lines[4], lines[5]}
	if b.Messages() != len(want) {
		t.Fatalf("%d messages, want %d", b.Messages(), len(want))
	}
	for i, line := range want {
		if got := b.line(uint32(i + 1)); got != line {
			t.Errorf("message %d comes from %q, want %q", i+1, got, line)
		}
	}
	if b.line(0) != "" || b.line(uint32(len(want)+1)) != "" {
		t.Error("the batch's delimiters name a line")
	}
}

func TestFirstErrorReadsTheKernelsErrorForAMessage(t *testing.T) {
	b, _ := Compile("ip", "kube-proxy", "add chain ip kube-proxy a\nflush chain ip kube-proxy b", nil)
	answer := func(seq uint32, code int32) []byte {
		m := binary.NativeEndian.AppendUint32(nil, 20)
		m = binary.NativeEndian.AppendUint16(m, syscall.NLMSG_ERROR)
		m = binary.NativeEndian.AppendUint16(m, 0)
		m = binary.NativeEndian.AppendUint32(m, seq)
		m = binary.NativeEndian.AppendUint32(m, 0)
		return binary.NativeEndian.AppendUint32(m, uint32(code))
	}
	if err := b.firstError(answer(2, 0)); err != nil {
		t.Errorf("an acknowledgement read as %v", err)
	}
	err := b.firstError(answer(2, -int32(syscall.ENOENT)))
	if err == nil || !strings.Contains(err.Error(), `"flush chain ip kube-proxy b"`) || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("ENOENT for message 2 read as %v", err)
	}
}
