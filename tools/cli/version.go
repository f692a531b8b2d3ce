package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/buildinfo"
	"github.com/svclab/svclab/labs/kind"
)

// newVersion is `svclab version`: svclab's version and VCS revision, the
// Go that built it, the Kubernetes release svclab follows (its proxy, the
// upstream comparison and its kind node image: kind.DefaultKubernetes)
// and the version of the Kubernetes client libraries it was built with.
func newVersion() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print svclab's version, the Go that built it and the Kubernetes version its proxy and clusters follow",
		Example: "  svclab version\n" +
			"  svclab version -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout(), buildinfo.Read(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: text)")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
	return cmd
}

// versionOutput is what -o json|yaml print, shaped like kubectl version's
// (an object per component). KubernetesVersion is the release svclab's
// proxy and kind clusters follow; SvclabVersion.KubernetesAPI is only the
// version of the client libraries (k8s.io/api) it was built with.
type versionOutput struct {
	KubernetesVersion string         `json:"kubernetesVersion"`
	SvclabVersion     buildinfo.Info `json:"svclabVersion"`
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
		_, err := fmt.Fprintf(w, "svclab version: %s\nRevision: %s\nGo version: %s (%s)\nKubernetes: %s (svclab's proxy and kind clusters)\nClient libraries: k8s.io/api %s\n",
			info.Version, rev, info.GoVersion, info.Platform, kind.DefaultKubernetes, orUnknown(info.APIModule))
		return err
	case "json":
		data, err := json.MarshalIndent(versionOutput{kind.DefaultKubernetes, info}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(versionOutput{kind.DefaultKubernetes, info})
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
