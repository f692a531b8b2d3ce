package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/svclab/svclab/tools/cli/kubeprint"
)

// ownGroupVersion is the apiVersion of svclab's own kinds (Lab, Cluster,
// Leftover) in get -o json|yaml|name|jsonpath|custom-columns: objects of
// no API server, shaped as kubectl prints a custom resource, so that the
// same templates work on them.
var ownGroupVersion = schema.GroupVersion{Group: "svclab.dev", Version: "v1alpha1"}

// ownMeta is the metadata of svclab's own kinds: a name and, when known,
// when the thing was made.
type ownMeta struct {
	Name              string       `json:"name"`
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// ownObject is one object of svclab's own kinds: status is the kind's
// status struct (labStatus, clusterStatus, leftoverStatus).
type ownObject[S any] struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        ownMeta `json:"metadata"`
	Status          S       `json:"status"`
}

// DeepCopyObject is runtime.Object's copy; the printers only read.
func (o *ownObject[S]) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

// newOwnObject is an object of kind named name, made at created (zero:
// unknown).
func newOwnObject[S any](kind, name string, created time.Time, status S) *ownObject[S] {
	o := &ownObject[S]{Metadata: ownMeta{Name: name}, Status: status}
	o.SetGroupVersionKind(ownGroupVersion.WithKind(kind))
	if !created.IsZero() {
		t := metav1.NewTime(created.UTC().Truncate(time.Second))
		o.Metadata.CreationTimestamp = &t
	}
	return o
}

// labStatus is what `get labs` shows of a lab.
type labStatus struct {
	CNI   string   `json:"cni,omitempty"`
	Nodes []string `json:"nodes,omitempty"`
	// Pods is nil when the lab's objects cannot be read.
	Pods  *int   `json:"pods,omitempty"`
	Proxy string `json:"proxy,omitempty"`
	// State is running, what is wrong, or the interrupted command.
	State string `json:"state"`
}

// clusterStatus is what `get clusters` shows of a kind cluster.
type clusterStatus struct {
	Nodes            []string `json:"nodes"`
	CNI              string   `json:"cni,omitempty"`
	Proxy            string   `json:"proxy,omitempty"`
	ProxyMode        string   `json:"proxyMode,omitempty"`
	NodeImage        string   `json:"nodeImage,omitempty"`
	Kubeconfig       string   `json:"kubeconfig,omitempty"`
	LoadBalancerPool string   `json:"loadBalancerPool,omitempty"`
}

// leftoverStatus is what `get leftovers` shows of the host or a node.
type leftoverStatus struct {
	// ProxyMode is the node's running proxy mode ("" for the host).
	ProxyMode string `json:"proxyMode,omitempty"`
	// Scope is other-modes (what the running mode does not clean) or
	// all-modes (--all); host for what an interrupted svclab left.
	Scope string `json:"scope"`
	// Items are the leftovers, one line each (none: nothing left).
	Items []string `json:"items"`
}

// ownOutput is -o for svclab's own kinds: the table (and wide) is the
// command's own; the others are kubeprint's.
type ownOutput struct {
	output    string
	noHeaders bool
}

func (o *ownOutput) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE or custom-columns=HEADER:PATH,… (default: a table)")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print the table (or custom columns) without its header line")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(kubeprint.Outputs, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
}

// check refuses an -o that kubeprint does not take, before any work.
func (o ownOutput) check() error { return kubeprint.CheckOutput(o.output) }

// human reports whether the command prints its own table.
func (o ownOutput) human() bool { return kubeprint.IsHuman(o.output) }

// print writes objs as -o asks: one object itself when single (get KIND
// NAME), otherwise a v1 List as kubectl prints one.
func (o ownOutput) print(w io.Writer, objs []runtime.Object, single bool) error {
	return kubeprint.Print(w, objs, kubeprint.Options{Output: o.output, Single: single, NoHeaders: o.noHeaders, Now: time.Now()})
}

// pickNames keeps the names asked for (all when none), in the order
// asked, and returns `<plural> "x" not found` for the others, as kubectl.
func pickNames(all, asked []string, plural string) (picked []string, notFound error) {
	if len(asked) == 0 {
		return all, nil
	}
	var missing []string
	for _, n := range asked {
		if slices.Contains(all, n) {
			picked = append(picked, n)
		} else {
			missing = append(missing, fmt.Sprintf("%s %q not found", plural, n))
		}
	}
	if len(missing) > 0 {
		return picked, errors.New(strings.Join(missing, "; "))
	}
	return picked, nil
}

// printUnlessHuman prints objs as a List unless -o asks for the
// command's own text, which the command has written already.
func (o ownOutput) printUnlessHuman(w io.Writer, objs []runtime.Object) error {
	if o.human() {
		return nil
	}
	return o.print(w, objs, false)
}
