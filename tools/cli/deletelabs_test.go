package cli

import (
	"strings"
	"testing"
)

// svclab's own kinds take their singular and plural names, as kubectl's
// kinds do.
func TestOwnKindsSingularAndPlural(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "lab"}, "labs"},
		{[]string{"get", "labs"}, "labs"},
		{[]string{"get", "cluster"}, "clusters"},
		{[]string{"get", "clusters"}, "clusters"},
		{[]string{"get", "leftover"}, "leftovers"},
		{[]string{"get", "leftovers"}, "leftovers"},
		{[]string{"delete", "lab"}, "lab"},
		{[]string{"delete", "labs"}, "lab"},
	} {
		if got := parsed(t, tc.args...).Name(); got != tc.want {
			t.Errorf("%q runs %q, want %q", tc.args, got, tc.want)
		}
	}
}

// delete lab refuses what it cannot do before deleting anything: no
// name, names with --all, a name that is no lab name.
func TestDeleteLabRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"delete", "lab"}, "a lab name is required (delete lab NAME…, or --name NAME), or --all for every lab"},
		{[]string{"delete", "labs"}, "a lab name is required"},
		{[]string{"delete", "lab", "--name", ""}, "--name: required"},
		{[]string{"delete", "labs", "--all", "web"}, "--all deletes every lab: give no names with it"},
		{[]string{"delete", "lab", "web", "Not_A_Name"}, `lab "Not_A_Name": `},
		{[]string{"delete", "lab", "--name", "Not_A_Name"}, `--name: `},
	} {
		out, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(out, "deleted") {
			t.Errorf("%q: %v (output %q), want an error with %q and nothing deleted", tc.args, err, out, tc.want)
		}
	}
}

// -o is checked before anything is read, for svclab's own kinds too.
func TestOwnKindsRefuseUnknownOutput(t *testing.T) {
	for _, args := range [][]string{
		{"get", "lab", "-o", "go-template={{.}}"},
		{"get", "clusters", "-o", "jsonpath={.items["},
		{"get", "leftovers", "-o", "custom-columns=NAME"},
	} {
		if _, err := run(args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// get kubeconfig needs a cluster's name, as kind get kubeconfig does
// (whose default, like create cluster's, is svclab).
func TestGetKubeconfigNeedsAName(t *testing.T) {
	if _, err := run("get", "kubeconfig", "--name", ""); err == nil || err.Error() != "--name: required" {
		t.Errorf("get kubeconfig --name '': %v", err)
	}
	if got := parsed(t, "get", "kubeconfig").Flags().Lookup("name").DefValue; got != "svclab" {
		t.Errorf("get kubeconfig's default --name is %q, want svclab (create cluster's)", got)
	}
}
