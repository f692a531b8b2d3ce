package proxy

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/sources"
)

// clusterSource connects to a real cluster (kubeconfig, or in-cluster when
// none is given) and reads the configuration from the config file or, like a
// kubeadm cluster's kube-proxy, from the kube-system/kube-proxy ConfigMap.
func clusterSource(o Options) (sources.Source, config.Config, error) {
	var restCfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		restCfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		restCfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, config.Config{}, fmt.Errorf("cluster connection: %w", err)
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, config.Config{}, fmt.Errorf("cluster connection: %w", err)
	}
	var cfg config.Config
	if o.ConfigFile != "" {
		cfg, err = configFromFile(o.ConfigFile)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cm, gerr := client.CoreV1().ConfigMaps(config.ConfigMapNamespace).Get(ctx, config.ConfigMapName, metav1.GetOptions{})
		if gerr != nil {
			return nil, config.Config{}, fmt.Errorf("reading %s/%s: %w", config.ConfigMapNamespace, config.ConfigMapName, gerr)
		}
		cfg, err = config.FromConfigMap(cm)
	}
	src := &sources.Cluster{Client: client, Resync: cfg.SyncPeriod}
	return src, cfg, err
}
