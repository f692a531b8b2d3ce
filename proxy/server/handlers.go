package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsHandler serves /proxyMode, /metrics and the generic /healthz of
// the metrics address.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /proxyMode", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte(s.opts.Mode))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{
		ErrorLog: slogPrintln{s},
		Registry: s.metrics.registry, // count promhttp's own errors in it
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

// HealthzHandler serves /healthz and /livez of the healthz address.
func (s *Server) HealthzHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", s.healthHandler(s.metrics.healthzResponses))
	mux.Handle("GET /livez", s.healthHandler(s.metrics.livezResponses))
	return mux
}

// healthHandler answers 200 or 503 with the Health JSON and counts the
// answer in responses, labelled by status code.
func (s *Server) healthHandler(responses *prometheus.CounterVec) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := s.Health()
		code := http.StatusOK
		if h.Healthy {
			// Upstream: "lastUpdated" is "recent" whenever healthy, for
			// clients written against older releases.
			h.LastUpdated = h.CurrentTime
		} else {
			code = http.StatusServiceUnavailable
		}
		body, err := json.Marshal(h)
		if err != nil {
			http.Error(w, "encoding health: "+err.Error(), http.StatusInternalServerError)
			return
		}
		responses.WithLabelValues(strconv.Itoa(code)).Inc()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(code)
		_, _ = w.Write(body)
	})
}

// slogPrintln adapts the Server's logger to promhttp's ErrorLog.
type slogPrintln struct{ s *Server }

func (l slogPrintln) Println(v ...any) {
	l.s.opts.Logger.Warn("serving /metrics", "error", v)
}
