package cli

import (
	"github.com/spf13/cobra"
)

func newGet() *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:   "get KIND[,KIND…] [NAME…]",
		Short: "List labs, clusters, and a lab's objects as kubectl get does",
		Example: `  sudo svclab get labs
  sudo svclab get pods -A -o wide            # --lab may be left out while there is only one lab
  sudo svclab get svc nginx -o yaml          # a real v1 Service, as kubectl prints it
  sudo svclab get pods -o jsonpath='{.items[*].status.podIP}'
  sudo svclab get svc,po -o custom-columns=KIND:.kind,NAME:.metadata.name
  sudo svclab get clusters -o json
  sudo svclab get kubeconfig --name demo
  svclab get examples                        # the lab files, kind configs and workloads built in`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return getKinds(cmd, f, args)
		},
	}
	f.add(cmd, true)
	cmd.AddCommand(newGetLabs(), newGetKubeconfig(), newGetExamples())
	for _, r := range resources {
		cmd.AddCommand(newGetResource(r))
	}
	cmd.AddCommand(newGetLeftovers())
	return cmd
}
