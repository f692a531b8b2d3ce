package kube

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestRequestAttributes: paths and methods as the API server's
// authorizer reads them.
func TestRequestAttributes(t *testing.T) {
	for _, c := range []struct {
		method, path, watch string
		want                apiRequest
	}{
		{"GET", "/api/v1/nodes", "", apiRequest{Verb: "list", Resource: "nodes"}},
		{"GET", "/api/v1/namespaces", "", apiRequest{Verb: "list", Resource: "namespaces"}},
		{"POST", "/api/v1/namespaces", "", apiRequest{Verb: "create", Resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/svclab-x", "", apiRequest{Verb: "get", Resource: "namespaces", Name: "svclab-x"}},
		{"DELETE", "/api/v1/namespaces/svclab-x", "", apiRequest{Verb: "delete", Resource: "namespaces", Name: "svclab-x"}},
		{"PUT", "/api/v1/namespaces/svclab-x/finalize", "", apiRequest{Verb: "update", Resource: "namespaces", Name: "svclab-x", Subresource: "finalize"}},
		{"GET", "/api/v1/namespaces/ns/pods", "", apiRequest{Verb: "list", Resource: "pods", Namespace: "ns"}},
		{"GET", "/api/v1/namespaces/ns/pods", "true", apiRequest{Verb: "watch", Resource: "pods", Namespace: "ns"}},
		{"POST", "/api/v1/namespaces/ns/pods/p/exec", "", apiRequest{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "ns", Name: "p"}},
		{"GET", "/api/v1/namespaces/ns/pods/p/exec", "", apiRequest{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "ns", Name: "p"}},
		{"DELETE", "/api/v1/namespaces/ns/pods", "", apiRequest{Verb: "deletecollection", Resource: "pods", Namespace: "ns"}},
		{"PUT", "/api/v1/namespaces/kube-system/configmaps/kube-proxy", "", apiRequest{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "kube-proxy"}},
		{"GET", "/apis/apps/v1/namespaces/ns/daemonsets/a", "", apiRequest{Verb: "get", Group: "apps", Resource: "daemonsets", Namespace: "ns", Name: "a"}},
		{"GET", "/apis/apps/v1/daemonsets", "", apiRequest{Verb: "list", Group: "apps", Resource: "daemonsets"}},
		{"PATCH", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "", apiRequest{Verb: "patch", Group: "coordination.k8s.io", Resource: "leases", Namespace: "ns", Name: "l"}},
		{"GET", "/prefix/api/v1/nodes", "", apiRequest{Verb: "list", Resource: "nodes"}},
		{"GET", "/api", "", apiRequest{Verb: "get", NonResourcePath: "/api"}},
		{"GET", "/api/v1", "", apiRequest{Verb: "get", NonResourcePath: "/api/v1"}},
		{"GET", "/apis/apps/v1", "", apiRequest{Verb: "get", NonResourcePath: "/apis/apps/v1"}},
		{"GET", "/version", "", apiRequest{Verb: "get", NonResourcePath: "/version"}},
	} {
		if got := requestAttributes(c.method, c.path, c.watch); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.method, c.path, got, c.want)
		}
	}
}

// TestRequestString: "VERB RESOURCE in NAMESPACE", as a 403 says it.
func TestRequestString(t *testing.T) {
	for req, want := range map[apiRequest]string{
		{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "ns", Name: "p"}: "create pods/exec p in ns",
		{Verb: "list", Resource: "nodes"}: "list nodes cluster-wide",
		{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "kube-proxy"}:               "update configmaps kube-proxy in kube-system",
		{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "ns", Name: RunLeaseName}: "get leases.coordination.k8s.io " + RunLeaseName + " in ns",
	} {
		if got := req.String(); got != want {
			t.Errorf("%+v: %q, want %q", req, got, want)
		}
	}
}

