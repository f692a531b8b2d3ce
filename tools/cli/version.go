package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/buildinfo"
)

// newVersion is `svclab version`: svclab's version and VCS revision, the
// Go that built it and the Kubernetes API version it speaks, from the
// binary's build information.
func newVersion() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print svclab's version, the Go that built it and the Kubernetes API version it speaks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout(), buildinfo.Read(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: text)")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
	return cmd
}

// versionOutput is what -o json|yaml print, shaped like kubectl version's
// (an object per component).
type versionOutput struct {
	SvclabVersion buildinfo.Info `json:"svclabVersion"`
}

func writeVersion(w io.Writer, info buildinfo.Info, output string) error {
	switch output {
	case "":
		rev := info.Revision
		if rev == "" {
			rev = "unknown (built without VCS information)"
		} else if info.Modified {
			rev += " (modified)"
		}
		_, err := fmt.Fprintf(w, "svclab version: %s\nRevision: %s\nGo version: %s (%s)\nKubernetes API: %s (k8s.io/api %s)\n",
			info.Version, rev, info.GoVersion, info.Platform, orUnknown(info.KubernetesAPI), orUnknown(info.APIModule))
		return err
	case "json":
		data, err := json.MarshalIndent(versionOutput{info}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(versionOutput{info})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("--output %q: want json or yaml", output)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
