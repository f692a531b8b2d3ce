package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ServiceHealthCheck is what one health check node port answers for: a
// LoadBalancer Service with externalTrafficPolicy Local, and how many of
// its ready endpoints run on this node.
type ServiceHealthCheck struct {
	Namespace, Name string
	LocalEndpoints  int
}

// ServiceHealth serves kube-proxy's per-Service health checks
// (pkg/proxy/healthcheck/service_health.go): on every health check node
// port, any path answers 200 when the Service has a ready endpoint on
// this node and the proxy is healthy, else 503, with the JSON body and
// headers upstream writes, so that a load balancer sends traffic only to
// nodes that can serve it locally. Its methods are safe for concurrent
// use.
type ServiceHealth struct {
	// Address is the host to listen on ("" for every address, as
	// upstream without nodePortAddresses).
	Address string
	// Network is "tcp4" or "tcp6" for the health checks of one IP family
	// in a dual-stack proxy, as upstream listens per family; "" is "tcp"
	// (a single-stack proxy: every address).
	Network string
	// Healthy says whether the proxy is healthy (Server.Health).
	Healthy func() bool
	Log     *slog.Logger

	mu      sync.Mutex
	servers map[int32]*healthCheckServer
}

type healthCheckServer struct {
	check ServiceHealthCheck
	srv   *http.Server
}

// Sync opens a listener for every port of want that has none, closes
// those not in want, and updates the endpoint counts. A port that cannot
// be opened is logged and left out (upstream records an event), so one
// busy port does not stop the others.
func (h *ServiceHealth) Sync(want map[int32]ServiceHealthCheck) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.servers == nil {
		h.servers = map[int32]*healthCheckServer{}
	}
	for port, s := range h.servers {
		if w, keep := want[port]; !keep || w.Namespace != s.check.Namespace || w.Name != s.check.Name {
			s.srv.Close()
			delete(h.servers, port)
		}
	}
	for port, check := range want {
		if s, ok := h.servers[port]; ok {
			s.check.LocalEndpoints = check.LocalEndpoints
			continue
		}
		addr := net.JoinHostPort(h.Address, strconv.Itoa(int(port)))
		ln, err := net.Listen(cmp.Or(h.Network, "tcp"), addr)
		if err != nil {
			h.log().Error("cannot open the health check node port", "service", check.Namespace+"/"+check.Name, "address", addr, "err", err)
			continue
		}
		s := &healthCheckServer{check: check}
		s.srv = &http.Server{Handler: h.handler(port), ReadHeaderTimeout: 5 * time.Second}
		h.servers[port] = s
		go func() {
			if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.log().Error("health check node port server failed", "address", addr, "err", err)
			}
		}()
	}
}

// Close closes every listener.
func (h *ServiceHealth) Close() { h.Sync(nil) }

// Shutdown closes every listener when ctx ends.
func (h *ServiceHealth) Shutdown(ctx context.Context) {
	<-ctx.Done()
	h.Close()
}

func (h *ServiceHealth) log() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}

func (h *ServiceHealth) handler(port int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.mu.Lock()
		s, ok := h.servers[port]
		var check ServiceHealthCheck
		if ok {
			check = s.check
		}
		h.mu.Unlock()
		if !ok {
			return // closed meanwhile, as upstream's "request for closed healthcheck"
		}
		healthy := h.Healthy == nil || h.Healthy()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(check.LocalEndpoints))
		if check.LocalEndpoints != 0 && healthy {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, ServiceHealthBody(check, healthy))
	})
}

// ServiceHealthBody is upstream's answer body, byte for byte.
func ServiceHealthBody(c ServiceHealthCheck, proxyHealthy bool) string {
	return fmt.Sprintf("{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": %v\n}",
		c.Namespace, c.Name, c.LocalEndpoints, proxyHealthy)
}
