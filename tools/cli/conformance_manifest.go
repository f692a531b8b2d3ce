package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/ociimage"
	"github.com/svclab/svclab/scenarios/conformance/cmdline"
	"github.com/svclab/svclab/scenarios/kit/kube/access"
)

// The in-cluster run's names and paths.
const (
	// manifestName names the ServiceAccount and the Job.
	manifestName = "svclab-conformance"
	// defaultManifestNamespace is the namespace of the Job (and of the
	// service account `svclab conformance rbac` binds by default).
	defaultManifestNamespace = "svclab-conformance"
	// jobResultsDir is where the Job's JUnit report is written (an
	// emptyDir); the report is also printed at the end of its log.
	jobResultsDir = "/results"
	// sonobuoyResultsDir is where Sonobuoy's worker collects a plugin's
	// results ($SONOBUOY_RESULTS_DIR), and the done file it waits for.
	sonobuoyResultsDir = "/tmp/sonobuoy/results"
	// jobCleanupMargin is how much longer than the suite's --timeout the
	// Job may run: the suite's cleanup after a timeout (namespaces, the
	// node agent, a restored proxy ConfigMap).
	jobCleanupMargin = 15 * time.Minute
	// jobUser is the unprivileged user the Job's container runs as: the
	// suite only talks to the API server.
	jobUser = 65532
)

// manifestOptions are `svclab conformance manifest`'s flags: where the
// Job goes, and the flags of the run it makes.
type manifestOptions struct {
	namespace string
	sonobuoy  bool
	run       cmdline.Flags
}

// newConformanceManifest is `svclab conformance manifest`: the suite as
// a Job in the cluster it tests — Namespace, ServiceAccount, the RBAC of
// `svclab conformance rbac` bound to it, and the Job — or, with
// --sonobuoy, as a Sonobuoy plugin definition.
func newConformanceManifest() *cobra.Command {
	o := manifestOptions{run: cmdline.Flags{Timeout: cmdline.DefaultTimeout}}
	cmd := &cobra.Command{
		Use:   "manifest --image REGISTRY/REPO@sha256:DIGEST [--namespace NS] [--sonobuoy]",
		Short: "Print the suite as a Job in the cluster (Namespace, ServiceAccount, RBAC, Job), or as a Sonobuoy plugin",
		Long: "Prints YAML to apply: a Namespace, a ServiceAccount, the RBAC `svclab conformance rbac` prints bound to it, and a Job " +
			"whose pod runs `/svclab conformance --in-cluster` from svclab's image (`svclab image push` prints the digest-pinned reference): " +
			"the same image runs the node agent and the scenario pods. The JUnit report is written to " + jobResultsDir + "/junit.xml " +
			"(an emptyDir) and printed at the end of the Job's log (-o junit), so `kubectl logs job/" + manifestName + "` holds it. " +
			"The Job does not retry (backoffLimit 0) and runs as an unprivileged user with no capabilities: the suite only talks to the API server. " +
			"With --sonobuoy it prints a Sonobuoy plugin definition instead (`sonobuoy run --plugin FILE`): a Job plugin whose container " +
			"writes its JUnit report to " + sonobuoyResultsDir + " and then the done file Sonobuoy waits for; it runs with the service " +
			"account Sonobuoy gives its plugins. An --image that is not digest-pinned is refused unless --allow-tag.",
		Example: "  svclab conformance manifest --image registry.example.com/svclab@sha256:… | kubectl apply -f -\n" +
			"  kubectl -n " + defaultManifestNamespace + " wait --for=condition=complete job/" + manifestName + " --timeout=75m\n" +
			"  kubectl -n " + defaultManifestNamespace + " logs job/" + manifestName + " | sed -n '/^<?xml/,/<\\/testsuites>/p' > junit.xml\n" +
			"  svclab conformance manifest --sonobuoy --image registry.example.com/svclab@sha256:… > svclab-plugin.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			warning, err := o.check()
			if err != nil {
				return err
			}
			if warning != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+warning)
			}
			var out string
			if o.sonobuoy {
				out, err = o.sonobuoyPlugin()
			} else {
				out, err = o.jobManifest()
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.run.Image, "image", "", "svclab's image, digest-pinned (`svclab image push REGISTRY/REPO` prints it): the Job's, the node agent's and the scenario pods'")
	fl.StringVar(&o.namespace, "namespace", defaultManifestNamespace, "the namespace of the Job and its ServiceAccount")
	fl.BoolVar(&o.sonobuoy, "sonobuoy", false, "print a Sonobuoy plugin definition instead of the Job and its RBAC")
	fl.BoolVar(&o.run.AllowTag, "allow-tag", false, "allow an --image that is not digest-pinned (a warning)")
	fl.StringVar(&o.run.ServerImage, "server-image", "", "the scenario pods' server image (default: --image; upstream's registry.k8s.io/e2e-test-images/agnhost:2.53 works)")
	fl.StringVar(&o.run.NodeSelector, "node-selector", "", "run the node agent only on nodes with these labels (k=v,k2=v2)")
	fl.BoolVar(&o.run.TolerateAll, "tolerate-all", false, "let the node agent run on tainted nodes (control planes) too")
	fl.StringVar(&o.run.ProxyConfig, "proxy-config", "", "NAMESPACE/NAME of the proxy's ConfigMap (default "+access.DefaultProxyConfig+"); also the namespace of the Roles")
	fl.BoolVar(&o.run.Disruptive, "disruptive", false, "also run the Disruptive specs (the mode switch), with the Role they need")
	fl.StringVar(&o.run.LabelFilter, "label-filter", "", "ginkgo label filter of the run")
	fl.StringVar(&o.run.Focus, "focus", "", "run only the scenarios matching this regular expression")
	fl.DurationVar(&o.run.Timeout, "timeout", cmdline.DefaultTimeout, "bound of the whole run (the Job's activeDeadlineSeconds is this and "+jobCleanupMargin.String()+" for the cleanup)")
	return cmd
}

