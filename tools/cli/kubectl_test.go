package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/svclab/svclab/internal/buildinfo"
)

// run executes svclab's root command with args and returns what it wrote
// (stdout and stderr together) and its error.
func run(args ...string) (string, error) {
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// parsed finds the command args name and parses its flags, without
// running it.
func parsed(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	cmd, rest, err := newRoot().Find(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return cmd
}

// TestNamespaceFlagEverywhere: -n is the namespace in every command that
// has one, with kubectl's default; traffic's count is -c/--count, and -n
// is not a flag of traffic any more.
func TestNamespaceFlagEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"get", "pods", "-n", "kube-system"}, {"get", "svc", "-n", "kube-system"}, {"get", "endpointslices", "-n", "kube-system"},
		{"get", "cm", "-n", "kube-system"}, {"describe", "pod", "-n", "kube-system"}, {"describe", "service", "-n", "kube-system"},
		{"logs", "-n", "kube-system"}, {"delete", "pod", "-n", "kube-system"}, {"edit", "configmap", "-n", "kube-system"},
	} {
		if got := flagValue(parsed(t, args...), "namespace"); got != "kube-system" {
			t.Errorf("%q: namespace %q", args, got)
		}
	}
	if got := flagValue(parsed(t, "get", "pods"), "namespace"); got != metav1.NamespaceDefault {
		t.Errorf("get pods: default namespace %q, want default", got)
	}
	for _, args := range [][]string{{"get", "nodes"}, {"get", "ns"}} {
		if parsed(t, args...).Flags().Lookup("namespace") != nil {
			t.Errorf("%q: a cluster-scoped kind has a --namespace flag", args)
		}
	}
	traffic := parsed(t, "traffic", "-c", "42", "--expect", "a=2,b=1", "--alpha", "1e-3")
	if flagValue(traffic, "count") != "42" || flagValue(traffic, "expect") != "[a=2,b=1]" || flagValue(traffic, "alpha") != "0.001" {
		t.Errorf("traffic -c 42 --expect a=2,b=1 --alpha 1e-3: count %s, expect %s, alpha %s",
			flagValue(traffic, "count"), flagValue(traffic, "expect"), flagValue(traffic, "alpha"))
	}
	if _, err := run("traffic", "--to", "127.0.0.1:1", "-n", "5"); err == nil || !strings.Contains(err.Error(), "-n") {
		t.Errorf("traffic -n 5: %v, want an unknown shorthand flag error", err)
	}
}

func TestGetFlags(t *testing.T) {
	cmd := parsed(t, "get", "po", "-A", "-l", "app=web,tier!=db", "-o", "wide", "--lab", "x", "--no-headers", "--show-labels")
	for flag, want := range map[string]string{"all-namespaces": "true", "selector": "app=web,tier!=db", "output": "wide", "lab": "x", "no-headers": "true", "show-labels": "true"} {
		if got := flagValue(cmd, flag); got != want {
			t.Errorf("get po: --%s = %q, want %q", flag, got, want)
		}
	}
	if _, err := run("get", "pods,secrets"); err == nil || !strings.Contains(err.Error(), `doesn't have a resource type "secrets"`) {
		t.Errorf("get pods,secrets: %v, want kubectl's unknown resource type", err)
	}
	for _, args := range [][]string{
		{"get", "svc,pods", "web"},
		{"get", "pods", "-o", "jsonpath"},
		{"get", "pods", "a", "-l", "app=web"},
		{"get", "pods", "a", "-A"},
	} {
		if _, err := run(args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestRequiredFlagsAreMarked: cobra refuses these commands without their
// required flags, naming them, before anything runs.
func TestRequiredFlagsAreMarked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"create", "lab"}, "config"},
		{[]string{"create", "cluster"}, "config"},
		{[]string{"delete", "cluster"}, "name"},
		{[]string{"apply"}, "filename"},
		{[]string{"traffic"}, "to"},
		{[]string{"supervise", "true"}, "lab-dir"},
	} {
		_, err := run(tc.args...)
		if err == nil || !strings.Contains(err.Error(), `required flag(s)`) || !strings.Contains(err.Error(), `"`+tc.flag+`"`) {
			t.Errorf("%q without --%s: %v", tc.args, tc.flag, err)
		}
	}
}

