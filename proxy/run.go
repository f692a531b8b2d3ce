package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"time"

	"github.com/svclab/svclab/internal/boundedread"
	"github.com/svclab/svclab/internal/labstore"
	"github.com/svclab/svclab/proxy/config"
	"github.com/svclab/svclab/proxy/server"
	"github.com/svclab/svclab/proxy/sources"
)

// Options say where the proxy gets its objects and configuration.
type Options struct {
	// Lab mode: the lab's state directory and this node's name.
	LabDir   string
	NodeName string
	// Cluster mode: a kubeconfig ("" for in-cluster) and an optional config
	// file; without one the kube-system/kube-proxy ConfigMap is read.
	Kubeconfig string
	ConfigFile string
	// IPTablesBackend is "", "legacy" or "nft" ("" = the host's iptables).
	IPTablesBackend string
	// NodeIPs are a lab node's addresses, primary first (its Node
	// object's InternalIPs; lab mode). A lab node runs dual-stack when
	// they hold both families; none means an IPv4 node. In cluster mode
	// the proxy reads them from its Node object, as upstream.
	NodeIPs []netip.Addr
	Log     *slog.Logger
}

// SupportedModes are the proxy modes svclab implements.
var SupportedModes = []config.Mode{config.ModeIPTables, config.ModeIPVS, config.ModeNFTables}

// Run is the proxy's main: it reads the configuration, serves /proxyMode,
// /metrics and /healthz, and syncs until ctx ends. A configuration it cannot
// start with (it does not parse or validate, names a mode svclab does not
// implement, or one the kernel cannot do: IPVS without ip_vs or without the
// configured scheduler) makes Run return the error before serving anything,
// as upstream kube-proxy exits ("Error running ProxyServer"): /proxyMode is
// refused, the pod crash-loops under its kubelet (a lab's supervisor), its
// log says why, and the kernel's rules stay as the last proxy left them.
func Run(ctx context.Context, opts Options) error {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	status := opts.statusWriter(log)
	src, cfg, backends, err := opts.prepare(log)
	if err != nil {
		log.Error("cannot start proxying; exiting, the node's rules are left as they are", "err", err)
		status(labstore.ProxyStatus{Mode: string(cfg.Mode), Healthy: false, Error: err.Error(), Failures: 1})
		return err
	}
	backend := backends[0].Backend
	mode := backend.Mode()
	for _, b := range backends {
		if c, ok := b.Backend.(interface{ Close() }); ok {
			defer c.Close() // netlink handles of the IPVS mode
		}
	}
	srvOpts := server.Options{
		MetricsAddress: cfg.MetricsBindAddress,
		HealthzAddress: cfg.HealthzBindAddress,
		Mode:           mode,
		NodeName:       opts.NodeName,
		IPFamily:       string(backends[0].Family),
		HealthTimeout:  cfg.HealthTimeout(),
		Logger:         log,
	}
	if len(backends) > 1 {
		srvOpts.SecondaryIPFamily = string(backends[1].Family)
	}
	srv := server.New(srvOpts)
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Run(ctx) }()
	svcHealth := newServiceHealths(backends, func() bool { return srv.Health().Healthy }, log)
	for _, h := range svcHealth {
		go h.Shutdown(ctx)
	}

	log.Info("proxy starting", "node", opts.NodeName, "mode", mode, "kernel", describeBackends(backends),
		"clusterCIDRs", cfg.ClusterCIDRs, "metrics", cfg.MetricsBindAddress, "healthz", cfg.HealthzBindAddress)
	failures := 0 // syncs failed in a row
	loop := &Loop{
		Source:        src,
		Backend:       backend,
		Family:        backends[0].Family,
		NodeName:      opts.NodeName,
		MinSyncPeriod: cfg.MinSyncPeriod,
		SyncPeriod:    cfg.SyncPeriod,
		Log:           log,
		Changed:       srv.QueuedUpdate,
		// Every mode translates through conntrack (IPVS too, with
		// net.ipv4.vs.conntrack=1), so every mode cleans it.
		CleanConntrack: CleanStaleUDPFlows,
		Report: func(o Outcome) {
			st := labstore.ProxyStatus{Mode: mode, Backend: describeBackends(backends), Generation: o.Generation, LastSync: time.Now(), Healthy: o.Err == nil}
			reportFamilies(srv, svcHealth, o)
			if o.Err != nil {
				failures++
				st.Error, st.Failures = o.Err.Error(), failures
			} else {
				failures = 0
				srv.SetObjectCounts(o.Stats.ServicePorts, o.Stats.Endpoints)
			}
			status(st)
		},
	}
	if len(backends) > 1 {
		loop.Secondary = &backends[1]
	}
	loopErr := make(chan error, 1)
	go func() { loopErr <- loop.Run(ctx) }()
	select {
	case err := <-loopErr:
		return err
	case err := <-srvErr:
		if err != nil {
			return fmt.Errorf("proxy server: %w", err)
		}
		return <-loopErr
	}
}

