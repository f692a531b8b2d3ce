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

// fakeSource answers like a lab with one node and one Service. It counts
// its calls; Traffic and Kernels can be held, to test that runs do not
// overlap and that requests share one reading of the kernels.
type fakeSource struct {
	mu      sync.Mutex
	calls   []string
	hold    chan struct{}
	started chan struct{}
	trace   []byte
	version string

	// stores counts Store calls; when it reaches storesWanted, allStored
	// is closed.
	stores       int
	storesWanted int
	allStored    chan struct{}
	// reads counts Kernels calls; each waits for holdKernels if set, and
	// says it started on kernelsStarted if set.
	reads          int
	holdKernels    chan struct{}
	kernelsStarted chan struct{}
}

func (f *fakeSource) Store() (*State, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stores++
	if f.stores == f.storesWanted && f.allStored != nil {
		close(f.allStored)
	}
	st := &State{Lab: "demo", Generation: 3, Client: "client", Topology: `<svg xmlns="http://www.w3.org/2000/svg"></svg>`,
		Nodes:    []NodeView{{Name: "node1", Mode: "iptables", Healthy: true}},
		Services: []ServiceRef{{Key: "default/web:80", Target: "10.96.0.20:80"}},
		Trace:    TraceView{Present: f.trace != nil}}
	return st, f.version, nil
}

func (f *fakeSource) Kernels(ctx context.Context, nodes []NodeView) map[string]Kernel {
	f.mu.Lock()
	f.reads++
	hold, started := f.holdKernels, f.kernelsStarted
	f.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if hold != nil {
		<-hold
	}
	out := map[string]Kernel{}
	for _, n := range nodes {
		out[n.Name] = Kernel{Chains: []Chain{{Name: "KUBE-SVC-X", Rules: []Rule{{Packets: 5}}}}}
	}
	return out
}

func (f *fakeSource) kernelReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *fakeSource) setVersion(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version = v
}

func (f *fakeSource) setTrace(svg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trace = svg
}

func (f *fakeSource) TraceSVG() ([]byte, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.trace, f.trace != nil, nil
}

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

// sessionCookie is the Cookie header of a page that traded the token.
func sessionCookie(t *testing.T, s *Server) string {
	t.Helper()
	req := httptest.NewRequest("POST", "http://127.0.0.1:8470"+sessionPath, nil)
	req.Header.Set(TokenHeader, s.Token())
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusNoContent || len(cookies) != 1 {
		t.Fatalf("POST %s with the token: %d %v %s", sessionPath, rec.Code, rec.Header(), rec.Body)
	}
	return cookies[0].Name + "=" + cookies[0].Value
}

// pageGet are what the page's GETs send; pageHeaders what its POSTs do.
func pageGet(t *testing.T, s *Server) map[string]string {
	return map[string]string{"Cookie": sessionCookie(t, s)}
}

func pageHeaders(t *testing.T, s *Server) map[string]string {
	return map[string]string{"Origin": "http://127.0.0.1:8470", "Sec-Fetch-Site": "same-origin",
		"Content-Type": "application/json", "Cookie": sessionCookie(t, s)}
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
// (DNS rebinding) gets nothing; a POST without the session cookie, from
// another origin or site, or not JSON runs no traffic; the page's own POST
// does.
func TestServerRefusesForeignRequests(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	page := pageHeaders(t, s)
	body := `{"service":"default/web:80","count":10}`

	for _, host := range []string{"evil.example:8470", "localhost:8470", "127.0.0.1:9999", "127.0.0.1"} {
		if code, _ := do("GET", "/api/state", "", with(pageGet(t, s), "Host", host)); code != http.StatusMisdirectedRequest {
			t.Errorf("GET /api/state with Host %q: %d, want 421", host, code)
		}
	}
	for name, h := range map[string]map[string]string{
		"no cookie":          with(page, "Cookie", ""),
		"wrong cookie":       with(page, "Cookie", "svclab_ui_8470="+strings.Repeat("0", 32)),
		"other port's name":  with(page, "Cookie", "svclab_ui_9999="+s.session),
		"token as cookie":    with(page, "Cookie", "svclab_ui_8470="+s.Token()),
		"token, no cookie":   with(with(page, "Cookie", ""), TokenHeader, s.Token()),
		"foreign origin":     with(page, "Origin", "http://evil.example"),
		"other port origin":  with(page, "Origin", "http://127.0.0.1:9999"),
		"cross-site fetch":   with(page, "Sec-Fetch-Site", "cross-site"),
		"form post":          with(page, "Content-Type", "application/x-www-form-urlencoded"),
		"rebinding host":     with(page, "Host", "evil.example:8470"),
		"null origin":        with(page, "Origin", "null"),
		"no content type":    with(page, "Content-Type", ""),
		"same-site not same": with(page, "Sec-Fetch-Site", "same-site"),
	} {
		code, out := do("POST", "/api/traffic", body, h)
		if code != http.StatusForbidden && code != http.StatusUnauthorized && code != http.StatusMisdirectedRequest {
			t.Errorf("POST %s: %d %s, want 401 or 403", name, code, out)
		}
	}
	if n := src.called(); n != 0 {
		t.Fatalf("foreign POSTs ran traffic %d times", n)
	}
	code, out := do("POST", "/api/traffic", body, page)
	if code != http.StatusOK || src.called() != 1 {
		t.Fatalf("the page's POST: %d %s", code, out)
	}
	// Without Origin and Sec-Fetch-Site (not a browser), the cookie suffices.
	if code, out := do("POST", "/api/traffic", body, with(with(page, "Origin", ""), "Sec-Fetch-Site", "")); code != http.StatusOK {
		t.Errorf("POST with the cookie, no Origin: %d %s", code, out)
	}
	if code, _ := do("GET", "/api/traffic", "", pageGet(t, s)); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/traffic: %d, want 405", code)
	}
}

