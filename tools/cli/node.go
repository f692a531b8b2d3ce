package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/vishvananda/netlink"

	"github.com/svclab/svclab/labs/agents/conntrack"
)

// newNode is `svclab node`: what the conformance suite's node agent (a
// privileged hostNetwork, hostPID pod running svclab's image) runs on a
// node of a cluster it did not build, through `kubectl exec`.
func newNode() *cobra.Command {
	node := &cobra.Command{
		Use:    "node",
		Short:  "Look at the node this runs on (the conformance suite's node agent)",
		Hidden: true,
	}
	node.AddCommand(newNodeAgent(), newNodeConntrack(), newNodeRouteSource(), newNodeGet(), newNodeRun())
	return node
}

// newNodeAgent is `svclab node agent`: the agent pod's main process.
func newNodeAgent() *cobra.Command {
	return &cobra.Command{
		Use:   "agent",
		Short: "Wait until stopped (the node agent pod's main process)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
}

// newNodeConntrack is `svclab node conntrack`.
func newNodeConntrack() *cobra.Command {
	return &cobra.Command{
		Use:   "conntrack",
		Short: "Print this network namespace's conntrack entries as JSON (read over netlink)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flows, err := conntrack.DumpHere()
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(flows)
		},
	}
}

// newNodeRouteSource is `svclab node route-source IP`.
func newNodeRouteSource() *cobra.Command {
	return &cobra.Command{
		Use:   "route-source IP",
		Short: "Print the source address the kernel picks to reach IP (what MASQUERADE rewrites to)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dst, err := netip.ParseAddr(args[0])
			if err != nil {
				return fmt.Errorf("route-source: %w", err)
			}
			routes, err := netlink.RouteGet(dst.AsSlice())
			if err != nil {
				return fmt.Errorf("route to %s: %w", dst, err)
			}
			if len(routes) == 0 || routes[0].Src == nil {
				return fmt.Errorf("route to %s: no source address", dst)
			}
			fmt.Fprintln(cmd.OutOrStdout(), routes[0].Src)
			return nil
		},
	}
}

// newNodeGet is `svclab node get URL`.
func newNodeGet() *cobra.Command {
	return &cobra.Command{
		Use:   "get URL",
		Short: "HTTP GET a URL and print the body (e.g. http://127.0.0.1:10249/proxyMode)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s", args[0], resp.Status)
			}
			_, err = io.Copy(cmd.OutOrStdout(), resp.Body)
			return err
		},
	}
}

// newNodeRun is `svclab node run -- COMMAND [ARG…]`.
func newNodeRun() *cobra.Command {
	return &cobra.Command{
		Use:   "run -- COMMAND [ARG…]",
		Short: "Run a command of the node's own root filesystem (chroot into /proc/1/root; needs hostPID)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := syscall.Chroot("/proc/1/root"); err != nil {
				return fmt.Errorf("chroot into the node's root filesystem (/proc/1/root): %w", err)
			}
			if err := os.Chdir("/"); err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
			c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
			c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := c.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					return exitCode(ee.ExitCode())
				}
				return err
			}
			return nil
		},
	}
}
