package kube

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// exec runs a command in a container (the pod's only one when container
// is "") and returns its standard output.
//
// Exec streams are upgraded connections that client-go dials on its own,
// ignoring rest.Config.Dial; when the config has a dialer (a cluster
// reached from another network namespace, see internal/netnsdial), the
// upgrade goes through a transport that uses it.
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

func (t *Target) executor(url *neturl.URL) (remotecommand.Executor, error) {
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

func newClientset(cfg *rest.Config) (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(cfg)
}
