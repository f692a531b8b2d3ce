package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/selfexec"
	"github.com/svclab/svclab/labs/kind"
	"github.com/svclab/svclab/labs/kind/cni"
	"github.com/svclab/svclab/tools/builtin"
)

// newKind is `svclab kind …`: the kind backend's build and housekeeping.
func newKind() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kind",
		Short: "kind clusters as a second backend: build the offline images, manage svclab's dockerd",
		Example: "  sudo svclab kind build-image     # Kubernetes, etcd, CoreDNS and the node image, offline, cached\n" +
			"  sudo svclab kind stop-docker",
	}
	var version string
	var withFlannel bool
	build := &cobra.Command{
		Use:     "build-image",
		Short:   "Build the offline kind node image and the component images (cached)",
		Example: "  sudo svclab kind build-image",
		Long: "Builds Kubernetes, etcd and CoreDNS from their Go modules, the component images under the tags " +
			"`kubeadm config images list` prints, a Debian node root filesystem with debootstrap and kind's base files, " +
			"and the node image with the component images preloaded. Every step is cached under the svclab cache " +
			"directory; a second run only checks. Each step is announced as it starts (on a terminal, a spinner with its time running; " +
			"piped, a plain line) and marked with how long it took as it ends.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return kind.BuildImages(ctx, kind.BuildOptions{Kubernetes: version, Flannel: withFlannel, Out: cmd.OutOrStdout()})
		},
	}
	build.Flags().StringVar(&version, "kubernetes-version", "", "Kubernetes version to build (default "+kind.DefaultKubernetes+")")
	build.Flags().BoolVar(&withFlannel, "flannel", false, "also build the real flannel's images (what --cni flannel needs)")
	stopDocker := &cobra.Command{
		Use:     "stop-docker",
		Short:   "Stop svclab's dockerd (deleting whatever runs on it), delete its namespace, restore the host",
		Example: "  sudo svclab kind stop-docker    # after the last cluster is deleted",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return kind.StopDocker(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(build, stopDocker)
	return cmd
}

// newCreateCluster is `svclab create cluster` (a subcommand of create).
func newCreateCluster() *cobra.Command {
	var opts kind.CreateOptions
	var config string
	cmd := &cobra.Command{
		Use:   "cluster --config FILE|NAME [--name N] [--cni flannel-vxlan|calico-proxyarp|flannel] [--proxy stock|svclab]",
		Short: "Create a kind cluster, offline, from a kind v1alpha4 Cluster config (a file, or a built-in one by name)",
		Long: "Create a kind cluster, offline, from a kind v1alpha4 Cluster config. A FILE that exists is read; otherwise NAME " +
			"is one of the configs built into svclab (flannel-vxlan, calico-proxyarp, svclab-proxy, …: the checkout's " +
			"clusters/kind/NAME.yaml; svclab get examples lists them).",
		Example: "  sudo svclab create cluster --config calico-proxyarp --name demo --cni calico-proxyarp --proxy stock\n" +
			"  sudo svclab create cluster --config svclab-proxy --name mine --proxy svclab\n" +
			"  sudo svclab create cluster --config ./my-kind.yaml --name mine",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return fmt.Errorf("--config: required (a kind v1alpha4 Cluster config file, or a built-in one: flannel-vxlan, calico-proxyarp, svclab-proxy, …)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			file, err := builtin.Resolve(config, builtin.Cluster)
			if err != nil {
				return fmt.Errorf("--config %w", err)
			}
			opts.ConfigFile = file
			opts.Out = cmd.OutOrStdout()
			c, err := kind.Create(ctx, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster %s is up in %s (%d nodes, cni %s, proxy %s, kube-proxy mode %s)\n"+
				"kubeconfig: %s\n", c.Name, c.Took.Round(time.Second/10), len(c.Nodes), c.CNI, c.Proxy, c.ProxyMode, c.Kubeconfig)
			if c.DockerHost != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "docker:     export DOCKER_HOST=%s   (then: docker exec -it %s-control-plane bash)\n", c.DockerHost, c.Name)
				fmt.Fprintf(cmd.OutOrStdout(), "kubectl:    ip netns exec %s kubectl --kubeconfig %s get nodes\n", kind.DockerNamespace, c.Kubeconfig)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "kind v1alpha4 Cluster config file, or a built-in one's name (svclab get examples)")
	cmd.MarkFlagRequired("config") //nolint:errcheck // the flag exists
	f.StringVar(&opts.Name, "name", "", "cluster name (default: the config's name, else svclab)")
	f.StringVar(&opts.CNI, "cni", "", "pod network: "+cni.FlannelVXLAN+" or "+cni.CalicoProxyARP+" (svclab's CNI imitating them), or "+
		kind.CNIFlannel+" (the real flannel "+kind.FlannelVersion+", upstream's kube-flannel.yml), or "+
		kind.CNICalico+" (upstream Calico "+kind.CalicoVersion+"'s manifest, verified by sha256; needs a registry and a Docker of your own) (default "+cni.FlannelVXLAN+")")
	f.StringVar(&opts.CalicoManifestSHA256, "calico-manifest-sha256", "", "for --cni calico: the sha256 of upstream's calico.yaml at "+kind.CalicoVersion+" when this build pins none")
	f.StringVar(&opts.Proxy, "proxy", "", "Service proxy: stock (kube-proxy) or svclab (svclab's proxy as a DaemonSet, kubeProxyMode none)")
	return cmd
}

// newDeleteCluster is `svclab delete cluster --name N` (idempotent).
func newDeleteCluster() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "cluster --name N",
		Short:   "Delete a kind cluster (its logs are exported first); idempotent",
		Example: "  sudo svclab delete cluster --name demo",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return fmt.Errorf("--name: required")
			}
			return kind.Delete(cmd.Context(), name, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "cluster name")
	cmd.MarkFlagRequired("name") //nolint:errcheck // the flag exists
	return cmd
}

// newCNI is `svclab cni …`: the kind CNI's node agent and plugin, run by
// the svclab-cni DaemonSet and by containerd.
func newCNI() *cobra.Command {
	cmd := &cobra.Command{Use: "cni", Short: "svclab's CNI for kind clusters (run inside the nodes)", Hidden: true}
	var agentCmdline selfexec.CNIAgent
	agent := &cobra.Command{
		Use:   "agent --variant flannel-vxlan|calico-proxyarp",
		Short: "Per-node agent: installs the plugin and config, programs the VXLAN overlay from the Node objects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return cni.RunAgent(ctx, cni.AgentOptions{Variant: agentCmdline.Variant, ClusterCIDR: agentCmdline.ClusterCIDR, NodeName: os.Getenv("NODE_NAME"), Out: cmd.OutOrStdout()})
		},
	}
	agentCmdline.AddFlags(agent.Flags())
	plugin := &cobra.Command{
		Use:   "plugin",
		Short: "The CNI plugin (CNI_COMMAND=ADD|DEL|CHECK|VERSION, config on stdin)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cni.RunPlugin(os.Stdin, os.Stdout)
		},
	}
	cmd.AddCommand(agent, plugin)
	return cmd
}
