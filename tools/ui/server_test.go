package ui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeSource answers like a lab with one node and one Service; Traffic
// records its calls and can be held to test the one-run-at-a-time rule.
type fakeSource struct {
	mu      sync.Mutex
	calls   []string
	hold    chan struct{}
	started chan struct{}
	trace   []byte
}

func (f *fakeSource) State(context.Context) (*State, error) {
	return &State{Lab: "demo", Generation: 3, Client: "client", Topology: `<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		Nodes:    []NodeView{{Name: "node1", Mode: "iptables", Healthy: true, Chains: []Chain{{Name: "KUBE-SVC-X", Rules: []Rule{{Packets: 5}}}}}},
		Services: []ServiceRef{{Key: "default/web:80", Target: "10.96.0.20:80"}},
		Trace:    TraceView{Present: f.trace != nil}}, nil
}

func (f *fakeSource) TraceSVG() ([]byte, bool, error) { return f.trace, f.trace != nil, nil }

func (f *fakeSource) Traffic(ctx context.Context, key string, count int) (*TrafficView, error) {
	f.mu.Lock()
	f.calls = append(f.calls, key)
	f.mu.Unlock()
	if f.started != nil {
		close(f.started)
	}
	if f.hold != nil {
		<-f.hold
	}
	if key != "default/web:80" {
		return nil, errors.New("no such Service port")
	}
	return &TrafficView{Service: key, Count: count, Verdict: "pass", SVG: "<svg/>"}, nil
}

func (f *fakeSource) called() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// testServer serves src at a fake bound address; do sends one request.
func testServer(t *testing.T, src Source) (*Server, func(method, path, body string, header map[string]string) (int, string)) {
	t.Helper()
	s, err := NewServer(src, "127.0.0.1:8470")
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	return s, func(method, path, body string, header map[string]string) (int, string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:8470"+path, strings.NewReader(body))
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
}

// pageHeaders are what the page's fetch sends.
func pageHeaders(s *Server) map[string]string {
	return map[string]string{"Origin": "http://127.0.0.1:8470", "Sec-Fetch-Site": "same-origin",
		"Content-Type": "application/json", TokenHeader: s.Token()}
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range h {
		out[a] = b
	}
	if v == "" {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

// TestServerRefusesForeignRequests: a Host other than the bound address
// (DNS rebinding) gets nothing; a POST without the page's token, from
// another origin or site, or not JSON runs no traffic; the page's own POST
// does.
func TestServerRefusesForeignRequests(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	page := pageHeaders(s)
	body := `{"service":"default/web:80","count":10}`

	for _, host := range []string{"evil.example:8470", "localhost:8470", "127.0.0.1:9999", "127.0.0.1"} {
		if code, _ := do("GET", "/api/state", "", map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
			t.Errorf("GET /api/state with Host %q: %d, want 421", host, code)
		}
	}
	for name, h := range map[string]map[string]string{
		"no token":           with(page, TokenHeader, ""),
		"wrong token":        with(page, TokenHeader, strings.Repeat("0", 32)),
		"foreign origin":     with(page, "Origin", "http://evil.example"),
		"other port origin":  with(page, "Origin", "http://127.0.0.1:9999"),
		"cross-site fetch":   with(page, "Sec-Fetch-Site", "cross-site"),
		"form post":          with(page, "Content-Type", "application/x-www-form-urlencoded"),
		"rebinding host":     with(page, "Host", "evil.example:8470"),
		"null origin":        with(page, "Origin", "null"),
		"no content type":    with(page, "Content-Type", ""),
		"same-site not same": with(page, "Sec-Fetch-Site", "same-site"),
	} {
		if code, out := do("POST", "/api/traffic", body, h); code != http.StatusForbidden && code != http.StatusMisdirectedRequest {
			t.Errorf("POST %s: %d %s, want 403", name, code, out)
		}
	}
	if n := src.called(); n != 0 {
		t.Fatalf("foreign POSTs ran traffic %d times", n)
	}
	code, out := do("POST", "/api/traffic", body, page)
	if code != http.StatusOK || src.called() != 1 {
		t.Fatalf("the page's POST: %d %s", code, out)
	}
	// Without Origin and Sec-Fetch-Site (not a browser), the token suffices.
	if code, out := do("POST", "/api/traffic", body, with(with(page, "Origin", ""), "Sec-Fetch-Site", "")); code != http.StatusOK {
		t.Errorf("POST with the token, no Origin: %d %s", code, out)
	}
	if code, _ := do("GET", "/api/traffic", "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/traffic: %d, want 405", code)
	}
}

// TestServerBoundsTraffic: the body is bounded and strict, the count is
// 1..MaxTrafficCount (0 is the default), and one run at a time.
func TestServerBoundsTraffic(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	page := pageHeaders(s)
	for body, want := range map[string]string{
		`{"service":"default/web:80","count":5001}`:                              "count 5001: want 1..5000",
		`{"service":"default/web:80","count":-1}`:                                "count -1",
		`{"service":"default/web:80","count":10,"target":"8.8.8.8:53"}`:          "unknown field",
		`{"service":"default/web:80"} {"service":"x"}`:                           "nothing after it",
		`{"service":"default/web:80","pad":"` + strings.Repeat("x", 5000) + `"}`: "too large",
		`not json`:                       "body",
		`{"service":"kube-system/x:53"}`: "no such Service port",
	} {
		code, out := do("POST", "/api/traffic", body, page)
		if code != http.StatusBadRequest || !strings.Contains(out, want) {
			t.Errorf("POST %.60s: %d %s, want 400 with %q", body, code, out, want)
		}
	}
	code, out := do("POST", "/api/traffic", `{"service":"default/web:80"}`, page)
	var view TrafficView
	if code != http.StatusOK || json.Unmarshal([]byte(out), &view) != nil || view.Count != DefaultTrafficCount {
		t.Errorf("POST without count: %d %s, want %d connections", code, out, DefaultTrafficCount)
	}

	src.hold, src.started = make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() {
		code, _ := do("POST", "/api/traffic", `{"service":"default/web:80","count":3}`, page)
		done <- code
	}()
	<-src.started
	if code, out := do("POST", "/api/traffic", `{"service":"default/web:80","count":3}`, page); code != http.StatusConflict {
		t.Errorf("a second run while one runs: %d %s, want 409", code, out)
	}
	close(src.hold)
	if code := <-done; code != http.StatusOK {
		t.Errorf("the held run: %d", code)
	}
}

// TestServerPageAndState: the page carries its token and loads nothing
// from elsewhere; the state is the source's, with the last traffic run;
// the trace is served as a picture that runs nothing, 404 when absent.
func TestServerPageAndState(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	code, out := do("GET", "/", "", nil)
	if code != http.StatusOK || !strings.Contains(out, `<meta name="svclab-token" content="`+s.Token()+`">`) {
		t.Fatalf("GET /: %d\n%s", code, out)
	}
	for _, asset := range []string{"/app.js", "/app.css"} {
		if code, _ := do("GET", asset, "", nil); code != http.StatusOK {
			t.Errorf("GET %s: %d", asset, code)
		}
	}
	if code, _ := do("GET", "/nothing", "", nil); code != http.StatusNotFound {
		t.Errorf("GET /nothing: %d", code)
	}
	// Offline: no URL of another host in any embedded file.
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	fs.WalkDir(web, "web", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := web.ReadFile(path)
		if m := external.Find(data); m != nil {
			t.Errorf("%s refers to %s: the page must work offline", path, m)
		}
		return nil
	})

	code, out = do("GET", "/api/state", "", nil)
	var st State
	if code != http.StatusOK || json.Unmarshal([]byte(out), &st) != nil || st.Lab != "demo" || st.Traffic != nil || st.Nodes[0].Chains[0].Rules[0].Packets != 5 {
		t.Fatalf("GET /api/state: %d %s", code, out)
	}
	do("POST", "/api/traffic", `{"service":"default/web:80","count":7}`, pageHeaders(s))
	_, out = do("GET", "/api/state", "", nil)
	if json.Unmarshal([]byte(out), &st) != nil || st.Traffic == nil || st.Traffic.Count != 7 {
		t.Errorf("the state after a run lacks it: %s", out)
	}

	if code, out := do("GET", "/api/trace.svg", "", nil); code != http.StatusNotFound || !strings.Contains(out, "no trace yet") {
		t.Errorf("GET /api/trace.svg without a trace: %d %s", code, out)
	}
	src.trace = []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)
	req := httptest.NewRequest("GET", "http://127.0.0.1:8470/api/trace.svg", nil)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" ||
		!strings.Contains(rec.Header().Get("Content-Security-Policy"), "sandbox") || string(body) != string(src.trace) {
		t.Errorf("GET /api/trace.svg: %d %v %s", rec.Code, rec.Header(), body)
	}
}

// TestServeRefusesNonLoopback: Serve listens nowhere but 127.0.0.1.
func TestServeRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::1]:0", "localhost:0"} {
		err := Serve(context.Background(), addr, &fakeSource{}, func(*Server) { t.Errorf("Serve(%q) listened", addr) })
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1 only") {
			t.Errorf("Serve(%q) = %v", addr, err)
		}
	}
}

// TestServeListensOnLoopbackAndStops: 127.0.0.1:0 gets a free port, the
// page answers there over real HTTP, and Serve returns when ctx ends.
func TestServeListensOnLoopbackAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan *Server, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", &fakeSource{}, func(s *Server) { ready <- s }) }()
	var s *Server
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0/") {
		t.Errorf("URL %s", s.URL())
	}
	resp, err := http.Get(s.URL() + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET api/state: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}
