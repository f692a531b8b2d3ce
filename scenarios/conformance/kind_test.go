package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/e2eprovider"
	"github.com/svclab/svclab/labs/kind/images"
	"github.com/svclab/svclab/scenarios/kit"
	"github.com/svclab/svclab/scenarios/kit/kube"
)

// TestConformanceOnKind runs the conformance scenarios on a kind cluster
// made for the run through e2e-framework: its env functions, called from
// the suite's set-up, create the cluster with svclab's provider (kind's
// Go API, the offline node image) and, at the end, export its logs and
// delete it. `make e2e-kind` runs it once per cluster variant:
//
//	SVCLAB_E2E_KIND=1 SVCLAB_KIND_CONFIG=clusters/kind/flannel-vxlan.yaml \
//	SVCLAB_KIND_CNI=flannel-vxlan SVCLAB_KIND_PROXY=stock go test -run TestConformanceOnKind ./scenarios/conformance
//
// (ginkgo runs one suite per process, so one cluster per `go test`).
func TestConformanceOnKind(t *testing.T) {
	if os.Getenv("SVCLAB_E2E_KIND") != "1" {
		t.Skip("set SVCLAB_E2E_KIND=1 (and SVCLAB_KIND_CONFIG) to run the scenarios on a kind cluster: `make e2e-kind`")
	}
	roottest.Require(t, "runs dockerd and kind clusters")
	config := os.Getenv("SVCLAB_KIND_CONFIG")
	if config == "" {
		t.Fatal("SVCLAB_KIND_CONFIG names the kind config (e.g. clusters/kind/flannel-vxlan.yaml)")
	}
	if !filepath.IsAbs(config) {
		config = filepath.Join("..", "..", config)
	}
	cni, proxy := os.Getenv("SVCLAB_KIND_CNI"), os.Getenv("SVCLAB_KIND_PROXY")
	name := "e2e-" + strings.TrimSuffix(filepath.Base(config), ".yaml")
	dir := t.TempDir()
	Setup = func(ctx context.Context) (kit.Target, error) {
		bin, err := roottest.Binary(dir)
		if err != nil {
			return nil, err
		}
		p := e2eprovider.New().WithCNI(cni).WithProxy(proxy).WithBinary(bin).WithOutput(GinkgoWriter)
		env := envconf.New()
		start := time.Now()
		created, err := envfuncs.CreateClusterWithConfig(p, name, config)(ctx, env)
		if err != nil {
			return nil, err
		}
		// From here on the cluster is deleted whatever happens.
		destroy := func(ctx context.Context) error {
			_, err := envfuncs.DestroyCluster(name)(context.WithoutCancel(created), env)
			return err
		}
		fmt.Fprintf(GinkgoWriter, "MEASURE create %s (cni %s, proxy %s): %s\n", name, cni, proxy, time.Since(start).Round(100*time.Millisecond))
		// Bad input: the name is in use; the error says so and the cluster stays.
		if _, err := kind.Create(ctx, kind.CreateOptions{ConfigFile: config, Name: name, CNI: cni, Proxy: proxy, SvclabBinary: bin}); err == nil || !strings.Contains(err.Error(), "already exists") {
			destroy(ctx)
			return nil, fmt.Errorf("a second cluster named %s: got %v, want an 'already exists' error", name, err)
		}
		target, err := kube.New(ctx, p.KubernetesRestConfig(), kube.Options{
			Source: p.GetKubeconfig(), Image: images.Netexec, PullPolicy: "Never", Out: GinkgoWriter,
		})
		if err != nil {
			destroy(ctx)
			return nil, err
		}
		Image, PullPolicy = images.Netexec, "Never"
		return &closing{Target: target, after: destroy}, nil
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "svclab conformance (kind: "+name+")")
}

// closing is a target whose Close also runs after (the cluster's
// deletion), whether or not the target's own Close succeeded.
type closing struct {
	kit.Target
	after func(context.Context) error
}

func (c *closing) Close(ctx context.Context) error {
	err := c.Target.Close(ctx)
	if aerr := c.after(ctx); err == nil {
		err = aerr
	}
	return err
}
