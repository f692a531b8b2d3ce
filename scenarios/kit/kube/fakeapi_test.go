package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// fakeAPI is an API server in memory, over HTTPS, for the kube target's
// tests: it stores any object of fakeKinds, answers discovery, get, list
// (label and field selectors), create, update and delete, plays the
// controllers and kubelet a little (a Deployment or DaemonSet gets its
// pods, a pod gets Running and Ready unless podStatus says otherwise, a
// Service gets an EndpointSlice of its ready pods), answers exec over
// WebSocket (unless spdyOnly) and SPDY with execOut, and records every
// request as the API server's authorizer sees it (its own parse of the
// path, independent of the target's).
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	objs  map[string]map[string]map[string]any // resource → "ns/name" → object
	calls []apiCall
	rv    int
	ips   int
	// execsBy counts the execs answered by protocol ("websocket", "spdy").
	execsBy map[string]int

	// spdyOnly refuses the WebSocket upgrade, as an API server before
	// WebSocket exec does.
	spdyOnly bool
	// execOut answers an exec: its stdout, or an error (exit status 1 with
	// the error on stderr).
	execOut func(f *fakeAPI, ns, pod string, cmd []string) (string, error)
	// podStatus sets a new pod's status (default: Running and Ready).
	podStatus func(f *fakeAPI, pod map[string]any)
	// forbid answers 403 to the calls it says.
	forbid func(c apiCall) bool
	// afterDelete runs after an object is deleted (outside the lock).
	afterDelete func(f *fakeAPI, c apiCall, obj map[string]any)
}

// apiCall is a request as RBAC sees it.
type apiCall struct{ Verb, Group, Resource, Subresource, Namespace, Name string }

func (c apiCall) String() string {
	return apiRequest{Verb: c.Verb, Group: c.Group, Resource: c.Resource, Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name}.String()
}

type fakeKind struct {
	group, version, resource, kind string
	namespaced                     bool
}

