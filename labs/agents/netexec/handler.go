package netexec

import (
	"encoding/json"
	"log/slog"
	"net/http"
)

// PodInfo is what a netexec server says about itself.
type PodInfo struct {
	PodName  string   `json:"podName"`
	NodeName string   `json:"nodeName,omitempty"`
	PodIPs   []string `json:"podIPs,omitempty"`
}

// RootResponse is the JSON body of GET /.
type RootResponse struct {
	PodInfo
	// ClientAddress is the peer's ip:port as this server saw it.
	ClientAddress string `json:"clientAddress"`
}

// NewHandler returns the netexec HTTP handler for info. logger gets one
// debug line per request; nil means no request logging.
func NewHandler(info PodInfo, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hostname", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, info.PodName)
	})
	mux.HandleFunc("GET /clientip", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, r.RemoteAddr)
	})
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, r.URL.Query().Get("msg"))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, "ok")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(RootResponse{PodInfo: info, ClientAddress: r.RemoteAddr})
		if err != nil {
			http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	if logger == nil {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger.Debug("request", "method", r.Method, "path", r.URL.Path, "client", r.RemoteAddr, "local", localAddr(r))
		mux.ServeHTTP(w, r)
	})
}

// writeText writes s as text/plain. The Content-Length is set by net/http
// for short bodies, so a client can read exactly that many bytes.
func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(s))
}

func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(interface{ String() string }); ok {
		return a.String()
	}
	return ""
}