// check refuses what would make a Job that cannot run: no image, an
// image by tag without --allow-tag, a namespace that is no name.
func (o manifestOptions) check() (warning string, err error) {
	if o.run.Image == "" {
		return "", fmt.Errorf("--image: required: svclab's image, digest-pinned (`svclab image push REGISTRY/REPO` prints it)")
	}
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		return "", fmt.Errorf("--namespace %q: %s", o.namespace, strings.Join(errs, "; "))
	}
	if o.run.Timeout <= 0 {
		return "", fmt.Errorf("--timeout %s: want a positive duration", o.run.Timeout)
	}
	if _, _, err := access.ParseProxyConfig(o.run.ProxyConfig); err != nil {
		return "", fmt.Errorf("--proxy-config: %w", err)
	}
	if _, err := access.ParseNodeSelector(o.run.NodeSelector); err != nil {
		return "", fmt.Errorf("--node-selector: %w", err)
	}
	warning, err = cmdline.CheckImage(o.run.Image, o.run.AllowTag)
	if err != nil {
		return "", fmt.Errorf("--image: %w", err)
	}
	if o.run.ServerImage != "" && !strings.HasPrefix(o.run.ServerImage, "registry.k8s.io/e2e-test-images/agnhost:") {
		w, err := cmdline.CheckImage(o.run.ServerImage, o.run.AllowTag)
		if err != nil {
			return "", fmt.Errorf("--server-image: %w", err)
		}
		warning = strings.TrimSpace(warning + " " + w)
	}
	return warning, nil
}

// conformanceArgs are the arguments of `svclab conformance` in the
// cluster, writing its report to junit; extra come last.
func (o manifestOptions) conformanceArgs(junit string, extra ...string) []string {
	f := o.run
	args := []string{"conformance", "--in-cluster", "--image=" + f.Image, "--junit=" + junit}
	str := func(name, v string) {
		if v != "" {
			args = append(args, "--"+name+"="+v)
		}
	}
	boolean := func(name string, v bool) {
		if v {
			args = append(args, "--"+name)
		}
	}
	boolean("allow-tag", f.AllowTag)
	str("server-image", f.ServerImage)
	str("node-selector", f.NodeSelector)
	boolean("tolerate-all", f.TolerateAll)
	str("proxy-config", f.ProxyConfig)
	boolean("disruptive", f.Disruptive)
	str("label-filter", f.LabelFilter)
	str("focus", f.Focus)
	if f.Timeout != cmdline.DefaultTimeout {
		args = append(args, "--timeout="+f.Timeout.String())
	}
	return append(args, extra...)
}

// jobManifest is the Namespace, the ServiceAccount, the RBAC and the Job.
func (o manifestOptions) jobManifest() (string, error) {
	rbac, err := access.RBACManifest(access.RBACOptions{ProxyConfig: o.run.ProxyConfig, Disruptive: o.run.Disruptive, Subjects: o.subjects()})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# svclab's conformance suite as a Job: `svclab conformance manifest`.\n" +
		"# The Job's log ends with the JUnit report: kubectl -n " + o.namespace + " logs job/" + manifestName + " | sed -n '/^<?xml/,/<\\/testsuites>/p'\n")
	for _, obj := range []any{o.namespaceObject(), o.serviceAccount()} {
		if err := writeYAMLDocument(&b, obj); err != nil {
			return "", err
		}
	}
	b.WriteString("---\n" + rbac)
	if err := writeYAMLDocument(&b, o.job()); err != nil {
		return "", err
	}
	return b.String(), nil
}