var fakeKinds = []fakeKind{
	{"", "v1", "namespaces", "Namespace", false},
	{"", "v1", "nodes", "Node", false},
	{"", "v1", "pods", "Pod", true},
	{"", "v1", "services", "Service", true},
	{"", "v1", "configmaps", "ConfigMap", true},
	{"", "v1", "events", "Event", true},
	{"", "v1", "secrets", "Secret", true},
	{"apps", "v1", "deployments", "Deployment", true},
	{"apps", "v1", "daemonsets", "DaemonSet", true},
	{"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true},
	{"coordination.k8s.io", "v1", "leases", "Lease", true},
}

func kindOf(group, resource string) (fakeKind, bool) {
	for _, k := range fakeKinds {
		if k.group == group && k.resource == resource {
			return k, true
		}
	}
	return fakeKind{}, false
}

func (k fakeKind) apiVersion() string {
	if k.group == "" {
		return k.version
	}
	return k.group + "/" + k.version
}

// newFakeAPI starts a fake API server with nodes named nodes (each with
// an InternalIP 172.18.0.N), and its rest.Config.
func newFakeAPI(t *testing.T, nodes ...string) (*fakeAPI, *rest.Config) {
	t.Helper()
	f := &fakeAPI{t: t, objs: map[string]map[string]map[string]any{}}
	for i, n := range nodes {
		f.put("nodes", map[string]any{"metadata": map[string]any{"name": n, "labels": map[string]any{"kubernetes.io/hostname": n}},
			"status": map[string]any{"addresses": []any{map[string]any{"type": "InternalIP", "address": fmt.Sprintf("172.18.0.%d", i+2)}}}})
	}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	// JSON only: the fake does not speak protobuf (controller-runtime asks
	// for it for built-in types unless the config names a content type).
	return f, &rest.Config{Host: f.srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, BearerToken: "x", ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
}

// put stores an object as created (namespace from its metadata), and
// returns it.
func (f *fakeAPI) put(resource string, obj map[string]any) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.putLocked(resource, obj)
}

func (f *fakeAPI) putLocked(resource string, obj map[string]any) map[string]any {
	k, _ := kindOf(groupOf(resource), resource)
	obj["apiVersion"], obj["kind"] = k.apiVersion(), k.kind
	m := meta(obj)
	f.rv++
	m["resourceVersion"] = strconv.Itoa(f.rv)
	if m["uid"] == nil {
		m["uid"] = fmt.Sprintf("uid-%d", f.rv)
		m["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
		m["generation"] = 1
	}
	if f.objs[resource] == nil {
		f.objs[resource] = map[string]map[string]any{}
	}
	f.objs[resource][str(m["namespace"])+"/"+str(m["name"])] = obj
	return obj
}

// get is a stored object, or nil.
func (f *fakeAPI) get(resource, ns, name string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objs[resource][ns+"/"+name]
}

// list is the stored objects of a resource in namespace ns ("" all).
func (f *fakeAPI) list(resource, ns string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listLocked(resource, ns)
}

func (f *fakeAPI) listLocked(resource, ns string) []map[string]any {
	var out []map[string]any
	for _, o := range f.objs[resource] {
		if ns == "" || str(meta(o)["namespace"]) == ns {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return str(meta(out[i])["name"]) < str(meta(out[j])["name"]) })
	return out
}

// recorded is every request so far.
func (f *fakeAPI) recorded() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func groupOf(resource string) string {
	for _, k := range fakeKinds {
		if k.resource == resource {
			return k.group
		}
	}
	return ""
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func str(v any) string { s, _ := v.(string); return s }

// field is obj's value at a dotted path ("spec.nodeName").
func field(obj map[string]any, path string) any {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if f.discovery(w, r) {
		return
	}
	c, ok := parseFakePath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	forbid := f.forbid
	f.mu.Unlock()
	if forbid != nil && forbid(c) {
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden,
			fmt.Sprintf("%s %q is forbidden: User \"ci\" cannot %s resource %q in API group %q in the namespace %q", c.Resource, c.Name, c.Verb, c.Resource, c.Group, c.Namespace))
		return
	}
	if c.Subresource == "exec" {
		f.exec(w, r, c)
		return
	}
	switch c.Verb {
	case "get":
		obj := f.get(c.Resource, c.Namespace, c.Name)
		if obj == nil {
			writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", c.Resource, c.Name))
			return
		}
		writeJSON(w, http.StatusOK, obj)
	case "list":
		f.serveList(w, r, c)
	case "create":
		f.create(w, r, c)
	case "update":
		f.update(w, r, c)
	case "delete":
		f.delete(w, c)
	default:
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, c.Verb+" is not served by the fake")
	}
}

// parseFakePath is the fake's own reading of a resource path.
func parseFakePath(r *http.Request) (apiCall, bool) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var c apiCall
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		c.Group, parts = parts[1], parts[3:]
	default:
		return c, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		c.Namespace, parts = parts[1], parts[2:]
	}
	c.Resource = parts[0]
	if len(parts) > 1 {
		c.Name = parts[1]
	}
	if len(parts) > 2 {
		c.Subresource = parts[2]
	}
	if _, ok := kindOf(c.Group, c.Resource); !ok {
		return c, false
	}
	switch r.Method {
	case http.MethodGet:
		c.Verb = "list"
		if c.Name != "" {
			c.Verb = "get"
		}
	case http.MethodPost:
		c.Verb = "create"
	case http.MethodPut:
		c.Verb = "update"
	case http.MethodDelete:
		c.Verb = "delete"
	case http.MethodPatch:
		c.Verb = "patch"
	}
	if c.Subresource == "exec" {
		c.Verb = "create" // as current API servers authorize WebSocket exec too
	}
	return c, true
}