// TestSessionTradesTokenForCookie: only the token opens a session; the
// cookie is HttpOnly, SameSite=Strict, for the whole page, named by the
// port, and is not the token; every /api/ request but the trade needs it.
func TestSessionTradesTokenForCookie(t *testing.T) {
	s, do := testServer(t, &fakeSource{})
	jsonType := map[string]string{"Content-Type": "application/json"}
	for name, h := range map[string]map[string]string{
		"no token":       jsonType,
		"wrong token":    with(jsonType, TokenHeader, strings.Repeat("0", 32)),
		"token's prefix": with(jsonType, TokenHeader, s.Token()[:31]),
		"foreign origin": with(with(jsonType, TokenHeader, s.Token()), "Origin", "http://evil.example"),
	} {
		if code, out := do("POST", sessionPath, "", h); code != http.StatusForbidden {
			t.Errorf("POST %s, %s: %d %s, want 403", sessionPath, name, code, out)
		}
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1:8470"+sessionPath, nil)
	req.Header.Set(TokenHeader, s.Token())
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusNoContent || len(cookies) != 1 {
		t.Fatalf("POST %s with the token: %d %v", sessionPath, rec.Code, rec.Header())
	}
	c := cookies[0]
	if c.Name != "svclab_ui_8470" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" ||
		c.Value == "" || c.Value == s.Token() || c.Secure || c.MaxAge != 0 {
		t.Errorf("session cookie %+v: want svclab_ui_8470, HttpOnly, SameSite=Strict, Path=/, not the token", c)
	}
	cookie := map[string]string{"Cookie": c.Name + "=" + c.Value}
	for _, path := range []string{"/api/state", "/api/trace.svg"} {
		if code, out := do("GET", path, "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the cookie: %d %s, want 401", path, code, out)
		}
		if code, _ := do("GET", path, "", cookie); code == http.StatusUnauthorized {
			t.Errorf("GET %s with the cookie: 401", path)
		}
	}
}

// TestServerBoundsTraffic: the body is bounded and strict, the count is
// 1..MaxTrafficCount (0 is the default), and one run at a time.
func TestServerBoundsTraffic(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	page := pageHeaders(t, s)
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

// TestServerPageAndState: the page carries no secret and loads nothing
// from elsewhere; the state is the source's, with the last traffic run;
// the trace is served as a picture that runs nothing, 404 when absent.
func TestServerPageAndState(t *testing.T) {
	src := &fakeSource{}
	s, do := testServer(t, src)
	for _, asset := range []string{"/", "/app.js", "/app.css"} {
		code, out := do("GET", asset, "", nil)
		if code != http.StatusOK || strings.Contains(out, s.Token()) || strings.Contains(out, s.session) {
			t.Errorf("GET %s: %d (carries a secret: %t)", asset, code, strings.Contains(out, s.Token()) || strings.Contains(out, s.session))
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

	page := pageGet(t, s)
	code, out := do("GET", "/api/state", "", page)
	var st State
	if code != http.StatusOK || json.Unmarshal([]byte(out), &st) != nil || st.Lab != "demo" || st.Traffic != nil || st.Nodes[0].Chains[0].Rules[0].Packets != 5 {
		t.Fatalf("GET /api/state: %d %s", code, out)
	}
	do("POST", "/api/traffic", `{"service":"default/web:80","count":7}`, pageHeaders(t, s))
	_, out = do("GET", "/api/state", "", page)
	if json.Unmarshal([]byte(out), &st) != nil || st.Traffic == nil || st.Traffic.Count != 7 {
		t.Errorf("the state after a run lacks it: %s", out)
	}

	if code, out := do("GET", "/api/trace.svg", "", page); code != http.StatusNotFound || !strings.Contains(out, "no trace yet") {
		t.Errorf("GET /api/trace.svg without a trace: %d %s", code, out)
	}
	src.setTrace([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
	req := httptest.NewRequest("GET", "http://127.0.0.1:8470/api/trace.svg", nil)
	req.Header.Set("Cookie", page["Cookie"])
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
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET api/state without a session: %s, want 401", resp.Status)
	}
	req, _ := http.NewRequest("POST", s.URL()+"api/session", nil)
	req.Header.Set(TokenHeader, s.Token())
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest("GET", s.URL()+"api/state", nil)
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET api/state with the session: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}