// TestGrants: names and namespaces limit rules as RBAC does.
func TestGrants(t *testing.T) {
	roles, err := Permissions("kube-system/kube-proxy")
	if err != nil {
		t.Fatal(err)
	}
	for req, want := range map[apiRequest]string{
		{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "kube-proxy"}: DisruptiveRoleName,
		{Verb: "update", Resource: "configmaps", Namespace: "kube-system", Name: "coredns"}:    "",
		{Verb: "update", Resource: "configmaps", Namespace: "default", Name: "kube-proxy"}:     "",
		{Verb: "get", Resource: "configmaps", Namespace: "kube-system", Name: "kube-proxy"}:    ProxyConfigRoleName,
		{Verb: "list", Resource: "configmaps", Namespace: "kube-system"}:                       "",
		{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "any", Name: "p"}:   ClusterRoleName,
		{Verb: "get", Resource: "secrets", Namespace: "kube-system", Name: "x"}:                "",
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "n"}:     "",
		{Verb: "delete", Resource: "pods", Namespace: "kube-system", Name: "kube-proxy-abcde"}: ClusterRoleName,
		{Verb: "get", Resource: "configmaps", Namespace: "cilium", Name: "cilium-config"}:      ClusterRoleName,
	} {
		g, ok := grants(roles, req)
		if got := g.Role.Name; !ok && got != "" || ok && got != want || !ok && want != "" {
			t.Errorf("%s: granted by %q (%v), want %q", req, got, ok, want)
		}
	}
}

// TestGuardRefusesACallOutsideTheTable: a request no rule grants fails
// before it is sent, saying where the table is.
func TestGuardRefusesACallOutsideTheTable(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	roles, _ := Permissions("")
	cs, err := kubernetes.NewForConfig(guarded(cfg, roles))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "no rule for list secrets in kube-system") || !strings.Contains(err.Error(), "rbac.go") {
		t.Errorf("listing secrets: %v, want the guard's refusal naming the call and rbac.go", err)
	}
	if calls := f.recorded(); len(calls) != 0 {
		t.Errorf("the API server saw %v: the refused call was sent", calls)
	}
}

// TestForbiddenSaysVerbResourceNamespaceAndRule: a 403 from the API server
// says what was refused and which rule of `svclab conformance rbac`
// grants it, keeps the server's message, and stays a Forbidden error.
func TestForbiddenSaysVerbResourceNamespaceAndRule(t *testing.T) {
	f, cfg := newFakeAPI(t, "n1")
	f.forbid = func(c apiCall) bool { return c.Resource == "pods" }
	roles, _ := Permissions("")
	cs, err := kubernetes.NewForConfig(guarded(cfg, roles))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("svclab-web-x").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("error %v: not Forbidden", err)
	}
	want := "forbidden: list pods in svclab-web-x: the ClusterRole svclab-conformance that `svclab conformance rbac` prints grants it (pods: create,delete,get,list); the API server said: pods \"\" is forbidden: User \"ci\""
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%s\nwant it to start\n%s", err, want)
	}
}

// TestForbiddenInProtobuf: the API server answers a client that accepts
// protobuf in protobuf; the explanation keeps the server's message.
func TestForbiddenInProtobuf(t *testing.T) {
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonForbidden, Code: 403, Message: `nodes is forbidden: User "ci" cannot list resource "nodes"`}
	var body strings.Builder
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(status, &body); err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: 403, Header: http.Header{"Content-Type": {runtime.ContentTypeProtobuf}}, Body: nopBody(body.String())}
	roles, _ := Permissions("")
	got := explainForbidden(resp, apiRequest{Verb: "list", Resource: "nodes"}, roles)
	var decoded metav1.Status
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(readBody(t, got)), nil, &decoded); err != nil {
		t.Fatal(err)
	}
	want := "forbidden: list nodes cluster-wide: the ClusterRole svclab-conformance that `svclab conformance rbac` prints grants it (nodes: list); the API server said: " + status.Message
	if decoded.Message != want || decoded.Reason != metav1.StatusReasonForbidden || decoded.Code != 403 {
		t.Errorf("status %+v, want message %q, reason Forbidden, code 403", decoded, want)
	}
}

func nopBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
