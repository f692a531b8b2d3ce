package topology

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseReportsEveryProblem: a student with several mistakes in a lab
// file sees all of them in one run, one line each naming the file and the
// field, in the file's order (a value that does not parse among the
// others), and no line that only follows from another.
func TestParseReportsEveryProblem(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "several-mistakes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(data, "lab.yaml")
	want := []string{
		`topology lab.yaml: metadata.name "Basic_1": not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit`,
		`topology lab.yaml: spec.cni "cilium": unknown CNI (one of "flannel-vxlan", "calico-proxyarp", "canal")`,
		`topology lab.yaml: spec.serviceSubnet "10.96.0/16": invalid CIDR`,
		`topology lab.yaml: spec.nodes[0].ip "192.168.16.73": missing prefix length: write address/length, e.g. 192.168.16.73/24`,
		`topology lab.yaml: spec.nodes[1].name "router": reserved for the lab's edge router`,
		`topology lab.yaml: spec.nodes[1].podCIDR "10.245.2.0/24": not inside spec.podSubnet 10.244.0.0/16`,
		`topology lab.yaml: spec.clients[0].ip "192.168.16.74/20": duplicate address (already used by spec.nodes[1].ip)`,
		`topology lab.yaml: spec.externalIPs[0] "127.0.0.0/24": holds loopback (127.0.0.0/8) addresses, which no Service may have`,
	}
	if err == nil {
		t.Fatal("Parse accepted a file with several mistakes")
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	var first *Error
	if !errors.As(err, &first) || first.Field != "metadata.name" {
		t.Errorf("errors.As gives %v, want the first problem, of metadata.name", first)
	}
}

// TestOneProblemPerField: a field says its first problem only, and a check
// that needs a field with a problem is skipped, so each line is a mistake
// to fix.
func TestOneProblemPerField(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // the whole message: one line
	}{
		{"unparsable podSubnet: no podCIDR is outside it", edit(t, "podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/33"),
			`topology x.yaml: spec.podSubnet "10.244.0.0/33": invalid CIDR`},
		{"serviceSubnet not a network: the hosts inside it are not compared with it", edit(t, "10.96.0.0/16", "192.168.0.0/12"),
			`topology x.yaml: spec.serviceSubnet "192.168.0.0/12": not a network address (did you mean 192.160.0.0/12?)`},
		{"podCIDR that does not parse is not also required", edit(t, "10.244.2.0/24", "10.244.2.0/99"),
			`topology x.yaml: spec.nodes[1].podCIDR "10.244.2.0/99": invalid CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "x.yaml")
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse = %v\nwant %s", err, tt.want)
			}
		})
	}
}