func (f *fakeAPI) discovery(w http.ResponseWriter, r *http.Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/api":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []any{map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}}})
		return true
	case path == "/apis":
		groups := map[string]bool{}
		var list []any
		for _, k := range fakeKinds {
			if k.group != "" && !groups[k.group] {
				groups[k.group] = true
				gv := map[string]any{"groupVersion": k.apiVersion(), "version": k.version}
				list = append(list, map[string]any{"name": k.group, "versions": []any{gv}, "preferredVersion": gv})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": list})
		return true
	}
	for _, gv := range []string{"v1", "apps/v1", "discovery.k8s.io/v1", "coordination.k8s.io/v1"} {
		prefix := "/apis/" + gv
		if gv == "v1" {
			prefix = "/api/v1"
		}
		if path != prefix {
			continue
		}
		var resources []any
		for _, k := range fakeKinds {
			if k.apiVersion() == gv {
				resources = append(resources, map[string]any{"name": k.resource, "singularName": strings.ToLower(k.kind), "namespaced": k.namespaced,
					"kind": k.kind, "verbs": []string{"create", "delete", "get", "list", "update"}})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
		return true
	}
	if path == "/version" {
		writeJSON(w, http.StatusOK, map[string]any{"major": "1", "minor": "37", "gitVersion": "v1.37.0"})
		return true
	}
	return false
}

func (f *fakeAPI) serveList(w http.ResponseWriter, r *http.Request, c apiCall) {
	k, _ := kindOf(c.Group, c.Resource)
	labelSel := selectorTerms(r.URL.Query().Get("labelSelector"))
	fieldSel := selectorTerms(r.URL.Query().Get("fieldSelector"))
	items := []any{}
	for _, o := range f.list(c.Resource, c.Namespace) {
		ok := true
		labels, _ := meta(o)["labels"].(map[string]any)
		for key, v := range labelSel {
			if str(labels[key]) != v {
				ok = false
			}
		}
		for key, v := range fieldSel {
			if fmt.Sprint(field(o, key)) != v {
				ok = false
			}
		}
		if ok {
			items = append(items, o)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": k.kind + "List", "apiVersion": k.apiVersion(),
		"metadata": map[string]any{"resourceVersion": strconv.Itoa(f.rv)}, "items": items})
}

// selectorTerms reads "k=v,k2==v2" (the fake serves equality only).
func selectorTerms(s string) map[string]string {
	out := map[string]string{}
	for _, term := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(term, "="); ok {
			out[k] = strings.TrimPrefix(v, "=")
		}
	}
	return out
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request, c apiCall) {
	var obj map[string]any
	if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return
	}
	m := meta(obj)
	m["namespace"] = c.Namespace
	if f.get(c.Resource, c.Namespace, str(m["name"])) != nil {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", c.Resource, m["name"]))
		return
	}
	if c.Resource == "namespaces" {
		m["namespace"] = nil
		obj["status"] = map[string]any{"phase": "Active"}
	}
	created := f.put(c.Resource, obj)
	f.react(c.Resource, created)
	writeJSON(w, http.StatusCreated, f.get(c.Resource, str(meta(created)["namespace"]), str(meta(created)["name"])))
}

func (f *fakeAPI) update(w http.ResponseWriter, r *http.Request, c apiCall) {
	var obj map[string]any
	if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return
	}
	old := f.get(c.Resource, c.Namespace, c.Name)
	if old == nil {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", c.Resource, c.Name))
		return
	}
	m := meta(obj)
	m["uid"], m["creationTimestamp"], m["namespace"] = meta(old)["uid"], meta(old)["creationTimestamp"], meta(old)["namespace"]
	writeJSON(w, http.StatusOK, f.put(c.Resource, obj))
}

func (f *fakeAPI) delete(w http.ResponseWriter, c apiCall) {
	f.mu.Lock()
	key := c.Namespace + "/" + c.Name
	obj := f.objs[c.Resource][key]
	if obj == nil {
		f.mu.Unlock()
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("%s %q not found", c.Resource, c.Name))
		return
	}
	delete(f.objs[c.Resource], key)
	if c.Resource == "namespaces" { // the namespace controller, at once
		for _, objs := range f.objs {
			for k := range objs {
				if strings.HasPrefix(k, c.Name+"/") {
					delete(objs, k)
				}
			}
		}
	}
	after := f.afterDelete
	f.mu.Unlock()
	if after != nil {
		after(f, c, obj)
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"})
}

