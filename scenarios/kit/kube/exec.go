package kube

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// exec runs a command in a container (the pod's only one when container
// is "") and returns its standard output.
//
// As kubectl does, it tries a WebSocket first and falls back to SPDY
// when the API server does not upgrade to one (remotecommand's fallback
// executor). Both are upgraded connections that client-go dials on its
// own, ignoring rest.Config.Dial: when the config has a dialer (a
// cluster reached from another network namespace, see
// internal/netnsdial), the SPDY upgrade goes through a transport that
// uses it, and the WebSocket through a CONNECT proxy on loopback that
// dials with it (connectProxy).
func (t *Target) exec(ctx context.Context, ns, pod, container string, cmd ...string) (string, error) {
	req := t.clientset.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	executor, err := t.executor(req.URL())
	if err != nil {
		return "", err
	}
	var out, errOut bytes.Buffer
	if err := executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
		return out.String(), fmt.Errorf("%s in %s/%s: %v: %s", strings.Join(cmd, " "), ns, pod, err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// executor is WebSocket, falling back to SPDY, as kubectl exec's.
func (t *Target) executor(url *neturl.URL) (remotecommand.Executor, error) {
	spdyExec, err := t.spdyExecutor(url)
	if err != nil {
		return nil, err
	}
	wsCfg := t.cfg
	if t.cfg.Dial != nil {
		proxy, err := t.execProxy()
		if err != nil {
			return nil, err
		}
		wsCfg = rest.CopyConfig(t.cfg)
		wsCfg.Proxy = proxy.Proxy
	}
	// A WebSocket handshake is a GET (RFC 6455).
	wsExec, err := remotecommand.NewWebSocketExecutor(wsCfg, http.MethodGet, url.String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(wsExec, spdyExec, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// spdyExecutor is client-go's SPDY executor, its upgrade dialled by the
// config's dialer when it has one.
func (t *Target) spdyExecutor(url *neturl.URL) (remotecommand.Executor, error) {
	if t.cfg.Dial == nil {
		return remotecommand.NewSPDYExecutor(t.cfg, http.MethodPost, url)
	}
	tlsConfig, err := rest.TLSConfigFor(t.cfg)
	if err != nil {
		return nil, err
	}
	// What spdy.RoundTripperFor builds for NewSPDYExecutor, with an upgrade
	// transport that dials through the config's dialer.
	upgrade := &http.Transport{DialContext: t.cfg.Dial, TLSClientConfig: tlsConfig}
	rt, err := streamspdy.NewRoundTripperWithConfig(streamspdy.RoundTripperConfig{UpgradeTransport: upgrade, PingPeriod: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	wrapped, err := rest.HTTPWrappersForConfig(t.cfg, rt)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewSPDYExecutorForTransports(wrapped, spdy.NewUpgraderForStreaming(rt), http.MethodPost, url)
}

// execProxy is the target's CONNECT proxy to its API server through the
// config's dialer, started on first use and stopped by Close.
func (t *Target) execProxy() (*connectProxy, error) {
	t.dialProxyOnce.Do(func() {
		u, err := neturl.Parse(t.cfg.Host)
		if err != nil || u.Host == "" {
			t.dialProxyErr = fmt.Errorf("exec proxy: API server %q: not a URL", t.cfg.Host)
			return
		}
		t.dialProxy, t.dialProxyErr = startConnectProxy(canonicalAddr(u), t.cfg.Dial)
	})
	return t.dialProxy, t.dialProxyErr
}

// canonicalAddr is a URL's host:port, the port its scheme's default when
// it names none.
func canonicalAddr(u *neturl.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" || u.Scheme == "ws" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
