package kubeprint

import (
	"bytes"
	"strings"
	"testing"
)

// -o jsonpath, jsonpath-as-json and custom-columns print as kubectl does:
// on a List (several objects) or on the object itself (Single).
func TestPrintTemplates(t *testing.T) {
	for _, tc := range []struct {
		output    string
		single    bool
		noHeaders bool
		want      string
	}{
		{output: "jsonpath={.items[*].metadata.name}", want: "web-a web-b web-c web-d kube-proxy-node1"},
		{output: "jsonpath={.metadata.name} {.status.podIP}", single: true, want: "web-a 10.244.1.2"},
		{output: "jsonpath={.metadata.nosuchkey}", single: true, want: ""},
		{output: `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, want: "web-a\nweb-b\nweb-c\nweb-d\nkube-proxy-node1\n"},
		{output: "jsonpath-as-json={.metadata.name}", single: true, want: "[\n    \"web-a\"\n]\n"},
		{output: "custom-columns=NAME:.metadata.name,IP:status.podIP,NODE:{.spec.nodeName}", want: "" +
			"NAME               IP              NODE\n" +
			"web-a              10.244.1.2      node1\n" +
			"web-b              10.244.1.3      node1\n" +
			"web-c              10.244.1.4      node1\n" +
			"web-d              <none>          node2\n" +
			"kube-proxy-node1   192.168.16.73   node1\n"},
		{output: "custom-columns=NAME:metadata.name", single: true, noHeaders: true, want: "web-a\n"},
	} {
		var buf bytes.Buffer
		objs := pods()
		if tc.single {
			objs = objs[:1]
		}
		if err := CheckOutput(tc.output); err != nil {
			t.Errorf("CheckOutput(%q): %v", tc.output, err)
		}
		if err := Print(&buf, objs, Options{Output: tc.output, Single: tc.single, NoHeaders: tc.noHeaders, Now: now}); err != nil {
			t.Errorf("-o %s: %v", tc.output, err)
			continue
		}
		if buf.String() != tc.want {
			t.Errorf("-o %s:\n%q\nwant\n%q", tc.output, buf.String(), tc.want)
		}
	}
}

// A template that does not parse, or a format without its argument, is
// refused before anything is read, as kubectl refuses it.
func TestCheckOutputRefusesBadTemplates(t *testing.T) {
	for output, want := range map[string]string{
		"jsonpath":                       "template format specified but no template given",
		"jsonpath={.items[":              "error parsing jsonpath {.items[",
		"custom-columns=":                "no custom columns given",
		"custom-columns=NAME":            "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>",
		"custom-columns=NAME:{a}{b}":     "unexpected path string",
		"go-template={{.metadata.name}}": "allowed formats are: custom-columns,json,jsonpath,jsonpath-as-json,name,wide,yaml",
	} {
		if err := CheckOutput(output); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOutput(%q) = %v, want an error with %q", output, err, want)
		}
	}
}
