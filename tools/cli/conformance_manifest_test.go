package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/svclab/svclab/internal/ociimage"
)

// pinned is a digest-pinned image reference.
var pinned = "registry.example.com/team/svclab@sha256:" + strings.Repeat("ab", 32)

func runConformanceManifest(args ...string) (stdout, stderr string, err error) {
	cmd := newConformance()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"manifest"}, args...))
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// decodeAll decodes every YAML document of a manifest with client-go's
// scheme; a document that does not decode fails the test.
func decodeAll(t *testing.T, manifest string) []runtime.Object {
	t.Helper()
	reader := yaml.NewYAMLReader(bufioReader(manifest))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("a document does not decode: %v\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// TestConformanceManifestObjects: the output decodes into a Namespace, a
// ServiceAccount, the RBAC bound to it and a Job in that namespace, run
// by that service account, from the image given, never retried, as an
// unprivileged user, its report in an emptyDir.
func TestConformanceManifestObjects(t *testing.T) {
	out, _, err := runConformanceManifest("--image", pinned, "--namespace", "ci-conformance")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var job *batchv1.Job
	for _, obj := range decodeAll(t, out) {
		switch o := obj.(type) {
		case *corev1.Namespace:
			kinds["Namespace"]++
			if o.Name != "ci-conformance" {
				t.Errorf("namespace %s", o.Name)
			}
		case *corev1.ServiceAccount:
			kinds["ServiceAccount"]++
			if o.Namespace != "ci-conformance" || o.Name != manifestName {
				t.Errorf("service account %s/%s", o.Namespace, o.Name)
			}
		case *rbacv1.ClusterRole:
			kinds["ClusterRole"]++
		case *rbacv1.Role:
			kinds["Role"]++
		case *rbacv1.ClusterRoleBinding:
			kinds["ClusterRoleBinding"]++
			checkSubjects(t, o.Name, o.Subjects)
		case *rbacv1.RoleBinding:
			kinds["RoleBinding"]++
			checkSubjects(t, o.Name, o.Subjects)
		case *batchv1.Job:
			kinds["Job"]++
			job = o
		default:
			t.Errorf("an object of kind %T", obj)
		}
	}
	for kind, n := range map[string]int{"Namespace": 1, "ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Job": 1} {
		if kinds[kind] != n {
			t.Errorf("%d %s, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	if job == nil {
		t.Fatal("no Job")
	}
	spec := job.Spec.Template.Spec
	c := spec.Containers[0]
	switch {
	case job.Namespace != "ci-conformance", spec.ServiceAccountName != manifestName:
		t.Errorf("Job %s/%s runs as %s", job.Namespace, job.Name, spec.ServiceAccountName)
	case job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0, spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Errorf("the Job retries: backoffLimit %v, restartPolicy %s", job.Spec.BackoffLimit, spec.RestartPolicy)
	case job.Spec.ActiveDeadlineSeconds == nil || *job.Spec.ActiveDeadlineSeconds != 75*60:
		t.Errorf("activeDeadlineSeconds %v, want the default timeout and the cleanup margin, 4500", job.Spec.ActiveDeadlineSeconds)
	case c.Image != pinned:
		t.Errorf("the Job's image %s", c.Image)
	case spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot:
		t.Errorf("the Job's pod may run as root")
	case c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation ||
		len(c.SecurityContext.Capabilities.Drop) != 1 || c.SecurityContext.Capabilities.Drop[0] != "ALL":
		t.Errorf("the Job's container keeps privileges: %+v", c.SecurityContext)
	case len(c.VolumeMounts) == 0 || c.VolumeMounts[0].MountPath != jobResultsDir || spec.Volumes[0].EmptyDir == nil:
		t.Errorf("the report's directory: mounts %+v, volumes %+v", c.VolumeMounts, spec.Volumes)
	}
}

func checkSubjects(t *testing.T, binding string, subjects []rbacv1.Subject) {
	t.Helper()
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ci-conformance", Name: manifestName}
	if len(subjects) != 1 || subjects[0] != want {
		t.Errorf("binding %s: subjects %+v, want the Job's service account", binding, subjects)
	}
}

// TestConformanceManifestRBACIsTheRBACCommands: the RBAC in the manifest
// is, to the byte, what `svclab conformance rbac` prints for the Job's
// service account, with the same --disruptive and --proxy-config.
func TestConformanceManifestRBACIsTheRBACCommands(t *testing.T) {
	for _, extra := range [][]string{nil, {"--disruptive", "--proxy-config", "kp-ns/kp-config"}} {
		manifest, _, err := runConformanceManifest(append([]string{"--image", pinned}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		rbac, err := runConformanceRBAC(append([]string{"--service-account", defaultManifestNamespace + "/" + manifestName}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(manifest, "---\n"+rbac+"---\n") {
			t.Errorf("with %v the manifest does not hold the rbac command's output:\n%s\nrbac:\n%s", extra, manifest, rbac)
		}
	}
}

// TestConformanceManifestJobArgsParse: the Job runs svclab's entrypoint
// with `conformance` and arguments that svclab's own conformance command
// parses: in-cluster, the image, the report in the results directory and
// printed at the end, and the run's flags as given.
func TestConformanceManifestJobArgsParse(t *testing.T) {
	out, _, err := runConformanceManifest("--image", pinned, "--disruptive", "--proxy-config", "kp-ns/kp-config", "--node-selector", "pool=conformance",
		"--tolerate-all", "--label-filter", "!mode-switch", "--focus", "split", "--timeout", "30m", "--server-image", "registry.k8s.io/e2e-test-images/agnhost:2.53")
	if err != nil {
		t.Fatal(err)
	}
	var job *batchv1.Job
	for _, obj := range decodeAll(t, out) {
		if j, ok := obj.(*batchv1.Job); ok {
			job = j
		}
	}
	if job == nil {
		t.Fatal("no Job")
	}
	c := job.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 1 || c.Command[0] != ociimage.SvclabPath || len(c.Args) == 0 || c.Args[0] != "conformance" {
		t.Fatalf("the Job runs %v %v, want %s conformance …", c.Command, c.Args, ociimage.SvclabPath)
	}
	checkConformanceArgs(t, c.Args[1:], map[string]string{
		"in-cluster": "true", "image": pinned, "junit": jobResultsDir + "/junit.xml", "output": outputJUnit,
		"disruptive": "true", "proxy-config": "kp-ns/kp-config", "node-selector": "pool=conformance", "tolerate-all": "true",
		"label-filter": "!mode-switch", "focus": "split", "timeout": "30m0s", "server-image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
	})
	if got := *job.Spec.ActiveDeadlineSeconds; got != 45*60 {
		t.Errorf("activeDeadlineSeconds %d, want --timeout and the cleanup margin, 2700", got)
	}
}

// checkConformanceArgs parses args with `svclab conformance`'s flags and
// checks the flags' values; nothing is left over.
func checkConformanceArgs(t *testing.T, args []string, want map[string]string) {
	t.Helper()
	cmd := newConformance()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("`svclab conformance` does not parse the arguments %q: %v", args, err)
	}
	if rest := cmd.Flags().Args(); len(rest) > 0 {
		t.Errorf("arguments left over: %q", rest)
	}
	for name, value := range want {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("no flag --%s", name)
			continue
		}
		if f.Value.String() != value {
			t.Errorf("--%s = %q, want %q", name, f.Value.String(), value)
		}
	}
}

// TestConformanceManifestSonobuoy: --sonobuoy prints a plugin definition
// Sonobuoy reads — a Job plugin named svclab-conformance with JUnit
// results — whose container writes its report into Sonobuoy's results
// directory and then the done file there.
func TestConformanceManifestSonobuoy(t *testing.T) {
	out, _, err := runConformanceManifest("--image", pinned, "--sonobuoy")
	if err != nil {
		t.Fatal(err)
	}
	var def sonobuoyPluginDefinition
	if err := sigsyaml.UnmarshalStrict([]byte(out), &def); err != nil {
		t.Fatalf("not a plugin definition: %v\n%s", err, out)
	}
	if def.Config != (sonobuoyConfig{Driver: "Job", PluginName: "svclab-conformance", ResultFormat: "junit", Description: def.Config.Description}) || def.Config.Description == "" {
		t.Errorf("sonobuoy-config %+v", def.Config)
	}
	spec := def.Spec
	if spec.Image != pinned || len(spec.VolumeMounts) != 1 || spec.VolumeMounts[0].MountPath != sonobuoyResultsDir || spec.VolumeMounts[0].Name != "results" {
		t.Errorf("the plugin's container: image %s, mounts %+v", spec.Image, spec.VolumeMounts)
	}
	if len(spec.Command) != 1 || spec.Command[0] != ociimage.SvclabPath || len(spec.Args) == 0 || spec.Args[0] != "conformance" {
		t.Fatalf("the plugin runs %v %v", spec.Command, spec.Args)
	}
	checkConformanceArgs(t, spec.Args[1:], map[string]string{
		"in-cluster": "true", "image": pinned, "junit": sonobuoyResultsDir + "/junit.xml", "done-file": sonobuoyResultsDir + "/done",
	})
}

// TestConformanceManifestRefuses: no image, an image by tag (unless
// --allow-tag, then a warning), a namespace that is no name.
func TestConformanceManifestRefuses(t *testing.T) {
	if _, _, err := runConformanceManifest(); err == nil || !strings.Contains(err.Error(), "--image: required") {
		t.Errorf("no --image: %v", err)
	}
	tag := "registry.example.com/team/svclab:v1"
	if _, _, err := runConformanceManifest("--image", tag); err == nil || !strings.Contains(err.Error(), "--allow-tag") || !strings.Contains(err.Error(), "svclab image push") {
		t.Errorf("--image by tag: %v, want the refusal naming `svclab image push` and --allow-tag", err)
	}
	out, stderr, err := runConformanceManifest("--image", tag, "--allow-tag")
	if err != nil || !strings.HasPrefix(stderr, "warning: ") || !strings.Contains(out, "--allow-tag") {
		t.Errorf("--image by tag with --allow-tag: %v, stderr %q; want a warning, and the run allowing the tag too", err, stderr)
	}
	if _, _, err := runConformanceManifest("--image", pinned, "--namespace", "Not_A_Name"); err == nil || !strings.Contains(err.Error(), "--namespace") {
		t.Errorf("a bad --namespace: %v", err)
	}
}