// subjects are who the RBAC is bound to: the Job's service account.
func (o manifestOptions) subjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: o.namespace, Name: manifestName}}
}

// manifestLabels mark the Job's objects as part of the suite, but not as
// objects a run made: the sweep of killed runs (app.kubernetes.io/
// managed-by) leaves them alone.
func manifestLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/part-of": access.ManagedBy, "app.kubernetes.io/name": manifestName}
}

func (o manifestOptions) namespaceObject() *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: o.namespace, Labels: manifestLabels()},
	}
}

func (o manifestOptions) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: manifestName, Namespace: o.namespace, Labels: manifestLabels()},
	}
}

// job is the Job: one pod, never retried, bounded by the suite's timeout
// and its cleanup, running `svclab conformance --in-cluster` as an
// unprivileged user with a read-only root filesystem.
func (o manifestOptions) job() *batchv1.Job {
	noRetry := int32(0)
	deadline := int64((o.run.Timeout + jobCleanupMargin) / time.Second)
	container := o.container(o.conformanceArgs(jobResultsDir+"/junit.xml", "-o", outputJUnit))
	container.VolumeMounts = []corev1.VolumeMount{{Name: "results", MountPath: jobResultsDir}, {Name: "tmp", MountPath: "/tmp"}}
	user := int64(jobUser)
	nonRoot := true
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: manifestName, Namespace: o.namespace, Labels: manifestLabels()},
		Spec: batchv1.JobSpec{
			BackoffLimit:          &noRetry,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: manifestLabels()},
				Spec: corev1.PodSpec{
					ServiceAccountName: manifestName,
					RestartPolicy:      corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsUser: &user, RunAsGroup: &user, RunAsNonRoot: &nonRoot,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{container},
					Volumes: []corev1.Volume{
						{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}

// container is the suite's container with args: svclab's image, its
// entrypoint, no privilege, bounded resources.
func (o manifestOptions) container(args []string) corev1.Container {
	noEscalation, readOnly := false, true
	return corev1.Container{
		Name:            "conformance",
		Image:           o.run.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{ociimage.SvclabPath},
		Args:            args,
		Env:             []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: &noEscalation,
			ReadOnlyRootFilesystem:   &readOnly,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("100m"), corev1.ResourceMemory: apiresource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: apiresource.MustParse("1Gi")},
		},
	}
}

// sonobuoyConfig is the sonobuoy-config section of a plugin definition
// (Sonobuoy's pkg/plugin/manifest).
type sonobuoyConfig struct {
	Driver       string `json:"driver"`
	PluginName   string `json:"plugin-name"`
	ResultFormat string `json:"result-format"`
	Description  string `json:"description,omitempty"`
}

// sonobuoyPluginDefinition is a Sonobuoy plugin definition: its config
// and the container that runs.
type sonobuoyPluginDefinition struct {
	Config sonobuoyConfig   `json:"sonobuoy-config"`
	Spec   corev1.Container `json:"spec"`
}

// sonobuoyPlugin is the suite as a Sonobuoy Job plugin: the JUnit report
// into Sonobuoy's results directory, then its path into the done file
// there, Sonobuoy's plugin contract.
func (o manifestOptions) sonobuoyPlugin() (string, error) {
	args := o.conformanceArgs(sonobuoyResultsDir+"/junit.xml", "--done-file="+sonobuoyResultsDir+"/done")
	spec := o.container(args)
	spec.Name = "plugin"
	spec.SecurityContext.ReadOnlyRootFilesystem = nil // Sonobuoy mounts only its results directory
	spec.VolumeMounts = []corev1.VolumeMount{{Name: "results", MountPath: sonobuoyResultsDir}}
	def := sonobuoyPluginDefinition{
		Config: sonobuoyConfig{
			Driver: "Job", PluginName: manifestName, ResultFormat: "junit",
			Description: "svclab's Service conformance suite: behaviour specs for any Service proxy, kube-proxy's rules and conntrack entries where it is kube-proxy, and evidence on failure",
		},
		Spec: spec,
	}
	out, err := yaml.Marshal(def)
	if err != nil {
		return "", err
	}
	return "# svclab's conformance suite as a Sonobuoy plugin: sonobuoy run --plugin FILE\n" + string(out), nil
}

// writeYAMLDocument writes obj as one YAML document, after "---",
// without the empty spec and status an object without them marshals.
func writeYAMLDocument(b *strings.Builder, obj any) error {
	out, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	b.WriteString("---\n")
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line != "spec: {}\n" && line != "status: {}\n" {
			b.WriteString(line)
		}
	}
	return nil
}