// prepare is what the proxy does before it serves, in order:
//
//  1. pick the source and read the configuration and the node's IPs;
//  2. refuse a mode svclab does not implement;
//  3. decide the IP families (decideFamilies) and check the
//     configuration against them (checkBadIPConfig);
//  4. remove the other modes' leftovers (cleanUpOtherModes);
//  5. build one backend per family (newBackends).
//
// The configuration is returned with an error too, when it was read.
func (o Options) prepare(log *slog.Logger) (sources.Source, config.Config, []FamilyBackend, error) {
	src, cfg, nodeIPs, err := o.source()
	if err == nil {
		err = cfg.CheckModeSupported(SupportedModes...)
	}
	if err != nil {
		return src, cfg, nil, err
	}
	fams, err := decideFamilies(cfg.Mode, nodeIPs, bindAddress(cfg), o.LabDir != "", hostFamilyChecks(o.IPTablesBackend), log)
	if err == nil {
		err = checkBadIPConfig(cfg, fams, log)
	}
	if err != nil {
		return src, cfg, nil, err
	}
	cleanUpOtherModes(cfg.Mode, o.IPTablesBackend, log)
	backends, err := newBackends(cfg, o.IPTablesBackend, fams, log)
	return src, cfg, backends, err
}

// source picks the Source and reads the configuration it comes with and
// the node's host IPs.
func (o Options) source() (sources.Source, config.Config, []netip.Addr, error) {
	if o.LabDir != "" {
		src, cfg, err := o.labSource()
		return src, cfg, firstOfEachFamily(o.NodeIPs), err
	}
	return clusterSource(o)
}

// labSource is the lab's store and the configuration: the config file, or
// the lab's kube-system/kube-proxy ConfigMap, or the defaults.
func (o Options) labSource() (sources.Source, config.Config, error) {
	st := labstore.OpenDir(o.LabDir)
	src := &sources.LabStore{Store: st}
	if o.ConfigFile != "" {
		cfg, err := configFromFile(o.ConfigFile)
		return src, cfg, err
	}
	objs, _, err := st.ReadObjects()
	if err != nil {
		return src, config.Config{}, err
	}
	cm := objs.ConfigMap(config.ConfigMapNamespace, config.ConfigMapName)
	if cm == nil {
		return src, config.Default(), nil
	}
	cfg, err := config.FromConfigMap(cm)
	return src, cfg, err
}

// bindAddress is cfg's bindAddress ("" when the configuration has no
// versioned form).
func bindAddress(cfg config.Config) string {
	if cfg.Versioned == nil {
		return ""
	}
	return cfg.Versioned.BindAddress
}

func configFromFile(path string) (config.Config, error) {
	data, err := boundedread.ReadFile(path, config.MaxBytes)
	if err != nil {
		return config.Config{}, err
	}
	return config.Parse(path, data)
}

// statusWriter reports to the lab's store (lab mode only).
func (o Options) statusWriter(log *slog.Logger) func(labstore.ProxyStatus) {
	if o.LabDir == "" {
		return func(labstore.ProxyStatus) {}
	}
	st := labstore.OpenDir(o.LabDir)
	return func(s labstore.ProxyStatus) {
		s.Node, s.PID = o.NodeName, os.Getpid()
		if err := st.WriteProxyStatus(s); err != nil {
			log.Error("writing the lab status failed", "err", err)
		}
	}
}
