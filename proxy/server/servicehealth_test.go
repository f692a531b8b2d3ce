package server

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
)

func freePort(t *testing.T) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func hcGet(t *testing.T, port int32) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(int(port)) + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestServiceHealth: a health check node port answers 200 while the
// Service has local endpoints and the proxy is healthy, 503 otherwise, with
// upstream's body and headers; a port no longer asked for is closed.
func TestServiceHealth(t *testing.T) {
	healthy := true
	h := &ServiceHealth{Address: "127.0.0.1", Healthy: func() bool { return healthy }}
	defer h.Close()
	port := freePort(t)
	check := ServiceHealthCheck{Namespace: "default", Name: "lb", LocalEndpoints: 2}
	h.Sync(map[int32]ServiceHealthCheck{port: check})

	resp, body := hcGet(t, port)
	// Upstream's dedented template, byte for byte.
	want := "{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"lb\"\n\t},\n\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}"
	if resp.StatusCode != http.StatusOK || body != want {
		t.Errorf("2 local endpoints: %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "X-Load-Balancing-Endpoint-Weight": "2"} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}

	check.LocalEndpoints = 0
	h.Sync(map[int32]ServiceHealthCheck{port: check})
	if resp, body := hcGet(t, port); resp.StatusCode != http.StatusServiceUnavailable || body != ServiceHealthBody(check, true) {
		t.Errorf("no local endpoints: %d %q, want 503", resp.StatusCode, body)
	}
	check.LocalEndpoints, healthy = 1, false
	h.Sync(map[int32]ServiceHealthCheck{port: check})
	if resp, _ := hcGet(t, port); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unhealthy proxy: %d, want 503", resp.StatusCode)
	}

	h.Sync(nil)
	if _, err := http.Get("http://127.0.0.1:" + strconv.Itoa(int(port)) + "/"); err == nil {
		t.Error("the port still answers after the Service went away")
	}
}
