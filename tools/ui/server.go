package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed web
var web embed.FS

var page = template.Must(template.ParseFS(web, "web/index.html"))

// Bounds of what the server takes.
const (
	// MaxTrafficCount bounds the connections of one traffic run from the page.
	MaxTrafficCount = 5000
	// DefaultTrafficCount is what the page asks for unless told otherwise.
	DefaultTrafficCount = 300
	maxBody             = 4 << 10
	maxHeader           = 16 << 10
	stateCacheFor       = time.Second
	// TokenHeader carries the page's token on a POST.
	TokenHeader = "X-Svclab-Token"
)

// contentSecurity lets the page load its own script, style and pictures
// and nothing else, and be framed by no one.
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// Server serves the page for one Source at one address.
type Server struct {
	src Source
	// addr is the bound address ("127.0.0.1:PORT"): the only Host and
	// Origin it answers.
	addr  string
	token string

	mu       sync.Mutex
	cached   *State
	cachedAt time.Time
	last     *TrafficView
	sending  atomic.Bool
}

// NewServer returns a server for src bound at addr (what the listener
// got), with a fresh random token.
func NewServer(src Source, addr string) (*Server, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &Server{src: src, addr: addr, token: hex.EncodeToString(b)}, nil
}

// Token is the page's token (a POST carries it in TokenHeader). A URL with
// ?token=T&send=KEY makes the page send traffic to KEY when it loads:
// tests and a teacher's bookmark use it; a foreign site cannot, without T.
func (s *Server) Token() string { return s.token }

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.addr + "/" }

// Serve listens at addr (CheckListen) and serves the page until ctx ends.
// ready, if not nil, is called with the server once it listens.
func Serve(ctx context.Context, addr string, src Source, ready func(*Server)) error {
	if err := CheckListen(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return fmt.Errorf("svclab ui: %w", err)
	}
	s, err := NewServer(src, ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: maxHeader,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	stop := context.AfterFunc(ctx, func() {
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	})
	defer stop()
	if ready != nil {
		ready(s)
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the server's routes behind its guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /app.js", s.static("web/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", s.static("web/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/state", s.state)
	mux.HandleFunc("GET /api/trace.svg", s.traceSVG)
	mux.HandleFunc("POST /api/traffic", s.traffic)
	return s.guard(mux)
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, struct{ Token string }{s.token})
}

func (s *Server) static(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := web.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(data)
	}
}

// state answers GET /api/state, reading the lab at most once a second
// however many pages poll.
func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.cached
	fresh := st != nil && time.Since(s.cachedAt) < stateCacheFor
	s.mu.Unlock()
	if !fresh {
		var err error
		if st, err = s.src.State(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		s.cached, s.cachedAt = st, time.Now()
		s.mu.Unlock()
	}
	s.mu.Lock()
	view := *st
	view.Traffic = s.last
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

// traceSVG answers GET /api/trace.svg with the store's last trace, as a
// picture that may run nothing.
func (s *Server) traceSVG(w http.ResponseWriter, r *http.Request) {
	data, ok, err := s.src.TraceSVG()
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !ok:
		http.Error(w, "no trace yet", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
		_, _ = w.Write(data)
	}
}

// TrafficRequest is the body of POST /api/traffic.
type TrafficRequest struct {
	// Service is a ServiceRef.Key of the state.
	Service string `json:"service"`
	// Count is how many connections, 1..MaxTrafficCount; 0 means
	// DefaultTrafficCount.
	Count int `json:"count"`
}

// traffic answers POST /api/traffic: one run at a time.
func (s *Server) traffic(w http.ResponseWriter, r *http.Request) {
	var req TrafficRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("body: %v", err))
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "body: one JSON object, nothing after it")
		return
	}
	if req.Count == 0 {
		req.Count = DefaultTrafficCount
	}
	if req.Count < 1 || req.Count > MaxTrafficCount {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("count %d: want 1..%d", req.Count, MaxTrafficCount))
		return
	}
	if !s.sending.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, "traffic is being sent already; wait for it")
		return
	}
	defer s.sending.Store(false)
	view, err := s.src.Traffic(r.Context(), req.Service, req.Count)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.last = view
	s.cached = nil // the counters changed
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
