package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/sources"
)

// clusterSource connects to a real cluster (kubeconfig, or in-cluster when
// none is given), reads the configuration from the config file or, like a
// kubeadm cluster's kube-proxy, from the kube-system/kube-proxy ConfigMap,
// and the node's host IPs from its Node object.
func clusterSource(o Options) (sources.Source, config.Config, []netip.Addr, error) {
	src, cfg, client, err := clusterConnection(o)
	if err != nil {
		return src, cfg, nil, err
	}
	return src, cfg, clusterNodeIPs(client, o.NodeName, o.Log), nil
}

// clusterNodeIPs are the host IPs of the Node named name (upstream's
// NodeManager.NodeIPs); none when it cannot be read, which upstream
// tolerates too (the node IPs are then loopback).
func clusterNodeIPs(client kubernetes.Interface, name string, log *slog.Logger) []netip.Addr {
	if name == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if log != nil {
			log.Error("reading the node's IPs failed", "node", name, "err", err)
		}
		return nil
	}
	ips := nodeHostIPs(node)
	if log != nil && len(ips) > 0 {
		log.Info("Successfully retrieved NodeIPs", "NodeIPs", ips)
	}
	return ips
}

// clusterConnection is the cluster's client, the configuration and the
// informer source.
func clusterConnection(o Options) (sources.Source, config.Config, kubernetes.Interface, error) {
	var restCfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		restCfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		restCfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, config.Config{}, nil, fmt.Errorf("cluster connection: %w", err)
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, config.Config{}, nil, fmt.Errorf("cluster connection: %w", err)
	}
	var cfg config.Config
	if o.ConfigFile != "" {
		cfg, err = configFromFile(o.ConfigFile)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cm, gerr := client.CoreV1().ConfigMaps(config.ConfigMapNamespace).Get(ctx, config.ConfigMapName, metav1.GetOptions{})
		if gerr != nil {
			return nil, config.Config{}, nil, fmt.Errorf("reading %s/%s: %w", config.ConfigMapNamespace, config.ConfigMapName, gerr)
		}
		cfg, err = config.FromConfigMap(cm)
	}
	src := &sources.Cluster{Client: client, Resync: cfg.SyncPeriod}
	return src, cfg, client, err
}