// TestSelection is get's and describe's choice of objects: the namespace,
// -A, -l and names, with kubectl's errors.
func TestSelection(t *testing.T) {
	pods, _ := resourceNamed("po")
	nodes, _ := resourceNamed("no")
	pod := func(ns, name, app string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
	}
	objs := []runtime.Object{pod("default", "web-a", "web"), pod("default", "db-a", "db"), pod("kube-system", "kube-proxy-n1", "")}
	names := func(objs []runtime.Object) string {
		var out []string
		for _, o := range objs {
			out = append(out, o.(metav1.Object).GetName())
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		sel  selection
		want string
	}{
		{selection{namespace: "default"}, "web-a,db-a"},
		{selection{namespace: "kube-system"}, "kube-proxy-n1"},
		{selection{allNamespaces: true}, "web-a,db-a,kube-proxy-n1"},
		{selection{namespace: "default", selector: "app=web"}, "web-a"},
		{selection{allNamespaces: true, selector: "app in (web,db)"}, "web-a,db-a"},
		{selection{allNamespaces: true, selector: "!app"}, ""},
		{selection{namespace: "default", names: []string{"db-a", "web-a"}}, "db-a,web-a"},
	} {
		got, notFound, err := tc.sel.pick(pods, objs)
		if err != nil || notFound != nil || names(got) != tc.want {
			t.Errorf("%+v: %s (%v, %v), want %s", tc.sel, names(got), notFound, err, tc.want)
		}
	}
	got, notFound, _ := selection{namespace: "default", names: []string{"web-a", "nope"}}.pick(pods, objs)
	if names(got) != "web-a" || notFound == nil || notFound.Error() != `pods "nope" not found` {
		t.Errorf("web-a and nope: %s, %v; want web-a and kubectl's not found", names(got), notFound)
	}
	if _, _, err := (selection{selector: "app in ("}).pick(pods, objs); err == nil {
		t.Error("-l 'app in (': no error")
	}
	if got, _, _ := (selection{namespace: "elsewhere"}).pick(nodes, []runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}); names(got) != "n1" {
		t.Errorf("nodes ignore the namespace: got %q", names(got))
	}
	if msg := (selection{namespace: "default"}).noResources(pods); msg != "No resources found in default namespace." {
		t.Errorf("no pods: %q", msg)
	}
	if msg := (selection{namespace: "default"}).noResources(nodes); msg != "No resources found" {
		t.Errorf("no nodes: %q", msg)
	}
}

// TestResourceNames: kubectl's plural, singular and short names.
func TestResourceNames(t *testing.T) {
	for name, plural := range map[string]string{
		"po": "pods", "pod": "pods", "svc": "services", "service": "services", "endpointslice": "endpointslices",
		"cm": "configmaps", "ns": "namespaces", "no": "nodes", "node": "nodes",
	} {
		if r, ok := resourceNamed(name); !ok || r.plural != plural {
			t.Errorf("%s: %v %v, want %s", name, r.plural, ok, plural)
		}
	}
	if _, ok := resourceNamed("ep"); ok {
		t.Error("ep names a kind: the lab has EndpointSlices, not Endpoints")
	}
}

// complete runs cobra's hidden __complete command, as the shell scripts
// do, and returns the completions (the directive line dropped).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := run(append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if err != nil {
		t.Fatalf("__complete %q: %v", args, err)
	}
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, ":") && !strings.HasPrefix(line, "Completion ended") {
			words = append(words, strings.SplitN(line, "\t", 2)[0])
		}
	}
	return words
}

