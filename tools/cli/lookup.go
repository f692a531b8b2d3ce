package cli

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/svclab/svclab/labs/agents/dnslookup"
	"github.com/svclab/svclab/labs/agents/selfexec"
)

// newLookup is `svclab lookup`, internal: the conformance suite's DNS
// question, asked in a pod with the pod's resolver.
func newLookup() *cobra.Command {
	var cmdline selfexec.Lookup
	cmd := &cobra.Command{
		Use:    "lookup [--type A|AAAA|CNAME] NAME",
		Short:  "Ask this host's resolver for NAME's A, AAAA or CNAME records and print the answer as JSON",
		Long:   "Expands NAME with /etc/resolv.conf's search list and ndots, asks each candidate of the name servers in order (UDP, TCP when truncated) and prints the first answer that is not NXDOMAIN: the name that answered and the records of the asked type. Nothing is chased: an A query for an ExternalName Service's name answers no A record. The conformance suite runs it in its pods.",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			qtype := cmdline.Type
			if qtype == "" {
				qtype = "A"
			}
			answer, err := dnslookup.Lookup(cmd.Context(), args[0], qtype)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(answer)
		},
	}
	cmdline.AddFlags(cmd.Flags())
	return cmd
}
