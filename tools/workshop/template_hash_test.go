package workshop

import "testing"

// The chain names the templates give are upstream's: an unnamed port hashes
// "ns/name" (no trailing colon) + protocol, a named one "ns/name:port".
func TestTemplateChainNamesMatchUpstreamVectors(t *testing.T) {
	for text, want := range map[string]string{
		`{{ svcChain "default" "nginx" "" "tcp" }}`:           "KUBE-SVC-2CMXP7HKUVJN7L6M", // seed 001's nginx
		`{{ svcChain "default" "kubernetes" "https" "tcp" }}`: "KUBE-SVC-NPX46M4PTMTKRN6Y",
		`{{ svcChain "kube-system" "kube-dns" "dns" "udp" }}`: "KUBE-SVC-TCOU7JCQXEZGVUNU",
		`{{ extChain "default" "httpserver" "http" "tcp" }}`:  "KUBE-EXT-Z2IMNHS35BQDS45H",
		`{{ svcChain "default" "mysql-service" "" "tcp" }}`:   "KUBE-SVC-G4UYIH746YNNDBV2", // seed 000's, today
	} {
		got, err := Expand(text, placeholderFacts{})
		if err != nil || got != want {
			t.Errorf("Expand(%s) = %q, %v; want %s", text, got, err, want)
		}
	}
}
