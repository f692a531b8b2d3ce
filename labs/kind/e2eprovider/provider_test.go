package e2eprovider

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/pkg/types"

	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/labs/kind/internal/nodeimage"
)

func TestSetters(t *testing.T) {
	var out bytes.Buffer
	p := New().WithCNI(cni.CalicoProxyARP).WithProxy(kind.ProxySvclab).WithBinary("/opt/svclab").
		WithOutput(&out).WithReadyTimeout(time.Minute)
	var e types.E2EClusterProvider = p
	e = e.SetDefaults().WithName("demo").WithVersion(nodeimage.DefaultKubernetes).WithPath("/usr/bin/kind")
	if e != p {
		t.Fatalf("setters returned %v, want the provider itself", e)
	}
	if p.name != "demo" || p.version != nodeimage.DefaultKubernetes || p.cni != cni.CalicoProxyARP ||
		p.proxy != kind.ProxySvclab || p.svclabBinary != "/opt/svclab" || p.out != &out || p.readyTimeout != time.Minute {
		t.Fatalf("provider %+v", p)
	}
	if got := New().SetDefaults().(*Provider).readyTimeout; got != DefaultReadyTimeout {
		t.Errorf("default ready timeout %v, want %v", got, DefaultReadyTimeout)
	}
}

func TestWithOpts(t *testing.T) {
	p := New()
	called := 0
	p.WithOpts(func(c types.E2EClusterProvider) {
		called++
		if c != p {
			t.Errorf("option called with %v, want the provider", c)
		}
		c.WithName("from-opt")
	}, nil)
	if called != 1 || p.name != "from-opt" {
		t.Fatalf("called %d times, name %q", called, p.name)
	}
}

func TestCreateNeedsConfig(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{nil, {}, {"--config="}} {
		if _, err := New().WithName("demo").Create(ctx, args...); !errors.Is(err, ErrNoConfig) {
			t.Errorf("Create(%q): %v, want ErrNoConfig", args, err)
		}
	}
	if _, err := New().CreateWithConfig(ctx, ""); !errors.Is(err, ErrNoConfig) {
		t.Errorf("CreateWithConfig(\"\"): %v, want ErrNoConfig", err)
	}
	if !strings.Contains(ErrNoConfig.Error(), "CreateWithConfig") {
		t.Errorf("ErrNoConfig does not say what to do: %v", ErrNoConfig)
	}
	if _, err := New().Create(ctx, "--image", "kindest/node"); err == nil || !strings.Contains(err.Error(), "--image") {
		t.Errorf("Create with an unknown argument: %v", err)
	}
	if _, err := New().Create(ctx, "--config"); err == nil || !strings.Contains(err.Error(), "needs a file") {
		t.Errorf("Create with --config alone: %v", err)
	}
}

func TestConfigArg(t *testing.T) {
	for _, args := range [][]string{{"--config", "a.yaml"}, {"--config=a.yaml"}, {"--config a.yaml"}} {
		if got, err := configArg(args); err != nil || got != "a.yaml" {
			t.Errorf("configArg(%q) = %q, %v", args, got, err)
		}
	}
}

func TestVersion(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"", nodeimage.DefaultKubernetes, strings.TrimPrefix(nodeimage.DefaultKubernetes, "v")} {
		p := New().WithVersion(v).(*Provider)
		if err := p.checkVersion(); err != nil {
			t.Errorf("version %q: %v", v, err)
		}
	}
	_, err := New().WithVersion("v1.30.0").CreateWithConfig(ctx, filepath.Join(t.TempDir(), "kind.yaml"))
	if err == nil || !strings.Contains(err.Error(), "v1.30.0") || !strings.Contains(err.Error(), nodeimage.DefaultKubernetes) {
		t.Fatalf("CreateWithConfig with another version: %v", err)
	}
}

func TestGetKubectlContext(t *testing.T) {
	if got := New().WithName("demo").GetKubectlContext(); got != "kind-demo" {
		t.Errorf("GetKubectlContext() = %q, want kind-demo", got)
	}
}

func TestBeforeCreate(t *testing.T) {
	p := New()
	if p.GetKubeconfig() != "" || p.KubernetesRestConfig() != nil || p.Cluster() != nil || p.Namespace() != "" {
		t.Fatalf("a new provider has a cluster: %+v", p)
	}
	if _, err := p.Client(); err == nil {
		t.Error("Client() before Create: no error")
	}
	if _, err := p.GenerateKubeconfig("--bogus"); err == nil {
		t.Error("GenerateKubeconfig(--bogus): no error")
	}
	if err := p.Destroy(context.Background()); err == nil {
		t.Error("Destroy without a name: no error")
	}
	if err := p.LoadImage(context.Background(), "busybox", "--nodes=x"); err == nil {
		t.Error("LoadImage with arguments: no error")
	}
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: kind-demo
  cluster: {server: "https://127.0.0.1:40000"}
contexts:
- name: kind-demo
  context: {cluster: kind-demo, user: kind-demo}
current-context: kind-demo
users:
- name: kind-demo
  user: {token: secret}
`

func TestRestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RestConfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:40000" || cfg.Dial != nil {
		t.Errorf("host %q, dial set %v", cfg.Host, cfg.Dial != nil)
	}
	cfg, err = RestConfig(path, "svclab-docker")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:40000" || cfg.Dial == nil {
		t.Errorf("in a namespace: host %q, dial set %v", cfg.Host, cfg.Dial != nil)
	}
	if _, err := RestConfig("", ""); err == nil {
		t.Error("RestConfig without a file: no error")
	}

	// The provider's, from the file it wrote and the cluster's namespace.
	p := &Provider{name: "demo", kubeconfig: path, cluster: &kind.Cluster{Name: "demo", Namespace: "svclab-docker"}}
	rc := p.KubernetesRestConfig()
	if rc == nil || rc.Dial == nil || p.KubernetesRestConfig() != rc {
		t.Fatalf("KubernetesRestConfig() = %+v (want a cached config with a dialer)", rc)
	}
	if c, err := p.Client(); err != nil || c.RESTConfig() != rc {
		t.Errorf("Client(): %v", err)
	}
}

func TestNotReady(t *testing.T) {
	pod := func(name, component string, ready corev1.ConditionStatus) corev1.Pod {
		p := corev1.Pod{}
		p.Name = name
		p.Labels = map[string]string{"component": component}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
		return p
	}
	pods := []corev1.Pod{
		pod("etcd-demo", "etcd", corev1.ConditionTrue),
		pod("kube-apiserver-demo", "kube-apiserver", corev1.ConditionTrue),
		pod("kube-controller-manager-demo", "kube-controller-manager", corev1.ConditionTrue),
		pod("coredns-1", "", corev1.ConditionFalse),
	}
	if got := notReady(pods); got != "kube-scheduler, pod coredns-1" {
		t.Errorf("notReady = %q", got)
	}
	pods[3].Status.Conditions[0].Status = corev1.ConditionTrue
	pods = append(pods, pod("kube-scheduler-demo", "kube-scheduler", corev1.ConditionTrue))
	done := corev1.Pod{}
	done.Name, done.Status.Phase = "job", corev1.PodSucceeded
	if got := notReady(append(pods, done)); got != "" {
		t.Errorf("all ready: notReady = %q", got)
	}
}
