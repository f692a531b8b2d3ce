package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
)

// Resolve returns the kubeconfig file a command uses, by client-go's
// default loading rules (clientcmd.NewDefaultClientConfigLoadingRules),
// as kubectl finds its own: the --kubeconfig flag (explicit, must
// exist), else the files $KUBECONFIG lists (missing ones skipped), else
// ~/.kube/config. When $KUBECONFIG lists several existing files, clientcmd
// merges them; Resolve writes the merged config to a temporary file, since
// the conformance suite takes one file, and cleanup removes it. source
// says where the file came from, for messages.
func Resolve(flag string) (path, source string, cleanup func(), err error) {
	cleanup = func() {}
	if flag != "" {
		return flag, "--kubeconfig", cleanup, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		// clientcmd.RecommendedHomeFile is fixed when the package loads;
		// the home directory is read now, as it is where the command runs.
		rules.Precedence = []string{filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	var existing []string
	for _, f := range rules.GetLoadingPrecedence() {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		}
	}
	from := "~/.kube/config"
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		from = "$" + clientcmd.RecommendedConfigPathEnvVar
	}
	switch len(existing) {
	case 0:
		return "", "", cleanup, fmt.Errorf("no kubeconfig: --kubeconfig not given, and none of %s exists (%s)",
			strings.Join(rules.GetLoadingPrecedence(), ", "), from)
	case 1:
		return existing[0], from, cleanup, nil
	}
	merged, err := rules.Load()
	if err != nil {
		return "", "", cleanup, fmt.Errorf("kubeconfig %s: %w", strings.Join(existing, ":"), err)
	}
	f, err := os.CreateTemp("", "svclab-kubeconfig-")
	if err != nil {
		return "", "", cleanup, err
	}
	f.Close()
	cleanup = func() { os.Remove(f.Name()) }
	if err := clientcmd.WriteToFile(*merged, f.Name()); err != nil {
		cleanup()
		return "", "", func() {}, errors.Join(fmt.Errorf("kubeconfig: writing the merge of %s", strings.Join(existing, ":")), err)
	}
	return f.Name(), from + " (" + strings.Join(existing, ":") + ", merged)", cleanup, nil
}
