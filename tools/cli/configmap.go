package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/labs/netns"
)

// newEdit is `kubectl edit configmap`: the object in $EDITOR, applied when
// the editor exits, left alone when nothing changed.
func newEdit() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "edit",
		Short:   "Edit an object of a lab in $EDITOR, like kubectl edit",
		Example: "  sudo svclab edit configmap kube-proxy -n kube-system --lab single-node   # set mode: \"ipvs\"",
	}
	var labName, namespace string
	cm := &cobra.Command{
		Use:     "configmap NAME --lab NAME [-n NAMESPACE]",
		Short:   "Edit a ConfigMap (e.g. kube-proxy -n kube-system to switch the proxy mode)",
		Example: "  sudo svclab edit configmap kube-proxy -n kube-system --lab single-node   # set mode: \"nftables\"",
		Args:    cobra.ExactArgs(1),
		RunE: labChange(func(cmd *cobra.Command, args []string) error {
			data, l, err := configMapYAML(labName, namespace, args[0])
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "svclab-edit-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			file := filepath.Join(dir, args[0]+".yaml")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				return err
			}
			editor := os.Getenv("EDITOR")
			if editor == "" {
				editor = "vi"
			}
			ed := exec.Command("sh", "-c", editor+` "$1"`, "editor", file)
			ed.Stdin, ed.Stdout, ed.Stderr = os.Stdin, os.Stdout, os.Stderr
			if err := ed.Run(); err != nil {
				return fmt.Errorf("editor %q: %w", editor, err)
			}
			edited, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if bytes.Equal(edited, data) {
				fmt.Fprintf(cmd.OutOrStdout(), "Edit cancelled, no changes made.\n")
				return nil
			}
			if err := l.Apply(cmd.Context(), file, netns.Options{Out: cmd.OutOrStdout()}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "configmap/%s edited\n", args[0])
			return nil
		}),
	}
	addLabFlag(cm, &labName)
	addNamespaceFlag(cm, &namespace)
	cmd.AddCommand(cm)
	return cmd
}

func configMapYAML(labName, namespace, name string) ([]byte, *netns.Lab, error) {
	l, err := openLab(labName)
	if err != nil {
		return nil, nil, err
	}
	objs, _, err := l.Store.ReadObjects()
	if err != nil {
		return nil, nil, err
	}
	cm := objs.ConfigMap(namespace, name)
	if cm == nil {
		return nil, nil, fmt.Errorf("configmap %s/%s: not found in lab %s", namespace, name, l.Name())
	}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	data, err := yaml.Marshal(cm)
	return data, l, err
}
