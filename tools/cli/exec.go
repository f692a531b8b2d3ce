package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"
)

func newExec() *cobra.Command {
	var labName string
	cmd := &cobra.Command{
		Use:   "exec --lab NAME HOST -- CMD [ARGS…]",
		Short: "Run a command inside a node, pod, client or the router of a lab",
		Example: "  sudo svclab exec node1 -- iptables-save -t nat\n" +
			"  sudo svclab exec --lab single-node node1 -- curl -s localhost:10249/proxyMode\n" +
			"  sudo svclab exec client -- curl -s 10.96.0.11/hostname\n" +
			"  sudo svclab exec client -- curl -sg 'http://[fd00:10:96::b]/hostname'",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeHosts,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			c, err := l.Command(args[0], args[1:]...)
			if err != nil {
				return err
			}
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = c.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return exitCode(exit.ExitCode())
			}
			if err != nil {
				return fmt.Errorf("exec in %s: %w", args[0], err)
			}
			return nil
		},
	}
	addLabFlag(cmd, &labName)
	return cmd
}
