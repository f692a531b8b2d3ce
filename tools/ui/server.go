package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed web
var web embed.FS

// Bounds of what the server takes.
const (
	// MaxTrafficCount bounds the connections of one traffic run from the page.
	MaxTrafficCount = 5000
	// DefaultTrafficCount is what the page asks for unless told otherwise.
	DefaultTrafficCount = 300
	maxBody             = 4 << 10
	maxHeader           = 16 << 10
	// kernelsFor is how long a reading of the nodes' kernels is served
	// while the lab's store records no change: however many pages poll,
	// the kernels are read at most once a second.
	kernelsFor = time.Second
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
	addr string
	// token is what `svclab ui` prints (SessionURL) and the page trades
	// for the session cookie, whose value is session. Neither is ever
	// served to a request that did not bring one of them.
	token, session string
	// base is the server's life: the kernels' readings run under it.
	base    context.Context
	kernels kernelCache

	mu      sync.Mutex
	last    *TrafficView
	runs    int // traffic runs so far: each moves the counters
	sending atomic.Bool
}

// NewServer returns a server for src bound at addr (what the listener
// got), with a fresh random token and session.
func NewServer(src Source, addr string) (*Server, error) {
	token, err := newSecret()
	if err != nil {
		return nil, err
	}
	session, err := newSecret()
	if err != nil {
		return nil, err
	}
	return &Server{src: src, addr: addr, token: token, session: session, base: context.Background(),
		kernels: kernelCache{maxAge: kernelsFor}}, nil
}

// Token is the page's token: POST /api/session with it in TokenHeader
// sets the session cookie.
func (s *Server) Token() string { return s.token }

// URL is the page's address; without a session it shows nothing of the lab.
func (s *Server) URL() string { return "http://" + s.addr + "/" }

// SessionURL is the link `svclab ui` prints: the page's address with the
// token after "#", which the browser never sends (the page trades it for
// its cookie and takes it off the address bar). More parameters may
// follow: &send=KEY[&count=N] sends traffic to KEY once the page has
// loaded (tests use it).
func (s *Server) SessionURL() string { return s.URL() + "#token=" + s.token }

// Handler is the server's routes behind its guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.static("web/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /app.js", s.static("web/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", s.static("web/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("POST "+sessionPath, s.openSession)
	mux.HandleFunc("GET /api/state", s.state)
	mux.HandleFunc("GET /api/trace.svg", s.traceSVG)
	mux.HandleFunc("POST /api/traffic", s.traffic)
	return s.guard(mux)
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

// state answers GET /api/state: the store as it is now, the nodes'
// kernels as last read for this version of the store (kernelCache), and
// this server's last traffic run.
func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	st, version, err := s.src.Store()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.mu.Lock()
	st.Traffic, version = s.last, fmt.Sprintf("%s; traffic runs %d", version, s.runs)
	s.mu.Unlock()
	nodes := st.Nodes
	kernels, err := s.kernels.get(r.Context(), s.base, version, func(ctx context.Context) map[string]Kernel {
		return s.src.Kernels(ctx, nodes)
	})
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	st.Nodes = make([]NodeView, len(nodes))
	for i, n := range nodes {
		k := kernels[n.Name]
		n.Chains, n.VirtualServers = k.Chains, k.VirtualServers
		if k.Error != "" {
			n.Error = strings.TrimPrefix(n.Error+"; "+k.Error, "; ")
		}
		st.Nodes[i] = n
	}
	writeJSON(w, http.StatusOK, st)
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
	s.runs++ // the counters moved: the next state reads them again
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