func TestCompletion(t *testing.T) {
	kinds := complete(t, "get", "")
	for _, want := range []string{"pods", "services", "endpointslices", "configmaps", "namespaces", "nodes", "deployments", "replicasets", "statefulsets", "daemonsets", "labs", "clusters", "leftovers"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("__complete get '': %v lacks %s", kinds, want)
		}
	}
	if got := complete(t, "get", "pods", "-o", ""); !slices.Equal(got, []string{"wide", "json", "yaml", "name", "jsonpath", "jsonpath-as-json", "custom-columns"}) {
		t.Errorf("__complete get pods -o '': %v", got)
	}
	if got := complete(t, "version", "-o", ""); !slices.Equal(got, []string{"json", "yaml"}) {
		t.Errorf("__complete version -o '': %v", got)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out, err := run("completion", shell); err != nil || !strings.Contains(out, "svclab") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: %v, %d bytes without a call of __complete", shell, err, len(out))
		}
	}
}

// hostnameServer answers GET /hostname with a or b: b for every third
// request, so 600 connections split exactly 400/200.
func hostnameServer(t *testing.T) string {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			fmt.Fprint(w, "b")
			return
		}
		fmt.Fprint(w, "a")
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestTrafficExitStatus: traffic's verdict is its exit status. 600
// connections split 400/200 pass --expect a=2,b=1 (statistic 0) and fail
// the uniform split (statistic 66.7 on 1 degree of freedom, p 3.2e-16 <
// alpha 1e-6); -o json carries the verdict.
func TestTrafficExitStatus(t *testing.T) {
	addr := hostnameServer(t)
	stdout, stderr := os.Stdout, os.Stderr
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	os.Stdout, os.Stderr = devnull, devnull
	defer func() { os.Stdout, os.Stderr = stdout, stderr }()
	if code := Main([]string{"traffic", "--to", addr, "-c", "600", "--parallel", "1", "--expect", "a=2,b=1"}); code != 0 {
		t.Errorf("400/200 against --expect a=2,b=1: exit %d, want 0", code)
	}
	os.Stdout = stdout
	out, err := run("traffic", "--to", addr, "-c", "600", "--parallel", "1", "-o", "json")
	if err == nil || !strings.Contains(err.Error(), "not split as expected") {
		t.Errorf("400/200 against a uniform split: %v, want a failed verdict", err)
	}
	var rep struct {
		Verdict string
		PValue  float64
		Alpha   float64
	}
	if json.Unmarshal([]byte(out), &rep) != nil || rep.Verdict != "fail" || rep.PValue > 1e-15 || rep.Alpha != 1e-6 {
		t.Errorf("-o json: %s", out)
	}
	os.Stdout = devnull
	if code := Main([]string{"traffic", "--to", addr, "-c", "600", "--parallel", "1"}); code != 1 {
		t.Errorf("400/200 against a uniform split: exit %d, want 1", code)
	}
}

func TestVersionOutput(t *testing.T) {
	info := buildinfo.Info{Version: "v0.3.0", Revision: "0123456789ab", Modified: true, GoVersion: "go1.26.8",
		KubernetesAPI: "v1.37.2", APIModule: "v0.37.2", Platform: "linux/amd64"}
	var text, js bytes.Buffer
	writeVersion(&text, info, "")
	want := "svclab version: v0.3.0\nRevision: 0123456789ab (modified)\nGo version: go1.26.8 (linux/amd64)\nKubernetes: v1.36.4 (svclab's proxy and kind clusters)\nClient libraries: k8s.io/api v0.37.2\n"
	if text.String() != want {
		t.Errorf("version:\n%s\nwant:\n%s", text.String(), want)
	}
	writeVersion(&js, info, "json")
	var got versionOutput
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got.SvclabVersion != info || got.KubernetesVersion != "v1.36.4" {
		t.Errorf("version -o json: %s (%v)", js.String(), err)
	}
	if err := writeVersion(&js, info, "xml"); err == nil {
		t.Error("version -o xml: no error")
	}
	// A test binary records no dependencies: only the shape is checked.
	if out, err := run("version", "-o", "yaml"); err != nil || !strings.Contains(out, "svclabVersion:\n  apiModule:") {
		t.Errorf("svclab version -o yaml (the test binary's build info): %v\n%s", err, out)
	}
}