// react plays the controllers and the kubelet for a new object.
func (f *fakeAPI) react(resource string, obj map[string]any) {
	m := meta(obj)
	ns := str(m["namespace"])
	switch resource {
	case "pods":
		f.startPod(obj)
	case "deployments":
		replicas := 1
		if r, ok := field(obj, "spec.replicas").(float64); ok {
			replicas = int(r)
		}
		for i := range replicas {
			f.podFromTemplate(obj, fmt.Sprintf("%s-%d", m["name"], i), "")
		}
		f.mu.Lock()
		obj["status"] = map[string]any{"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas, "updatedReplicas": replicas}
		f.mu.Unlock()
	case "daemonsets":
		selector, _ := field(obj, "spec.template.spec.nodeSelector").(map[string]any)
		n, ready := 0, 0
		for _, node := range f.list("nodes", "") {
			labels, _ := meta(node)["labels"].(map[string]any)
			fits := true
			for k, v := range selector {
				if labels[k] != v {
					fits = false
				}
			}
			if !fits {
				continue
			}
			n++
			pod := f.podFromTemplate(obj, fmt.Sprintf("%s-%s", m["name"], meta(node)["name"]), str(meta(node)["name"]))
			if podReady(podFrom(pod)) {
				ready++
			}
		}
		f.mu.Lock()
		obj["status"] = map[string]any{"observedGeneration": 1, "desiredNumberScheduled": n, "numberReady": ready, "updatedNumberScheduled": n}
		f.mu.Unlock()
	case "services":
		selector, _ := field(obj, "spec.selector").(map[string]any)
		var endpoints []any
		for _, p := range f.list("pods", ns) {
			labels, _ := meta(p)["labels"].(map[string]any)
			fits := len(selector) > 0
			for k, v := range selector {
				if labels[k] != v {
					fits = false
				}
			}
			if fits {
				endpoints = append(endpoints, map[string]any{"addresses": []any{field(p, "status.podIP")}, "conditions": map[string]any{"ready": true},
					"nodeName": field(p, "spec.nodeName"), "targetRef": map[string]any{"kind": "Pod", "name": meta(p)["name"], "namespace": ns}})
			}
		}
		f.mu.Lock()
		f.ips++
		obj["spec"].(map[string]any)["clusterIP"] = fmt.Sprintf("10.96.0.%d", f.ips)
		f.mu.Unlock()
		// The slice lists the Service's ports by name, as the
		// EndpointSlice controller writes them.
		var ports []any
		specPorts, _ := field(obj, "spec.ports").([]any)
		for _, sp := range specPorts {
			name, _ := sp.(map[string]any)["name"].(string)
			ports = append(ports, map[string]any{"name": name})
		}
		f.put("endpointslices", map[string]any{"metadata": map[string]any{"name": str(m["name"]) + "-abcde", "namespace": ns,
			"labels": map[string]any{"kubernetes.io/service-name": m["name"]}}, "addressType": "IPv4", "endpoints": endpoints, "ports": ports})
	}
}

// podFromTemplate makes a workload's pod on node ("" the first node).
func (f *fakeAPI) podFromTemplate(owner map[string]any, name, node string) map[string]any {
	tmpl, _ := field(owner, "spec.template").(map[string]any)
	b, _ := json.Marshal(tmpl)
	var pod map[string]any
	json.Unmarshal(b, &pod)
	m := meta(pod)
	m["name"], m["namespace"] = name, meta(owner)["namespace"]
	if node != "" {
		pod["spec"].(map[string]any)["nodeName"] = node
	}
	pod = f.put("pods", pod)
	f.startPod(pod)
	return pod
}

// startPod places a pod on a node and gives it its status.
func (f *fakeAPI) startPod(pod map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	spec := pod["spec"].(map[string]any)
	if str(spec["nodeName"]) == "" {
		spec["nodeName"] = str(meta(f.listLocked("nodes", "")[0])["name"])
	}
	f.ips++
	pod["status"] = map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.244.0.%d", f.ips),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	if f.podStatus != nil {
		f.podStatus(f, pod)
	}
}

func podFrom(obj map[string]any) *corev1.Pod {
	b, _ := json.Marshal(obj)
	var p corev1.Pod
	json.Unmarshal(b, &p)
	return &p
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	writeJSON(w, code, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Reason: reason, Code: int32(code), Message: msg})
}

// exec answers an exec as the kubelet does, over a WebSocket
// (v5.channel.k8s.io) unless spdyOnly, else over SPDY (v4.channel.k8s.io).
func (f *fakeAPI) exec(w http.ResponseWriter, r *http.Request, c apiCall) {
	cmd := r.URL.Query()["command"]
	stdout, err := "", error(nil)
	if f.execOut != nil {
		stdout, err = f.execOut(f, c.Namespace, c.Name, cmd)
	}
	status := []byte(`{"metadata":{},"status":"Success"}`)
	if err != nil {
		status, _ = json.Marshal(metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode", Message: err.Error(),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: "1"}}}})
	}
	if wsstream.IsWebSocketRequest(r) {
		if f.spdyOnly {
			http.Error(w, "this API server upgrades exec to SPDY only", http.StatusBadRequest)
			return
		}
		conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
			"v5.channel.k8s.io": {Binary: true, Channels: []wsstream.ChannelType{wsstream.IgnoreChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.ReadChannel}},
		})
		_, streams, err := conn.Open(w, r)
		if err != nil {
			f.t.Errorf("exec over WebSocket: %v", err)
			return
		}
		f.countExec("websocket")
		defer conn.Close()
		streams[1].Write([]byte(stdout))
		streams[3].Write(status)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{"v4.channel.k8s.io"}); err != nil {
		return
	}
	streams := make(chan httpstream.Stream, 4)
	conn := streamspdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	f.countExec("spdy")
	byType := map[string]httpstream.Stream{}
	for len(byType) < 3 {
		select {
		case s := <-streams:
			byType[s.Headers().Get("streamType")] = s
		case <-time.After(10 * time.Second):
			f.t.Errorf("exec over SPDY: got streams %v, want error, stdout and stderr", byType)
			return
		}
	}
	byType["stdout"].Write([]byte(stdout))
	if err != nil {
		byType["error"].Write(status)
	}
	for _, s := range byType {
		s.Close()
	}
	select {
	case <-conn.CloseChan():
	case <-time.After(10 * time.Second):
	}
}

func (f *fakeAPI) countExec(protocol string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.execsBy == nil {
		f.execsBy = map[string]int{}
	}
	f.execsBy[protocol]++
}

// execs is how many execs were answered over protocol.
func (f *fakeAPI) execs(protocol string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.execsBy[protocol]
}
